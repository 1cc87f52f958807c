import Foundation

/// The committed fixtures.
enum ModelVersionFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/ModelVersions")

    /// Copies the fixture files named `names` into `destination` (a temporary directory).
    static func copy(_ names: [String], to destination: URL) throws {
        for name in names {
            try FileManager.default.copyItem(at: directory.appendingPathComponent(name), to: destination.appendingPathComponent(name))
        }
    }
}
