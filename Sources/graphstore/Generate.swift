import ArgumentParser
import Foundation
import GraphStore
import GraphStoreSQLite

struct Generate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print Swift Entity types for a Core Data or SwiftData store, ready to drop into an app.",
        discussion: """
            Reads SOURCE with the app's model (--model, or else the model the store keeps of itself, \
            Z_MODELCACHE) and prints one Entity struct per entity, named and typed as in the model, \
            with relationships as ids and their delete rules, unique constraints, and \
            `enum NAME { static let entities: [any Entity.Type] }`. The snapshot `graphstore migrate` \
            writes from the same SOURCE (and --model, --id-column and --attribute-name) opens with \
            these types.
            """)

    @Argument(help: "A Core Data or SwiftData store.") var file: String
    @Option(help: "The app's Core Data model (.xcdatamodeld or .xcdatamodel); default: the store's model cache.") var model: String?
    @Option(help: "The name of the enum listing the entities.") var name = "Model"
    @Option(help: "What the file is: coredata or swiftdata (default: from its bytes and tables).") var from: StoreKind?
    @OptionGroup var coreDataFlags: CoreDataImportFlags

    func validate() throws {
        guard name.first.map({ $0.isLetter || $0 == "_" }) == true, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            throw ValidationError("--name must be a Swift type name, such as NotesModel")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let read = try readStore(URL(fileURLWithPath: file), kind: from, model: model, flags: coreDataFlags)
            guard let report = read.coreDataReport else {
                throw ToolError("\(file) is a \(read.kind.displayName); generate reads Core Data and SwiftData stores")
            }
            guard let description = report.model else {
                throw ToolError("\(file) has no model cache (Z_MODELCACHE) to take names and types from; pass the app's model with --model App.xcdatamodeld")
            }
            writeOut(EntitySourceGenerator.source(model: description, report: report, name: name))
        }
    }
}
