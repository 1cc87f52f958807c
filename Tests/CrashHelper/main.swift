// A helper process for the crash-safety tests: saves in a loop to a snapshot store and prints
// "acked N" after each flush that made saves 1...N durable. The test kills it with SIGKILL at
// random moments and checks that the file opens and holds every acknowledged save.
//
// Usage: graphstore-crash-helper STORE_PATH json|plist gzip|none START
import ExampleModel
import Foundation
import GraphStore

let arguments = CommandLine.arguments
guard arguments.count == 5, let start = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: graphstore-crash-helper STORE json|plist gzip|none START\n".utf8))
    exit(2)
}
let url = URL(fileURLWithPath: arguments[1])
let format: SnapshotFormat = arguments[2] == "plist" ? .binaryPropertyList : .json
let compression: Compression = arguments[3] == "none" ? .none : .gzip

do {
    let container = try GraphContainer(
        for: exampleModel, store: .file(url, format: format, compression: compression, coalescingInterval: .milliseconds(5)))
    let context = container.newBackgroundContext()
    var number = start
    while true {
        for _ in 0..<5 {
            number += 1
            let tag = Tag(name: "tag\(number)")
            context.insert(tag)
            context.insert(Note(text: "note \(number) " + String(repeating: "x", count: number % 200), tagIDs: [tag.id]))
            try context.save()
        }
        try await container.flush()
        FileHandle.standardOutput.write(Data("acked \(number)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
