import Foundation
import GraphStoreTestSupport
import Testing

@testable import GraphStore

/// The unkept-field check reads a property list's URLs and decimals as the app's types do:
/// an entity holding one is checked like any other, so a field renamed beside it is refused
/// rather than dropped at the next save.
@Suite struct UnkeptFieldShapeTests {
    struct LinkV1: Entity, Equatable {
        var id: Int
        var site: URL
        var price: Decimal
        var title: String?
        static var entityName: String { "Link" }
    }

    /// `title` renamed to `caption`, without a new model version.
    struct LinkV2: Entity, Equatable {
        var id: Int
        var site: URL
        var price: Decimal
        var caption: String?
        static var entityName: String { "Link" }
    }

    @Test(arguments: [SnapshotFormat.json, .binaryPropertyList])
    func aFieldRenamedBesideAURLAndADecimalIsRefused(format: SnapshotFormat) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = StoreConfiguration.file(directory.file("links"), format: format, compression: .none)
        let first = try GraphContainer(for: [LinkV1.self], store: store)
        first.mainContext.insert(LinkV1(id: 1, site: URL(string: "https://example.com/a")!, price: Decimal(string: "12.5")!, title: "kept"))
        try first.mainContext.save()
        try await first.close()

        let error = #expect(throws: GraphStoreError.self) { _ = try GraphContainer(for: [LinkV2.self], store: store) }
        guard case .codingFailed(_, let entity, _, let reason)? = error else {
            Issue.record("expected codingFailed, got \(String(describing: error))")
            return
        }
        #expect(entity == "Link")
        #expect(reason.contains("Link.title"))
        let reopened = try GraphContainer(for: [LinkV1.self], store: store)
        #expect(reopened.mainContext.model(LinkV1.self, id: 1)?.title == "kept")
        try await reopened.close()
    }
}
