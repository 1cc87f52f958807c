// A helper process for the crash-safety tests. The test kills it with SIGKILL at random moments
// and checks that the store opens and holds everything the helper reported.
//
// Usage: graphstore-crash-helper STORE json|plist|sqlite gzip|none START|auto [acks|saves]
//
// Saves are numbered from START + 1 (`auto`: after the number of notes the store holds).
// - acks (the default): saves five notes (each with its tag) at a time and prints "acked N"
//   after each flush that made saves 1...N durable.
// - saves: prints "ready" once the store is open, then saves one note (with its tag) at a time
//   and prints "saved N" as soon as each save() returned, without flushing: a journaled store
//   must keep every one of them.
import ExampleModel
import Foundation
import GraphStore
import GraphStoreSQLite

let arguments = CommandLine.arguments
guard arguments.count == 5 || arguments.count == 6, arguments[4] == "auto" || Int(arguments[4]) != nil else {
    FileHandle.standardError.write(Data("usage: graphstore-crash-helper STORE json|plist|sqlite gzip|none START|auto [acks|saves]\n".utf8))
    exit(2)
}
let url = URL(fileURLWithPath: arguments[1])
let reportsEverySave = arguments.count == 6 && arguments[5] == "saves"
let compression: Compression = arguments[3] == "none" ? .none : .gzip
let store: StoreConfiguration
switch arguments[2] {
case "sqlite": store = .sqlite(url)
case "plist": store = .file(url, format: .binaryPropertyList, compression: compression, coalescingInterval: .milliseconds(5))
default: store = .file(url, format: .json, compression: compression, coalescingInterval: .milliseconds(5))
}

/// Writes `line` to standard output with one write(2), so a kill never splits it.
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

do {
    let container = try GraphContainer(for: exampleModel, store: store)
    let context = container.newBackgroundContext()
    var number = try Int(arguments[4]) ?? context.fetchCount(FetchDescriptor<Note>())
    if reportsEverySave { report("ready") }
    while true {
        for _ in 0..<(reportsEverySave ? 1 : 5) {
            number += 1
            let tag = Tag(name: "tag\(number)")
            context.insert(tag)
            context.insert(Note(text: "note \(number) " + String(repeating: "x", count: number % 200), tagIDs: [tag.id]))
            try context.save()
        }
        if reportsEverySave {
            report("saved \(number)")
        } else {
            try await container.flush()
            report("acked \(number)")
        }
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
