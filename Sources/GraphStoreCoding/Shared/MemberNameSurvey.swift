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
