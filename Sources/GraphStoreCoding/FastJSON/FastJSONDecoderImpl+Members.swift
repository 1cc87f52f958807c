import Foundation

/// Strings and the members of objects, by key.
extension FastJSONDecoderImpl {
    // MARK: Strings

    /// The string token at `value` (or a key), escapes resolved.
    @inline(__always)
    func string(at value: Int) -> String {
        let span = document.span(value)
        if tokens[value].tag & FastJSONFlag.escaped == 0 {
            return String(decoding: span, as: UTF8.self)
        }
        return FastJSONStrings.unescape(span)
    }

    // MARK: Object members

    /// The value token of the member named `name` in the object at `object`, or `nil`.
    ///
    /// Objects are read mostly in the order their keys were written, so the key after the
    /// last one found is tried first (a cursor kept in the object's token), then all keys.
    /// Only for objects whose keys are distinct ASCII without escapes (the parser checks);
    /// others go through a ``FastJSONKeyIndex``.
    @inline(__always)
    func member(of object: Int, named name: String) -> Int? {
        var name = name
        if let found = name.withUTF8({ member(of: object, utf8: $0) }) { return found }
        // An ASCII key can still equal a non-ASCII name as Swift compares strings (U+212A
        // KELVIN SIGN is "K").
        guard !name.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let end = tokens[object].end
        var key = object + 1
        while key < end {
            if string(at: key) == name { return key + 1 }
            key = document.skip(key + 1)
        }
        return nil
    }

    @inline(__always)
    func member(of object: Int, utf8 name: UnsafeBufferPointer<UInt8>) -> Int? {
        let objectToken = tokens[object]
        let end = objectToken.end
        let bytes = document.bytes
        let length = UInt64(name.count)
        @inline(__always) func matches(_ key: Int) -> Bool {
            let token = tokens[key]
            return token.payload == length && (length == 0 || memcmp(bytes + token.offset, name.baseAddress!, name.count) == 0)
        }
        @inline(__always) func found(_ key: Int) -> Int {
            let value = key + 1
            tokens[object].word = objectToken.word & ~FastJSONToken.offsetMask | UInt64(document.skip(value))
            return value
        }
        let cursor = objectToken.offset
        if cursor < end && matches(cursor) { return found(cursor) }
        var key = object + 1
        while key < end {
            if matches(key) { return found(key) }
            key = document.skip(key + 1)
        }
        return nil
    }
}

/// The members of an object whose keys cannot be matched byte for byte in order (escaped or
/// non-ASCII keys, duplicates, many keys): by key as Swift compares strings, the first
/// occurrence winning, as in `JSONDecoder`.
final class FastJSONKeyIndex {
    /// The distinct keys in document order.
    private(set) var keys: [String] = []
    private(set) var values: [String: Int] = [:]

    init(object: Int, in impl: FastJSONDecoderImpl) {
        let token = impl.tokens[object]
        keys.reserveCapacity(token.count)
        values.reserveCapacity(token.count)
        var key = object + 1
        while key < token.end {
            let name = impl.string(at: key)
            if values[name] == nil {
                values[name] = key + 1
                keys.append(name)
            }
            key = impl.document.skip(key + 1)
        }
    }
}
