/// The member names found in the objects of one array, for finding stored fields that a
/// `Decodable` type does not read (a renamed optional field reads as `nil`, and its values
/// would be lost when the objects are written back).
///
/// Each distinct set of names of members whose value is not null is reported once, with the
/// index of the first element that holds exactly that set. Elements that are not objects
/// are skipped.
package struct MemberNames: Sendable, Equatable {
    /// The names of the members whose value is not null.
    package var names: Set<String>
    /// The index in the array of the first element holding exactly these names.
    package var firstIndex: Int

    package init(names: Set<String>, firstIndex: Int) {
        self.names = names
        self.firstIndex = firstIndex
    }
}

/// An unkeyed decoding container of ``FastJSONDecoder`` or ``BPlistDecoder`` that can report
/// the member names of the objects in its array, without decoding them.
package protocol MemberNameSurvey {
    /// Each distinct set of non-null member names among the array's objects.
    ///
    /// - Complexity: O(members of the array's objects), comparing each object's keys with the
    ///   key layouts met before it (the last few distinct ones); names are made as strings only
    ///   for an object whose keys match none of them.
    func distinctMemberNames() -> [MemberNames]
}

/// Collects distinct name sets for ``MemberNameSurvey`` implementations, in the order first met.
struct MemberNameCollector {
    private var seen: Set<Set<String>> = []
    private(set) var result: [MemberNames] = []

    mutating func add(_ names: Set<String>, at index: Int) {
        guard seen.insert(names).inserted else { return }
        result.append(MemberNames(names: names, firstIndex: index))
    }
}

/// One object's non-null member names in their stored order, as one byte string: a cheaper
/// form of ``MemberNames`` when many small arrays are surveyed (a journal's records, one array
/// or a few objects each), compared and hashed without making a string per name.
package struct MemberNameSignature: Sendable, Hashable {
    /// Per name, in stored order: its UTF-8 length (4 bytes, little-endian), then its UTF-8.
    package let bytes: [UInt8]

    package init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Appends `name` (its UTF-8) to `bytes`, in the signature's layout.
    package static func append(_ name: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        let count = UInt32(truncatingIfNeeded: name.count)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: count >> UInt32(shift))) }
        bytes.append(contentsOf: name)
    }

    /// The names.
    ///
    /// - Complexity: O(size of the signature).
    package var names: Set<String> {
        var names: Set<String> = []
        var position = 0
        while position + 4 <= bytes.count {
            var count = 0
            for byte in 0..<4 { count |= Int(bytes[position + byte]) << (8 * byte) }
            position += 4
            let end = min(bytes.count, position + count)
            names.insert(String(decoding: bytes[position..<end], as: UTF8.self))
            position = end
        }
        return names
    }

    package static func == (a: Self, b: Self) -> Bool {
        a.bytes == b.bytes
    }

    package func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// An unkeyed decoding container of ``FastJSONDecoder`` that can report the member names of
/// the objects in its array as signatures, without decoding them.
package protocol MemberNameSignatureSurvey {
    /// Each distinct signature among the array's objects, with the index of the first element
    /// holding it.
    ///
    /// - Complexity: O(members of the array's objects), comparing each object's keys with the
    ///   previous object's; a signature is made only for an object whose keys differ.
    func distinctMemberNameSignatures() -> [(signature: MemberNameSignature, firstIndex: Int)]
}
