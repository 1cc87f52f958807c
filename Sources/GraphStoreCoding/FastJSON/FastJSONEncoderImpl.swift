import Foundation

/// The encoder and its single-value container. One instance serves a whole encoding: encoding
/// a nested value moves it to that value's slot and path and back, as the decoder does.
///
/// JSON is written as values arrive. A frame stack (``FastJSONFrames``) tracks the open
/// objects and arrays and the value slots not yet written; writing through an outer
/// container first closes the frames inside it.
final class FastJSONEncoderImpl: Encoder, SingleValueEncodingContainer, MovingCoder {
    @exclusivity(unchecked) var out: FastJSONOutput
    @exclusivity(unchecked) var frames = FastJSONFrames()
    /// The value slot this encoder stands for now.
    @exclusivity(unchecked) var current = FastJSONFrameID.closed
    /// Its coding path.
    @exclusivity(unchecked) var path: CodingPath
    let sendableUserInfo: [CodingUserInfoKey: any Sendable]
    let floats: FastJSONDecoder.NonConformingFloatStrings
    /// The first misuse met where no error can be thrown (making a container); thrown when
    /// the encoding ends.
    var deferredError: EncodingError? {
        didSet { hasDeferredError = deferredError != nil }
    }
    private var hasDeferredError = false
    /// The first container that would have nested deeper than ``maximumDepth``: thrown by
    /// every later use of the encoder and when the encoding ends, whatever the value's
    /// `encode(to:)` makes of the errors it is given.
    private(set) var depthError: EncodingError?

    /// The deepest nesting of arrays and objects written, counted from the document's root:
    /// what ``FastJSONParser`` reads, and the journal and snapshot readers with it. A value
    /// nested deeper could be written but never read back.
    static let maximumDepth = FastJSONParser.defaultMaxDepth

    init(output: FastJSONOutput, userInfo: [CodingUserInfoKey: any Sendable], floats: FastJSONDecoder.NonConformingFloatStrings, path: CodingPath) {
        out = output
        sendableUserInfo = userInfo
        self.floats = floats
        self.path = path
    }

    deinit { frames.deallocate() }

    var codingPath: [any CodingKey] { path.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { sendableUserInfo }

    // MARK: - Top level

    /// Writes `value` as a whole document (or fragment).
    ///
    /// - Throws: `EncodingError.invalidValue` when `value` encodes nothing, or for a misuse
    ///   of containers this encoder cannot write in order; whatever `value` throws.
    func encodeRoot<T: Encodable>(_ value: T) throws {
        current = frames.push(.pending)
        do {
            if try writeSpecial(value, path: path, key: NoCodingKey()) {
                frames[0].kind = .done
            } else {
                try value.encode(to: self)
            }
        } catch {
            throw depthError ?? error
        }
        closeFrames(from: 1)
        if let depthError { throw depthError }
        if hasDeferredError, let deferredError { throw deferredError }
        guard frames[0].kind != .pending else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: path.codingPath, debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        closeFrames(from: 0)
    }

    /// Lets `body` write elements of an array at ``path`` whose first `startIndex` elements
    /// are written elsewhere; writes neither bracket.
    ///
    /// - Throws: Whatever `body` throws; a misuse of containers met where no error could be
    ///   thrown.
    func encodeElements(startIndex: Int, _ body: (inout FastJSONUnkeyedEncodingContainer) throws -> Void) throws {
        let array = admitsContainer(at: path) ? frames.push(.array) : .closed
        if array != .closed { frames[array.level].count = startIndex }
        var container = FastJSONUnkeyedEncodingContainer(impl: self, frame: array, path: path)
        do {
            try body(&container)
        } catch {
            throw depthError ?? error
        }
        closeFrames(from: array.level + 1)
        if let depthError { throw depthError }
        if hasDeferredError, let deferredError { throw deferredError }
        frames.discard(from: array.level)
    }

    // MARK: - Frames

    /// Makes `id` the innermost frame, closing the frames inside it; `false` when it is closed.
    @inline(__always)
    func activate(_ id: FastJSONFrameID) -> Bool {
        if _fastPath(frames.isInnermost(id)) { return true }
        guard frames.isOpen(id) else { return false }
        closeFrames(from: id.level + 1)
        return true
    }

    /// Closes the frames at `level` and inside it, innermost first.
    func closeFrames(from level: Int) {
        while frames.depth > level {
            switch frames.pop().kind {
            case .pending: out.append(UInt8(ascii: "{"), UInt8(ascii: "}"))
            case .object: out.append(UInt8(ascii: "}"))
            case .array: out.append(UInt8(ascii: "]"))
            case .done: break
            }
        }
    }

    /// Undoes a member or element whose value threw: its separator, key and partial value go,
    /// so the container goes on as if it had never been asked (as with `JSONEncoder`).
    func rollBack(to mark: Int, in container: FastJSONFrameID) {
        out.count = mark
        frames.discard(from: container.level + 1)
        if frames.isOpen(container) { frames[container.level].count -= 1 }
    }

    /// The error for a container used after a value outside it was written; after a
    /// container nested too deep (whose use is refused the same way), that container's error.
    func outOfOrder(_ value: Any, at codingPath: [any CodingKey]) -> EncodingError {
        if let depthError { return depthError }
        return EncodingError.invalidValue(value, EncodingError.Context(
            codingPath: codingPath,
            debugDescription: "A container was used after a value outside it was written; FastJSONEncoder writes values in the order they are encoded, containers nested."))
    }

    /// Whether an array or object may be opened at `containerPath` (from the document's root):
    /// nested at most ``maximumDepth`` deep. When it may not, the error is kept (the first one
    /// only) and the caller writes nothing: it hands out a closed container, whose use throws.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    func admitsContainer(at containerPath: CodingPath) -> Bool {
        guard let error = containerPath.nestingError(maximumDepth: Self.maximumDepth, containers: "objects") else { return true }
        if depthError == nil { depthError = error }
        return false
    }

