import Foundation

/// An unkeyed container over one array of a ``FastJSONDocument``.
///
/// A class, so that it sits in an `any UnkeyedDecodingContainer` without a separate box and
/// can keep its elements' parent path once made.
final class FastJSONUnkeyedContainer: UnkeyedDecodingContainer {
    let impl: FastJSONDecoderImpl
    let count: Int?
    private let total: Int
    /// The token of the first element.
    private let firstElement: Int
    /// The token of the next element.
    @exclusivity(unchecked) private var cursor: Int
    @exclusivity(unchecked) private(set) var currentIndex = 0
    /// The array's coding path.
    private let path: CodingPath
    /// The array's path as one node, made when an element first needs its own path.
    @exclusivity(unchecked) private var elementParent: CodingPathNode??
    /// Elements from some index on, being decoded on another thread.
    @exclusivity(unchecked) private var speculation: ArraySpeculation?

    init(impl: FastJSONDecoderImpl, array: Int, count: Int, path: CodingPath) {
        self.impl = impl
        self.count = count
        total = count
        cursor = array + 1
        firstElement = array + 1
        self.path = path
    }

    var codingPath: [any CodingKey] { path.codingPath }

    var isAtEnd: Bool { currentIndex >= total }

    /// The array's path as one node.
    private var elementParentNode: CodingPathNode? {
        if let made = elementParent { return made }
        let parent = path.materialized
        elementParent = .some(parent)
        return parent
    }

    /// The coding path of the current element, for decoding it through `init(from:)`.
    private var elementPath: CodingPath {
        CodingPath(node: elementParentNode, first: .index(currentIndex))
    }

    // MARK: Speculation

    /// Before anything but taking a speculated result at or past the speculation's start:
    /// drops the speculation, so that the container decodes itself from here.
    @inline(__always) private func settle() {
        if let speculation, currentIndex >= speculation.start { dropSpeculation() }
    }

    private func dropSpeculation() {
        speculation?.cancel()
        speculation = nil
    }

    /// Has the second half of the array decoded as `T` on another thread, when the decoder
    /// allows it and the array is a large one of objects.
    private func speculate<T: Decodable>(_ type: T.Type) {
        guard impl.parallel, currentIndex == 0, total >= ArraySpeculation.minimumElements,
              impl.kind(cursor) == .object, !impl.isSpecial(T.self) else { return }
        let start = total / 2
        var token = cursor
        for _ in 0..<start { token = impl.document.skip(token) }
        let worker = FastJSONArrayWorker(impl: impl, firstToken: token, parent: elementParentNode)
        let speculation = ArraySpeculation.start(T.self, worker: worker, start: start, total: total)
        impl.speculations.append(speculation)
        self.speculation = speculation
    }

    @inline(__always) private var indexKey: IndexCodingKey { IndexCodingKey(currentIndex) }

