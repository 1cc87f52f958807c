import ArgumentParser
import ExampleModel
import Foundation
import GraphStore
import NotesCore

@main
struct Notes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A Vesper-style notes tool on GraphStore.",
        subcommands: [Add.self, List.self, TagNote.self, Archive.self, Pinned.self, PinNote.self, Tags.self, Search.self])
}

struct StoreOption: ParsableArguments {
    @Option(help: "The store file.")
    var store: String = ".notes/notes.json.gz"

    /// Opens the store, runs `body` with the library, flushes and closes; errors go to stderr.
    func withLibrary(_ body: (NotesLibrary) throws -> Void) async throws {
        do {
            let url = URL(fileURLWithPath: store)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let container = try NotesModel.container(at: url)
            // Close (and so flush) whether or not the command succeeded, then report.
            let result = Result { try body(NotesLibrary(container: container)) }
            try await container.close()
            try result.get()
        } catch let error as GraphStoreError {
            FileHandle.standardError.write(Data("notes: \(error.description)\n".utf8))
            throw ExitCode.failure
        } catch let error as NotesLibrary.Problem {
            FileHandle.standardError.write(Data("notes: \(error.description)\n".utf8))
            throw ExitCode.failure
        }
    }
}

func show(_ note: Note, _ library: NotesLibrary) {
    let tags = library.tagNames(of: note).map { "#\($0)" }.joined(separator: " ")
    let archived = note.isArchived ? " [archived]" : ""
    print("\(note.id.uuidString.prefix(8).lowercased())  \(note.createdAt.formatted(.iso8601.year().month().day()))  \(note.text)\(tags.isEmpty ? "" : "  \(tags)")\(archived)")
}

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add a note.")
    @OptionGroup var options: StoreOption
    @Argument(help: "The note's text.") var text: String
    @Option(name: .customLong("tag"), help: "A tag (repeatable).") var tags: [String] = []

    func run() async throws {
        try await options.withLibrary { library in show(try library.add(text, tags: tags), library) }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List notes, newest first.")
    @OptionGroup var options: StoreOption
    @Option(help: "Only notes with this tag.") var tag: String?
    @Flag(help: "Archived notes instead of current ones.") var archived = false

    func run() async throws {
        try await options.withLibrary { library in
            for note in try library.list(tag: tag, archived: archived) { show(note, library) }
        }
    }
}

struct TagNote: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tag", abstract: "Tag a note (by id prefix).")
    @OptionGroup var options: StoreOption
    @Argument(help: "The note's id, or its first characters.") var id: String
    @Argument(help: "The tag.") var tag: String

    func run() async throws {
        try await options.withLibrary { library in show(try library.tag(id, with: tag), library) }
    }
}

struct Archive: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Archive a note (by id prefix).")
    @OptionGroup var options: StoreOption
    @Argument(help: "The note's id, or its first characters.") var id: String

    func run() async throws {
        try await options.withLibrary { library in show(try library.archive(id), library) }
    }
}

struct Tags: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Every tag with its number of notes.")
    @OptionGroup var options: StoreOption

    func run() async throws {
        try await options.withLibrary { library in
            for (name, count) in try library.tagCounts() { print("\(count)\t#\(name)") }
        }
    }
}

struct Search: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Notes containing every word.")
    @OptionGroup var options: StoreOption
    @Argument(help: "Words to look for.") var words: [String]

    func run() async throws {
        try await options.withLibrary { library in
            for note in try library.search(words) { show(note, library) }
        }
    }
}

struct PinNote: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pin", abstract: "Pin a note.")
    @OptionGroup var options: StoreOption
    @Argument(help: "The start of the note's id.") var id: String

    func run() async throws {
        try await options.withLibrary { library in show(try library.pin(id), library) }
    }
}

struct Pinned: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the pinned notes.")
    @OptionGroup var options: StoreOption

    func run() async throws {
        try await options.withLibrary { library in
            for note in try library.pinned() { show(note, library) }
        }
    }
}

