import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// Recovery from a damaged snapshot does not take a model mismatch in the model's declarations
/// (a unique constraint, a relationship) for damage: a file that reads soundly, written by a
/// release of the app that did not declare them, is refused and left as it is, not rolled back
/// to the previous snapshot (which would drop that release's saves).
@Suite struct ConstraintMismatchRecoveryTests {
    /// The newer release: label names need not be unique, and a label's parent is a plain id.
    struct LabelV2: Entity, Equatable {
        var id: Int
        var name: String
        var parentID: Int?
        static var entityName: String { "Label" }
    }

    /// An older release with a unique name.
    struct UniqueLabel: Entity, Equatable {
        var id: Int
        var name: String
        var parentID: Int?
        static var entityName: String { "Label" }
        static var uniqueConstraints: [UniqueConstraint<UniqueLabel>] { [UniqueConstraint(\.name)] }
    }

    /// An older release whose `parentID` is a relationship.
    struct RelatedLabel: Entity, Equatable {
        var id: Int
        var name: String
        var parentID: Int?
        static var entityName: String { "Label" }
        static var relationships: [Relationship<RelatedLabel>] { [.toOne(\.parentID, RelatedLabel.self, deleteRule: .nullify)] }
    }

    struct EmptyName: Error {}

    /// An older release whose decoder refuses an empty name with an error of its own.
    struct ValidatingLabel: Entity, Equatable {
        var id: Int
        var name: String
        var parentID: Int?
        static var entityName: String { "Label" }
        enum CodingKeys: String, CodingKey { case id, name, parentID }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            name = try container.decode(String.self, forKey: .name)
            parentID = try container.decodeIfPresent(Int.self, forKey: .parentID)
            if name.isEmpty { throw EmptyName() }
        }
    }

    enum OlderRelease: CaseIterable, Sendable {
        case uniqueName, parentRelationship, validatingDecoder
    }

    @Test(arguments: OlderRelease.allCases, SnapshotFormat.allCases)
    func anOlderAppDeclaringMoreIsRefusedNotRolledBack(older: OlderRelease, format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("labels")
        let recovering = StoreConfiguration.file(url, format: format, options: SnapshotOptions(recoverFromPreviousSnapshot: true))

        // Two runs of the newer release: its last snapshot holds two labels named "swift" and
        // label 3, whose parent 99 does not exist, and label 4 with no name; the previous
        // snapshot holds only label 1.
        let newer = try GraphContainer(for: [LabelV2.self], store: recovering)
        newer.mainContext.insert(LabelV2(id: 1, name: "swift"))
        try newer.mainContext.save()
        try await newer.close()
        let again = try GraphContainer(for: [LabelV2.self], store: recovering)
        again.mainContext.insert(LabelV2(id: 2, name: "swift"))
        again.mainContext.insert(LabelV2(id: 3, name: "kotlin", parentID: 99))
        again.mainContext.insert(LabelV2(id: 4, name: ""))
        try again.mainContext.save()
        try await again.close()
        let written = try Data(contentsOf: url)

        // The older release opens the store asking for recovery: refused, naming the objects.
        #expect {
            switch older {
            case .uniqueName: _ = try GraphContainer(for: [UniqueLabel.self], store: recovering)
            case .parentRelationship: _ = try GraphContainer(for: [RelatedLabel.self], store: recovering)
            case .validatingDecoder: _ = try GraphContainer(for: [ValidatingLabel.self], store: recovering)
            }
        } throws: { error in
            guard case .damagedFile(let path, _, let reason) = error as? GraphStoreError, path == url.path else { return false }
            switch older {
            case .uniqueName: return reason.contains("do not fit the app's model") && reason.contains("swift")
            case .parentRelationship: return reason.contains("do not fit the app's model") && reason.contains("99")
            case .validatingDecoder: return reason.contains("init(from:) refused") && reason.contains("EmptyName")
            }
        }
        #expect(try Data(contentsOf: url) == written, "the file the newer release wrote was replaced")
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!entries.contains { $0.contains(".damaged-") }, "\(entries)")

        // The newer release finds every save.
        let newest = try GraphContainer(for: [LabelV2.self], store: .file(url))
        #expect(newest.count(of: LabelV2.self) == 4)
        try await newest.close()
    }
}