    /// The current element's token; an error at the end.
    @inline(__always) private func next(_ type: Any.Type, atEnd message: String = "Unkeyed container is at end.") throws -> Int {
        guard currentIndex < total else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: path.codingPath(appending: indexKey), debugDescription: message))
        }
        return cursor
    }

    /// The current element's token, or `nil` at the end or for `null`.
    @inline(__always) private func nextNonNull() -> Int? {
        guard currentIndex < total, impl.tokens[cursor].tag != FastJSONKind.null.rawValue else { return nil }
        return cursor
    }

    @inline(__always) private func advance() {
        if currentIndex < total { cursor = impl.document.skip(cursor) }
        currentIndex += 1
    }

    func decodeNil() throws -> Bool {
        settle()
        let value = try next(Never.self)
        guard impl.kind(value) == .null else { return false }
        advance()
        return true
    }

    // MARK: Scalars

    @inline(__always) private func scalar<T>(_ type: T.Type, _ unwrap: (Int, IndexCodingKey) throws -> T) throws -> T {
        settle()
        let result = try unwrap(try next(type), indexKey)
        advance()
        return result
    }

    func decode(_ type: Bool.Type) throws -> Bool { try scalar(type) { try impl.unwrapBool($0, path: path, key: $1) } }
    func decode(_ type: String.Type) throws -> String { try scalar(type) { try impl.unwrapString($0, path: path, key: $1) } }
    func decode(_ type: Double.Type) throws -> Double { try scalar(type) { try impl.unwrapDouble($0, path: path, key: $1) } }
    func decode(_ type: Float.Type) throws -> Float { try scalar(type) { try impl.unwrapFloat($0, path: path, key: $1) } }
    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: Int128.Type) throws -> Int128 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try integer() }

    @inline(__always) private func integer<T: FixedWidthInteger>() throws -> T {
        try scalar(T.self) { try impl.unwrapInteger($0, as: T.self, path: path, key: $1) }
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let speculation {
            if currentIndex >= speculation.start {
                if ObjectIdentifier(T.self) == speculation.elementType && speculation.hasResult(at: currentIndex) {
                    let result = speculation.take(T.self)
                    advance()
                    return result
                }
                dropSpeculation()
            }
        } else if currentIndex == 0 && impl.parallel {
            speculate(T.self)
        }
        let result = try impl.unwrapValue(try next(type), as: T.self, path: path, key: indexKey, nestedPath: elementPath)
        advance()
        return result
    }

    // MARK: Optionals: null (or the end, as in JSONDecoder) is nil

    @inline(__always) private func scalarIfPresent<T>(_ unwrap: (Int, IndexCodingKey) throws -> T) throws -> T? {
        settle()
        let result = try nextNonNull().map { try unwrap($0, indexKey) }
        advance()
        return result
    }

    func decodeIfPresent(_ type: Bool.Type) throws -> Bool? { try scalarIfPresent { try impl.unwrapBool($0, path: path, key: $1) } }
    func decodeIfPresent(_ type: String.Type) throws -> String? { try scalarIfPresent { try impl.unwrapString($0, path: path, key: $1) } }
    func decodeIfPresent(_ type: Double.Type) throws -> Double? { try scalarIfPresent { try impl.unwrapDouble($0, path: path, key: $1) } }
    func decodeIfPresent(_ type: Float.Type) throws -> Float? { try scalarIfPresent { try impl.unwrapFloat($0, path: path, key: $1) } }
    func decodeIfPresent(_ type: Int.Type) throws -> Int? { try integerIfPresent() }
    func decodeIfPresent(_ type: Int8.Type) throws -> Int8? { try integerIfPresent() }
    func decodeIfPresent(_ type: Int16.Type) throws -> Int16? { try integerIfPresent() }
    func decodeIfPresent(_ type: Int32.Type) throws -> Int32? { try integerIfPresent() }
    func decodeIfPresent(_ type: Int64.Type) throws -> Int64? { try integerIfPresent() }
    func decodeIfPresent(_ type: Int128.Type) throws -> Int128? { try integerIfPresent() }
    func decodeIfPresent(_ type: UInt.Type) throws -> UInt? { try integerIfPresent() }
    func decodeIfPresent(_ type: UInt8.Type) throws -> UInt8? { try integerIfPresent() }
    func decodeIfPresent(_ type: UInt16.Type) throws -> UInt16? { try integerIfPresent() }
    func decodeIfPresent(_ type: UInt32.Type) throws -> UInt32? { try integerIfPresent() }
    func decodeIfPresent(_ type: UInt64.Type) throws -> UInt64? { try integerIfPresent() }
    func decodeIfPresent(_ type: UInt128.Type) throws -> UInt128? { try integerIfPresent() }

    @inline(__always) private func integerIfPresent<T: FixedWidthInteger>() throws -> T? {
        try scalarIfPresent { try impl.unwrapInteger($0, as: T.self, path: path, key: $1) }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        try scalarIfPresent { try impl.unwrapValue($0, as: T.self, path: path, key: $1, nestedPath: elementPath) }
    }

    // MARK: Nesting

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        settle()
        let value = try next(KeyedDecodingContainer<NestedKey>.self)
        let container = try impl.keyedContainer(keyedBy: type, at: value, path: elementPath)
        advance()
        return KeyedDecodingContainer(container)
    }

    func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        settle()
        let value = try next((any UnkeyedDecodingContainer).self)
        let container = try impl.unkeyedContainer(at: value, path: elementPath)
        advance()
        return container
    }

    func superDecoder() throws -> any Decoder {
        settle()
        let value = try next((any Decoder).self, atEnd: "Cannot get superDecoder() -- unkeyed container is at end.")
        let decoder = FastJSONDecoderImpl(
            document: impl.document, userInfo: impl.userInfo, floats: impl.floats, current: value, path: elementPath)
        advance()
        return decoder
    }
}

/// Walks a JSON array's elements token by token.
final class FastJSONArrayWorker: SpeculativeArrayWorker {
    private let impl: FastJSONDecoderImpl
    private var element: Int
    private let parent: CodingPathNode?

