import ExampleModel
import Foundation
import Testing

@testable import GraphStore

/// Decoding a journal's records in a batch (every upserted object of an entity from one array)
/// must give exactly the records, and the survey, that decoding each record's document on its
/// own gives; documents of another shape are left to the one-by-one decoding.
@Suite struct JournalBatchedDecodingTests {
    static let schema = Schema(exampleModel)

    /// The journal holding `documents` as records 1, 2, …, scanned.
    static func journal(_ documents: [String]) throws -> (data: Data, locations: [JournalFormatV1.RecordLocation]) {
        var bytes = JournalFormatV1.encodeHeader(.init(lineage: UUID(), baseVersion: 0))
        for (index, document) in documents.enumerated() {
            bytes += JournalFormatV1.frameRecord(version: UInt64(index + 1), document: Array(document.utf8))
        }
        let data = Data(bytes)
        let scan = try data.withUnsafeBytes { try JournalFormatV1.scan($0, path: "test.journal") }
        #expect(scan.records.count == documents.count)
        return (data, scan.records)
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = SnapshotCodec.makeJSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A comparable form of a record: per part its entity, clear, deleted ids and upserted
    /// objects (encoded with sorted keys). The parts' signatures differ (a batch gives each only
    /// to the last part holding it); what they are for, the survey, is compared on its own.
    static func shape(_ records: [JournalRecord]) throws -> [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try records.map { record in
            try record.parts.map { part in
                let upserts = try part.upserts.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
                return "v\(record.version) \(schema.entities[part.entity].name) clear=\(part.clear) delete=\(part.deletes) upsert=\(upserts)"
            }.joined(separator: " | ")
        }
    }

    static func oneByOne(_ journal: (data: Data, locations: [JournalFormatV1.RecordLocation])) throws -> [JournalRecord] {
        try journal.locations.map {
            try JournalRecord.decode(version: $0.version, document: journal.data[$0.document], schema: schema, path: "test.journal", offset: $0.start)
        }
    }

    @Test func batchedDecodingEqualsDecodingEachRecord() throws {
        let date = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
        let tags = [ExampleModel.Tag(name: "a"), ExampleModel.Tag(name: "b \"quoted\" \\ [x]"), ExampleModel.Tag(name: "c")]
        func post(_ id: Int64, body: String?) -> Post {
            Post(id: id, blogName: "blog {\(id)}", kind: .text, date: date, summary: "s\(id)", body: body, noteCount: Int(id), tagIDs: [tags[0].id])
        }
        let documents = [
            // Entities out of schema order, two objects in one array.
            "{\"Tag\":{\"upsert\":[\(try Self.json(tags[0])),\(try Self.json(tags[1]))]},\"Post\":{\"upsert\":[\(try Self.json(post(1, body: "x")))]}}",
            "{\"Post\":{\"delete\":[1],\"upsert\":[\(try Self.json(post(2, body: "y")))]}}",
            "{\"Tag\":{\"clear\":true,\"upsert\":[\(try Self.json(tags[2]))]}}",
            // Another set of stored field names (no body), then the first set again.
            "{\"Post\":{\"upsert\":[\(try Self.json(post(3, body: nil))),\(try Self.json(post(4, body: "z")))]}}",
            " { \"Note\" : { \"upsert\" : null , \"delete\" : [ ] , \"clear\" : false } } ",
            "{}",
            "{\"Post\":{\"delete\":[2, 3]}}",
        ]
        let journal = try Self.journal(documents)
        let batched = try #require(JournalRecord.decodeBatched(journal.locations, in: journal.data, schema: Self.schema, parallel: false))
        let expected = try Self.oneByOne(journal)
        #expect(try Self.shape(batched) == Self.shape(expected))
        // The survey, which only reads the signatures, is the same too.
        let survey = JournalSurvey(batched), expectedSurvey = JournalSurvey(expected)
        #expect(survey.signatures.mapValues { $0.mapValues { "\($0.version)@\($0.index)" } }
            == expectedSurvey.signatures.mapValues { $0.mapValues { "\($0.version)@\($0.index)" } })
        #expect(survey.signatures[0]?.count == 2, "two sets of Post field names")
        #expect(try JournalRecord.decode(journal.locations, in: journal.data, schema: Self.schema, path: "test.journal").count == documents.count)
    }

    @Test func otherShapesAreDecodedOneByOne() throws {
        let tag = try Self.json(ExampleModel.Tag(name: "a"))
        for odd in [
            "{\"T\\u0061g\":{\"upsert\":[\(tag)]}}",  // an escaped entity name
            "{\"Tag\":{\"upsert\":[\(tag)],\"note\":1}}",  // a member the journal does not write
            "{\"Tag\":{\"upsert\":[\(tag)],\"upsert\":[]}}",  // a member twice
        ] {
            let journal = try Self.journal(["{\"Tag\":{\"upsert\":[\(tag)]}}", odd])
            #expect(JournalRecord.decodeBatched(journal.locations, in: journal.data, schema: Self.schema, parallel: false) == nil, "\(odd)")
            let decoded = try JournalRecord.decode(journal.locations, in: journal.data, schema: Self.schema, path: "test.journal")
            #expect(try Self.shape(decoded) == Self.shape(Self.oneByOne(journal)), "\(odd)")
        }
    }

    @Test func aDamagedDocumentIsReportedAsWithoutBatching() throws {
        let tag = try Self.json(ExampleModel.Tag(name: "a"))
        // Not JSON inside an upserted object, and an entity the container does not register.
        for (bad, expected) in [("{\"Tag\":{\"upsert\":[{\"id\":]}}", "test.journal"), ("{\"Gone\":{\"upsert\":[\(tag)]}}", "Gone")] {
            let journal = try Self.journal(["{\"Tag\":{\"upsert\":[\(tag)]}}", bad])
            #expect(JournalRecord.decodeBatched(journal.locations, in: journal.data, schema: Self.schema, parallel: false) == nil)
            #expect {
                _ = try JournalRecord.decode(journal.locations, in: journal.data, schema: Self.schema, path: "test.journal")
            } throws: { error in
                "\(error)".contains(expected) && "\(error)".contains("store version 2")
            }
        }
    }
}
