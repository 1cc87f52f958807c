import Foundation
import GraphStore

/// A `Note` whose optional `text` the second release renamed to `body` without declaring a
/// model version: what the checks for stored fields the app's types would lose are tested with.
public enum RenamedFieldModel {
    /// The first release: `text`.
    public struct NoteV1: Entity, Equatable {
        public var id: Int
        public var text: String?
        public static var entityName: String { "Note" }

        public init(id: Int, text: String?) {
            self.id = id
            self.text = text
        }
    }

    /// The second release renamed `text` to `body`.
    public struct RenamedNote: Entity, Equatable {
        public var id: Int
        public var body: String?
        public static var entityName: String { "Note" }
    }

    /// A second release that reads the old name itself when `body` is missing, and writes `body`.
    public struct FallbackNote: Entity, Equatable {
        public var id: Int
        public var body: String?
        public static var entityName: String { "Note" }

        enum CodingKeys: String, CodingKey { case id, body, text }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            body = try container.decodeIfPresent(String.self, forKey: .body) ?? container.decodeIfPresent(String.self, forKey: .text)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encodeIfPresent(body, forKey: .body)
        }
    }
}
