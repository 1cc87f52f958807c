import Foundation
internal import GraphStoreCoding

/// Merges two versions of an object property by property, for ``MergePolicy/mergeByProperty``:
/// the top-level properties (`Codable` keys) the saving context changed relative to its base
/// take its values, the others keep the stored ones.
///
/// Runs only on a conflict, so it works on the objects' `Codable` form (``KeyedCodableForm``):
/// each side is encoded as a keyed JSON object, the keys are compared one by one, and the
/// merged object is decoded back. A nested value or an array is one property: it is taken
/// whole from one side.
enum PropertyMerger {
    /// `stored` with every top-level property in which `mine` differs from `base` taken from
    /// `mine` (a property `mine` no longer encodes, such as an optional set to `nil`, is removed).
    ///
    /// ```swift
    /// // base: (text "a", archived false); mine: (text "b", archived false);
    /// // stored: (text "a", archived true) → merged: (text "b", archived true)
    /// ```
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` when a side does not
    ///   encode as a keyed object or the merged properties do not decode.
    /// - Complexity: O(size of the three encoded objects).
    static func merge<E: Entity>(base: E, mine: E, stored: E) throws -> E {
        do {
            let baseForm = try KeyedCodableForm(base), mineForm = try KeyedCodableForm(mine)
            var merged = try KeyedCodableForm(stored)
            var seen = Set<[UInt8]>()
            for key in baseForm.keys + mineForm.keys where seen.insert(key).inserted && !KeyedCodableForm.isSame(baseForm, mineForm, key) {
                merged.set(key, from: mineForm)
            }
            return try merged.decode(E.self)
        } catch let error as GraphStoreError {
            throw error
        } catch {
            throw GraphStoreError.codingFailed(path: nil, entity: E.entityName, id: "\(mine.id)", reason: "merging its properties with the stored object failed: \(error)")
        }
    }
}

/// The `Codable` form in which an object's top-level properties are compared and rewritten
/// (``PropertyMerger``, ``IdentityRewriter``): the store's own JSON (``FastJSONEncoder``), which
/// reads back exactly what was saved (dates and doubles to the bit, a `URL` with its base),
/// taken apart into the JSON text of each top-level member.
struct KeyedCodableForm {
    /// Why an object has no keyed form.
    struct NotKeyed: Error, CustomStringConvertible {
        var description: String { "it does not encode as an object with keyed properties" }
    }

    /// One top-level member: its key as written (the JSON string, quotes included), the tape
    /// index of its value and the value's JSON text, in the document that holds them.
    private struct Member {
        let key: [UInt8]
        let value: Int
        let text: Range<Int>
        let document: FastJSONDocument
    }

    /// The members in the order encoded. A key written twice keeps its first value, as the
    /// readers do.
    private var members: [Member]

    /// The form of `object`.
    ///
    /// - Throws: ``NotKeyed`` for an object that encodes no keyed container; whatever encoding
    ///   it throws.
    /// - Complexity: O(size of the encoded object).
    init<E: Encodable>(_ object: E) throws {
        let document = try Self.parse(FastJSONEncoder.encode(object))
        guard document.tokenCount > 0, document.token(at: 0).kind == .object else { throw NotKeyed() }
        // The encoder writes no white space: a value runs from after its key's closing quote
        // and colon to before the comma and opening quote of the next key, or to the closing
        // brace.
        var keys: [Int] = []
        var index = 1
        while index < document.token(at: 0).end {
            keys.append(index)
            index = document.skip(index + 1)
        }
        members = []
        var seen = Set<[UInt8]>()
        for (position, index) in keys.enumerated() {
            let key = document.token(at: index)
            let start = key.offset + key.length + 2
            let end = position + 1 < keys.count ? document.token(at: keys[position + 1]).offset - 2 : document.byteCount - 1
            let written = Array(UnsafeBufferPointer(start: document.bytes + key.offset - 1, count: key.length + 2))
            if seen.insert(written).inserted { members.append(Member(key: written, value: index + 1, text: start..<end, document: document)) }
        }
    }

    private static func parse(_ data: Data) throws -> FastJSONDocument {
        try data.withUnsafeBytes { raw in
            let document = try FastJSONParser.parse(raw.bindMemory(to: UInt8.self))
            document.takeOwnershipOfBytes()
            return document
        }
    }

    /// The keys, as written, in order.
    var keys: [[UInt8]] { members.map(\.key) }

    private func member(_ key: [UInt8]) -> Member? { members.first { $0.key == key } }

    /// Whether `key`'s value is the same in `a` and `b` (absent from both counts as the same):
    /// compared as JSON values, so two dictionaries of the same entries written in different
    /// orders are the same.
    static func isSame(_ a: KeyedCodableForm, _ b: KeyedCodableForm, _ key: [UInt8]) -> Bool {
        let left = a.member(key), right = b.member(key)
        guard let left, let right else { return left == nil && right == nil }
        return isSame(left.document, left.value, right.document, right.value)
    }

    /// Whether the values at `a` in `first` and `b` in `second` are the same JSON value.
    private static func isSame(_ first: FastJSONDocument, _ a: Int, _ second: FastJSONDocument, _ b: Int) -> Bool {
        let left = first.token(at: a), right = second.token(at: b)
        guard left.kind == right.kind else { return false }
        switch left.kind {
        case .null, .false, .true:
            return true
        case .number, .string:
            return first.span(a).elementsEqual(second.span(b))
        case .array:
            guard left.count == right.count else { return false }
            var i = a + 1, j = b + 1
            while i < left.end {
                if !isSame(first, i, second, j) { return false }
                i = first.skip(i)
                j = second.skip(j)
            }
            return true
        case .object:
            guard left.count == right.count else { return false }
            var i = a + 1
            while i < left.end {
                let key = first.span(i)
                var j = b + 1
                while j < right.end, !second.span(j).elementsEqual(key) { j = second.skip(j + 1) }
                guard j < right.end, isSame(first, i + 1, second, j + 1) else { return false }
                i = first.skip(i + 1)
            }
            return true
        }
    }

    /// Gives `key` the value it has in `other`, or removes it when `other` has none.
    mutating func set(_ key: [UInt8], from other: KeyedCodableForm) {
        let replacement = other.member(key)
        if let position = members.firstIndex(where: { $0.key == key }) {
            if let replacement { members[position] = replacement } else { members.remove(at: position) }
        } else if let replacement {
            members.append(replacement)
        }
    }

    /// Gives the member `key` the JSON text of `value`, adding it if there is none.
    ///
    /// - Throws: whatever encoding `value` throws.
    mutating func set(_ key: String, to value: some Encodable) throws {
        let form = try KeyedCodableForm([key: value])
        guard let member = form.members.first else { throw NotKeyed() }
        if let position = members.firstIndex(where: { $0.key == member.key }) { members[position] = member } else { members.append(member) }
    }

    /// Whether there is a member `key`.
    func contains(_ key: String) -> Bool {
        guard let written = try? [UInt8](FastJSONEncoder.encode(key)) else { return false }
        return member(written) != nil
    }

    /// The object these members make.
    ///
    /// - Throws: `DecodingError` when they do not decode as `E`.
    /// - Complexity: O(size of the members).
    func decode<E: Decodable>(_ type: E.Type) throws -> E {
        var text: [UInt8] = [UInt8(ascii: "{")]
        for (position, member) in members.enumerated() {
            if position > 0 { text.append(UInt8(ascii: ",")) }
            text.append(contentsOf: member.key)
            text.append(UInt8(ascii: ":"))
            text.append(contentsOf: UnsafeBufferPointer(start: member.document.bytes + member.text.lowerBound, count: member.text.count))
        }
        text.append(UInt8(ascii: "}"))
        return try FastJSONDecoder.decode(E.self, from: Data(text))
    }
}