    /// A worker over its own decoder, starting at token `firstToken`.
    init(impl: FastJSONDecoderImpl, firstToken: Int, parent: CodingPathNode?) {
        self.impl = FastJSONDecoderImpl(document: impl.document, userInfo: impl.userInfo, floats: impl.floats, current: firstToken, path: .root)
        element = firstToken
        // Its own copy of the array's node: each element's path retains it, and a reference
        // count shared by both threads would bounce between their caches.
        self.parent = parent.map { CodingPathNode(parent: $0.parent, first: $0.first, second: $0.second) }
    }

    func decodeElement<T: Decodable>(_ type: T.Type, index: Int) -> T? {
        guard let value = try? impl.decodeNested(T.self, at: element, path: CodingPath(node: parent, first: .index(index))) else { return nil }
        element = impl.document.skip(element)
        return value
    }
}

extension FastJSONUnkeyedContainer: MemberNameSurvey {
    package func distinctMemberNames() -> [MemberNames] {
        var collector = MemberNameCollector()
        var element = firstElement
        // One object of each key layout met so far, the last met first: objects whose layouts
        // alternate (an optional field null in every other one) are matched without making
        // their names again.
        var layouts: [Int] = []
        for index in 0..<total {
            if impl.kind(element) == .object {
                if let known = layouts.firstIndex(where: { sameNonNullKeys(element, $0) }) {
                    if known != 0 { layouts.swapAt(0, known) }
                } else {
                    collector.add(nonNullNames(of: element), at: index)
                    if layouts.count == Self.rememberedLayouts { layouts.removeLast() }
                    layouts.insert(element, at: 0)
                }
            }
            element = impl.document.skip(element)
        }
        return collector.result
    }

    /// How many key layouts the survey compares an object with before making its names.
    private static var rememberedLayouts: Int { 8 }

    /// The names of the members of the object at `object` whose value is not null.
    private func nonNullNames(of object: Int) -> Set<String> {
        var names: Set<String> = []
        let end = impl.tokens[object].end
        var key = object + 1
        while key < end {
            if impl.kind(key + 1) != .null { names.insert(impl.string(at: key)) }
            key = impl.document.skip(key + 1)
        }
        return names
    }

    /// Whether the objects at `a` and `b` have byte-for-byte the same keys, in the same order,
    /// with non-null values. (Objects whose keys are equal only once unescaped, or in another
    /// order, compare unequal; their names are then made and compared as sets.)
    private func sameNonNullKeys(_ a: Int, _ b: Int) -> Bool {
        let tokens = impl.tokens, bytes = impl.document.bytes
        let endA = tokens[a].end, endB = tokens[b].end
        var keyA = a + 1, keyB = b + 1
        while true {
            while keyA < endA && impl.kind(keyA + 1) == .null { keyA = impl.document.skip(keyA + 1) }
            while keyB < endB && impl.kind(keyB + 1) == .null { keyB = impl.document.skip(keyB + 1) }
            guard keyA < endA, keyB < endB else { return keyA >= endA && keyB >= endB }
            let tokenA = tokens[keyA], tokenB = tokens[keyB]
            guard tokenA.payload == tokenB.payload,
                  tokenA.length == 0 || memcmp(bytes + tokenA.offset, bytes + tokenB.offset, tokenA.length) == 0 else { return false }
            keyA = impl.document.skip(keyA + 1)
            keyB = impl.document.skip(keyB + 1)
        }
    }
}

extension FastJSONUnkeyedContainer: MemberNameSignatureSurvey {
    package func distinctMemberNameSignatures() -> [(signature: MemberNameSignature, firstIndex: Int)] {
        var result: [(signature: MemberNameSignature, firstIndex: Int)] = []
        var element = firstElement
        var previous: Int?
        for index in 0..<total {
            if impl.kind(element) == .object, previous.map({ !sameNonNullKeys(element, $0) }) ?? true {
                let signature = signature(of: element)
                if !result.contains(where: { $0.signature == signature }) { result.append((signature, index)) }
                previous = element
            }
            element = impl.document.skip(element)
        }
        return result
    }

    /// The signature of the object at `object`: the names of its members whose value is not null.
    private func signature(of object: Int) -> MemberNameSignature {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        let end = impl.tokens[object].end
        var key = object + 1
        while key < end {
            if impl.kind(key + 1) != .null {
                if impl.tokens[key].tag & FastJSONFlag.escaped == 0 {
                    MemberNameSignature.append(impl.document.span(key), to: &bytes)
                } else {
                    var name = impl.string(at: key)
                    name.withUTF8 { MemberNameSignature.append($0, to: &bytes) }
                }
            }
            key = impl.document.skip(key + 1)
        }
        return MemberNameSignature(bytes: bytes)
    }
}
