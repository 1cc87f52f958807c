import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStoreCoding

/// A decoder reuses one keyed container's state for the next object only when nothing holds
/// it: a container a type keeps, or an enclosing object's container still being read, must
/// keep reading its own object.
@Suite struct FastJSONContainerReuseTests {
    enum Key: String, CodingKey { case id, name, inner, after }

    /// Keeps each object's container, and reads the previous object's kept container while
    /// decoding the next one: if the next object had taken over the kept state, the earlier
    /// container would read the later object's values.
    final class Keeper: @unchecked Sendable {  // Used by one decoding on one thread at a time (the test's).
        var kept: [KeyedDecodingContainer<Key>] = []
    }

    struct Kept: Decodable, Equatable {
        static let userInfoKey = CodingUserInfoKey(rawValue: "keeper")!
        var id: Int
        var name: String
        /// The previous object's name, read through its kept container while this one decodes.
        var previousName: String?

        init(id: Int, name: String, previousName: String?) {
            (self.id, self.name, self.previousName) = (id, name, previousName)
        }

        init(from decoder: any Decoder) throws {
            let keeper = decoder.userInfo[Self.userInfoKey] as! Keeper
            let container = try decoder.container(keyedBy: Key.self)
            id = try container.decode(Int.self, forKey: .id)
            name = try container.decode(String.self, forKey: .name)
            previousName = try keeper.kept.last?.decode(String.self, forKey: .name)
            keeper.kept.append(container)
        }
    }

    struct Inner: Decodable, Equatable {
        var id: Int
        var name: String
    }

    /// Reads a nested object between two reads of its own container.
    struct Outer: Decodable, Equatable {
        var id: Int
        var inner: Inner
        var after: String

        init(id: Int, inner: Inner, after: String) { (self.id, self.inner, self.after) = (id, inner, after) }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            id = try container.decode(Int.self, forKey: .id)
            inner = try container.decode(Inner.self, forKey: .inner)
            after = try container.decode(String.self, forKey: .after)
        }
    }

    @Test func aKeptContainerKeepsReadingItsOwnObject() throws {
        let count = 50
        let text = "[" + (0..<count).map { #"{"id":\#($0),"name":"n\#($0)"}"# }.joined(separator: ",") + "]"
        let keeper = Keeper()
        let decoded = try FastJSONDecoder.decode([Kept].self, from: Data(text.utf8), userInfo: [Kept.userInfoKey: keeper])
        let expected = (0..<count).map { Kept(id: $0, name: "n\($0)", previousName: $0 == 0 ? nil : "n\($0 - 1)") }
        #expect(decoded == expected)
        // Every kept container still reads its own object after the whole array was decoded.
        #expect(try keeper.kept.map { try $0.decode(Int.self, forKey: .id) } == Array(0..<count))
    }

    @Test func anEnclosingContainerKeepsReadingAfterANestedObject() throws {
        let count = 50
        let text = "[" + (0..<count).map { #"{"id":\#($0),"inner":{"id":\#($0 + 1000),"name":"i\#($0)"},"after":"a\#($0)"}"# }.joined(separator: ",") + "]"
        let decoded = try FastJSONDecoder.decode([Outer].self, from: Data(text.utf8))
        #expect(decoded == (0..<count).map { Outer(id: $0, inner: Inner(id: $0 + 1000, name: "i\($0)"), after: "a\($0)") })
    }

    @Test func anErrorAfterReuseStillNamesItsObject() throws {
        let text = #"[{"id":1,"name":"a"},{"id":2,"name":"b"},{"id":"three","name":"c"}]"#
        do {
            _ = try FastJSONDecoder.decode([Inner].self, from: Data(text.utf8))
            Issue.record("a string id decoded as Int")
        } catch let DecodingError.typeMismatch(_, context) {
            #expect(context.codingPath.map(\.stringValue) == ["Index 2", "id"])
        }
    }
}