    // MARK: - Members and elements

    /// Writes the separator, `key` and `:` for a member of the object `id`; returns the
    /// output's length before them, for ``rollBack(to:in:)``.
    @inline(__always)
    func beginMember<Key: CodingKey>(_ id: FastJSONFrameID, key: Key, path: CodingPath, value: @autoclosure () -> Any) throws -> Int {
        guard activate(id) else { throw outOfOrder(value(), at: path.codingPath(appending: key)) }
        let mark = out.count
        if frames[id.level].count > 0 { out.append(UInt8(ascii: ",")) }
        frames[id.level].count &+= 1
        out.appendString(key.stringValue)
        out.append(UInt8(ascii: ":"))
        return mark
    }

    /// Writes the separator for an element of the array `id`; returns the output's length
    /// before it and the element's index.
    @inline(__always)
    func beginElement(_ id: FastJSONFrameID, path: CodingPath, value: @autoclosure () -> Any) throws -> (mark: Int, index: Int) {
        guard activate(id) else { throw outOfOrder(value(), at: path.codingPath) }
        let mark = out.count
        let index = frames[id.level].count
        if index > 0 { out.append(UInt8(ascii: ",")) }
        frames[id.level].count = index &+ 1
        return (mark, index)
    }

    /// Encodes `value`, whose key or separator is written, through its `encode(to:)` in a
    /// new slot at `nestedPath`; closes what it opened, or writes `{}` if it wrote nothing.
    func encodeNested<T: Encodable>(_ value: T, path nestedPath: CodingPath) throws {
        let nested = frames.push(.pending)
        try moved(to: nested, path: nestedPath) { try value.encode(to: self) }
        closeFrames(from: nested.level)
    }

    // MARK: - Containers of a slot

    func keyedContainer<Key: CodingKey>(at id: FastJSONFrameID, path: CodingPath) -> KeyedEncodingContainer<Key> {
        guard activate(id) else {
            if deferredError == nil { deferredError = outOfOrder([String: Any](), at: path.codingPath) }
            return KeyedEncodingContainer(FastJSONKeyedEncodingContainer<Key>(impl: self, frame: .closed, path: path))
        }
        switch frames[id.level].kind {
        case .pending:
            guard admitsContainer(at: path) else {
                return KeyedEncodingContainer(FastJSONKeyedEncodingContainer<Key>(impl: self, frame: .closed, path: path))
            }
            out.append(UInt8(ascii: "{"))
            frames[id.level].kind = .object
        case .object:
            break  // a second keyed container of the same value writes into the same object
        case .array, .done:
            preconditionFailure("Attempt to push new keyed encoding container when already previously encoded at this path.")
        }
        return KeyedEncodingContainer(FastJSONKeyedEncodingContainer<Key>(impl: self, frame: id, path: path))
    }

    func unkeyedContainer(at id: FastJSONFrameID, path: CodingPath) -> FastJSONUnkeyedEncodingContainer {
        guard activate(id) else {
            if deferredError == nil { deferredError = outOfOrder([Any](), at: path.codingPath) }
            return FastJSONUnkeyedEncodingContainer(impl: self, frame: .closed, path: path)
        }
        switch frames[id.level].kind {
        case .pending:
            guard admitsContainer(at: path) else { return FastJSONUnkeyedEncodingContainer(impl: self, frame: .closed, path: path) }
            out.append(UInt8(ascii: "["))
            frames[id.level].kind = .array
        case .array:
            break
        case .object, .done:
            preconditionFailure("Attempt to push new unkeyed encoding container when already previously encoded at this path.")
        }
        return FastJSONUnkeyedEncodingContainer(impl: self, frame: id, path: path)
    }

    /// Readies the slot `id` for a single value; `false` when the slot is closed.
    @inline(__always)
    func beginSingle(_ id: FastJSONFrameID) -> Bool {
        guard activate(id) else { return false }
        precondition(frames[id.level].kind == .pending, "Attempt to encode value through single value container when previously value already encoded.")
        frames[id.level].kind = .done
        return true
    }

    /// A single value of any type into the slot `id` at `slotPath`.
    func encodeSingle<T: Encodable>(_ value: T, at id: FastJSONFrameID, path slotPath: CodingPath) throws {
        guard activate(id) else { throw outOfOrder(value, at: slotPath.codingPath) }
        precondition(frames[id.level].kind == .pending, "Attempt to encode value through single value container when previously value already encoded.")
        if try writeSpecial(value, path: slotPath, key: NoCodingKey()) {
            frames[id.level].kind = .done
            return
        }
        // The value's own encoder is this slot, at the same path (as in `JSONEncoder`).
        try moved(to: id, path: slotPath) { try value.encode(to: self) }
        if frames.isOpen(id) && frames[id.level].kind == .pending {
            out.append(UInt8(ascii: "{"), UInt8(ascii: "}"))
            frames[id.level].kind = .done
        }
    }

    // MARK: - Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        keyedContainer(at: current, path: path)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        unkeyedContainer(at: current, path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        self
    }
}
