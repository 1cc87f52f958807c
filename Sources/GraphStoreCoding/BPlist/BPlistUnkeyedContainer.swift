/// An unkeyed container over one array of a ``BPlistDocument``.
final class BPlistUnkeyedContainer: UnkeyedDecodingContainer {
    let impl: BPlistDecoderImpl
    private let object: BPlistObject
    private let path: CodingPath
    let count: Int?
    private(set) var currentIndex = 0
    private var speculation: ArraySpeculation?

    init(impl: BPlistDecoderImpl, object: BPlistObject, path: CodingPath) {
        self.impl = impl
        self.object = object
        self.path = path
        count = object.count
    }

    var codingPath: [any CodingKey] { path.codingPath }
    var isAtEnd: Bool { currentIndex >= object.count }

    private var indexKey: IndexCodingKey { IndexCodingKey(currentIndex) }

    /// The current element's reference; an error at the end.
    private func next(_ type: Any.Type) throws -> Int {
        guard currentIndex < object.count else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: path.codingPath(appending: indexKey), debugDescription: "Unkeyed container is at end."))
        }
        return impl.document.reference(at: object.payload, index: currentIndex)
    }

    /// Before anything but taking a speculated result: past the speculation's start, drops it.
    private func settle() {
        if let speculation, currentIndex >= speculation.start {
            speculation.cancel()
            self.speculation = nil
        }
    }

    func decodeNil() throws -> Bool {
        settle()
        let element = try impl.object(try next(Never.self), path: path, key: indexKey)
        guard impl.document.isNull(element) else { return false }
        currentIndex += 1
        return true
    }

    private func element<T>(_ type: T.Type, _ read: (BPlistObject) throws -> T) throws -> T {
        settle()
        let result = try read(try impl.object(try next(type), path: path, key: indexKey))
        currentIndex += 1
        return result
    }

    func decode(_ type: Bool.Type) throws -> Bool { try element(type) { try impl.bool($0, path: path, key: indexKey) } }
    func decode(_ type: String.Type) throws -> String { try element(type) { try impl.string($0, path: path, key: indexKey) } }
    func decode(_ type: Double.Type) throws -> Double { try element(type) { try impl.double($0, path: path, key: indexKey) } }
    func decode(_ type: Float.Type) throws -> Float { try element(type) { try impl.float($0, path: path, key: indexKey) } }
    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }
    func decode(_ type: Int128.Type) throws -> Int128 { try integer() }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try integer() }

    private func integer<T: FixedWidthInteger>() throws -> T {
        try element(T.self) { try impl.integer($0, as: T.self, path: path, key: indexKey) }
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let speculation, currentIndex >= speculation.start {
            if ObjectIdentifier(T.self) == speculation.elementType && speculation.hasResult(at: currentIndex) {
                let result = speculation.take(T.self)
                currentIndex += 1
                return result
            }
            settle()
        } else if speculation == nil && currentIndex == 0 {
            speculate(T.self)
        }
        let result = try impl.decodeValue(T.self, at: try next(type), path: path, key: indexKey)
        currentIndex += 1
        return result
    }

    /// Has the second half of a large array of dictionaries decoded as `T` on another thread.
    private func speculate<T: Decodable>(_ type: T.Type) {
        guard impl.parallel, object.count >= ArraySpeculation.minimumElements,
              (try? impl.document.object(impl.document.reference(at: object.payload, index: 0)))?.kind == .dictionary else { return }
        let worker = BPlistArrayWorker(impl: impl, array: object, path: path)
        let speculation = ArraySpeculation.start(T.self, worker: worker, start: object.count / 2, total: object.count)
        impl.speculations.append(speculation)
        self.speculation = speculation
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        settle()
        let container = try impl.keyedContainer(keyedBy: type, at: try next(KeyedDecodingContainer<NestedKey>.self), path: path.appending(.index(currentIndex)))
        currentIndex += 1
        return KeyedDecodingContainer(container)
    }

    func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        settle()
        let container = try impl.unkeyedContainer(at: try next((any UnkeyedDecodingContainer).self), path: path.appending(.index(currentIndex)))
        currentIndex += 1
        return container
    }

    func superDecoder() throws -> any Decoder {
        settle()
        let reference = try next((any Decoder).self)
        let decoder = BPlistDecoderImpl(
            document: impl.document, userInfo: impl.userInfo, current: reference, path: path.appending(.index(currentIndex)), expansion: impl.expansion)
        currentIndex += 1
        return decoder
    }
}

/// Decodes elements of one array on a decoder of its own, for a speculation.
final class BPlistArrayWorker: SpeculativeArrayWorker {
    private let impl: BPlistDecoderImpl
    private let array: BPlistObject
    private let path: CodingPath

    init(impl: BPlistDecoderImpl, array: BPlistObject, path: CodingPath) {
        // A count of its own (one per thread) into the same total.
        self.impl = BPlistDecoderImpl(
            document: impl.document, userInfo: impl.userInfo, current: impl.current, path: .root,
            expansion: BPlistSpending(impl.expansion.expansion))
        self.impl.recyclesDictionaries = true
        self.array = array
        // Its own node, so the two threads do not share one reference count.
        self.path = CodingPath(node: path.materialized.map { CodingPathNode(parent: $0.parent, first: $0.first, second: $0.second) })
    }

    deinit { impl.endRecycling() }

    func decodeElement<T: Decodable>(_ type: T.Type, index: Int) -> T? {
        try? impl.decodeValue(T.self, at: impl.document.reference(at: array.payload, index: index), path: path, key: IndexCodingKey(index))
    }
}

extension BPlistUnkeyedContainer: MemberNameSurvey {
    package func distinctMemberNames() -> [MemberNames] {
        let document = impl.document
        var collector = MemberNameCollector()
        // The key references of each layout met so far, the last met first: objects whose
        // layouts alternate (an optional field null in every other one) are matched without
        // making their names again.
        var layouts: [[Int]] = []
        var keys: [Int] = []
        for index in 0..<object.count {
            guard let element = try? document.object(document.reference(at: object.payload, index: index)),
                  element.kind == .dictionary else { continue }
            // The references of the keys with non-null values: a writer that uniques its
            // strings (ours, Foundation's) gives equal names equal references.
            keys.removeAll(keepingCapacity: true)
            for member in 0..<element.count {
                guard let value = try? document.object(document.reference(at: element.payload, index: element.count + member)),
                      !document.isNull(value) else { continue }
                keys.append(document.reference(at: element.payload, index: member))
            }
            if let known = layouts.firstIndex(of: keys) {
                if known != 0 { layouts.swapAt(0, known) }
                continue
            }
            var names: Set<String> = []
            for reference in keys {
                // Counted as read: past the limit the survey stops, and the decoding it belongs
                // to is refused for the limit (``BPlistExpansion/isExhausted``).
                guard let key = try? document.object(reference) else { continue }
                guard impl.expansion.spend(key) else { return collector.result }
                if let name = try? document.string(key) { names.insert(name) }
            }
            collector.add(names, at: index)
            if layouts.count == 8 { layouts.removeLast() }
            layouts.insert(keys, at: 0)
        }
        return collector.result
    }
}
