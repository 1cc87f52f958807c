import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

typealias Tag = ExampleModel.Tag

/// The `graphstore` tool run as a process on snapshot files: output and exit status.
@Suite struct GraphStoreToolSnapshotTests {
    /// A snapshot of a few posts, notes and tags.
    static func makeStore(_ url: URL, format: SnapshotFormat = .json) async throws -> (posts: [Post], notes: [Note], tags: [Tag]) {
        let container = try GraphContainer(for: exampleModel, store: .file(url, format: format))
        let tags = Fixtures.tagNames.map { Tag(name: $0) }
        let posts = Fixtures.posts(25, tags: tags.map(\.id))
        let notes = (0..<7).map { Note(text: "note \($0) ✓", createdAt: Fixtures.epoch.addingTimeInterval(Double($0) + 0.123456789), tagIDs: [tags[$0 % tags.count].id]) }
        let context = container.mainContext
        for value in tags { context.insert(value) }
        for value in posts { context.insert(value) }
        for value in notes { context.insert(value) }
        try context.save()
        try await container.close()
        return (posts, notes, tags)
    }

    @Test func inspectShowsFormatVersionsAndEntities() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        _ = try await Self.makeStore(url)
        let result = try await runProduct("graphstore", ["inspect", url.path])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("snapshot, JSON, gzip"))
        #expect(result.standardOutput.contains("format:          GraphStore 1"))
        #expect(result.standardOutput.contains("store version:   1"))
        let rows = result.standardOutput.split(separator: "\n").filter { $0.hasPrefix("Post ") || $0.hasPrefix("Note ") || $0.hasPrefix("Tag ") }
        #expect(rows.count == 3)
        #expect(rows.contains { $0.hasPrefix("Post") && $0.split(separator: " ", omittingEmptySubsequences: true)[1] == "25" })
        #expect(rows.contains { $0.hasPrefix("Note") && $0.split(separator: " ", omittingEmptySubsequences: true)[1] == "7" })
    }

    @Test func dumpPrintsJSON() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let made = try await Self.makeStore(url)
        let whole = try await runProduct("graphstore", ["dump", url.path])
        #expect(whole.status == 0)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(whole.standardOutput.utf8)) as? [String: Any])
        let header = try #require(document["header"] as? [String: Any])
        #expect(header["format"] as? String == "GraphStore")
        let tags = try await runProduct("graphstore", ["dump", url.path, "--entity", "Tag"])
        let array = try #require(try JSONSerialization.jsonObject(with: Data(tags.standardOutput.utf8)) as? [[String: Any]])
        #expect(Set(array.compactMap { $0["name"] as? String }) == Set(made.tags.map(\.name)))
        let missing = try await runProduct("graphstore", ["dump", url.path, "--entity", "Nope"])
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("has no entity Nope"))
    }

    /// Both dumps print values as the snapshot holds them: `-0.0` keeps its sign, an integer
    /// beyond 64 bits keeps its digits, and a double its last bit; the same file always gives
    /// the same text.
    @Test func dumpPrintsEveryValueExactly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("readings.json")
        try Data("""
            {"header":{"format":"GraphStore","formatVersion":1,"modelVersion":"1","savedAt":0.5,"storeVersion":1,\
            "counts":{"Reading":2},"dateEncoding":"secondsSince2001"},"entities":{"Reading":[\
            {"id":1,"zero":-0.0,"big":123456789012345678901234567890,"third":0.30000000000000004,"tiny":5e-324,"text":"a,b:{[\\"]}"},\
            {"id":2,"zero":0,"big":-99999999999999999999,"nested":{"b":[],"a":{}}}]}}
            """.utf8).write(to: url)
        let whole = try await runProduct("graphstore", ["dump", url.path])
        let entity = try await runProduct("graphstore", ["dump", url.path, "--entity", "Reading"])
        for result in [whole, entity] {
            #expect(result.status == 0, "\(result.standardError)")
            let text = result.standardOutput
            #expect(text.contains("\"zero\": -0"), "\(text)")
            #expect(text.contains("123456789012345678901234567890") && text.contains("-99999999999999999999"), "\(text)")
            #expect(!text.contains("e+29") && !text.contains("e+19"), "\(text)")
            #expect(text.contains("0.30000000000000004") && text.contains("5e-324"), "\(text)")
            #expect(text.contains("\"text\": \"a,b:{[\\\"]}\""), "\(text)")
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "valid JSON")
        }
        // The whole dump is a snapshot document that reads back as the file.
        let copy = directory.file("copy.json")
        try Data(whole.standardOutput.utf8).write(to: copy)
        #expect(try GenericSnapshot.read(from: copy).sortedJSON() == GenericSnapshot.read(from: url).sortedJSON())
        let again = try await runProduct("graphstore", ["dump", url.path])
        #expect(again.standardOutput == whole.standardOutput, "the same file gives the same text")
    }

    @Test func verifyExitStatusSaysWhetherTheFileIsSound() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        _ = try await Self.makeStore(url)
        let good = try await runProduct("graphstore", ["verify", url.path])
        #expect(good.status == 0)
        #expect(good.standardOutput.contains("OK"))
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count / 2] ^= 0x10
        let damaged = directory.file("damaged.json.gz")
        try bytes.write(to: damaged)
        let bad = try await runProduct("graphstore", ["verify", damaged.path])
        #expect(bad.status == 1)
        #expect(bad.standardError.split(separator: "\n").count == 1)
        #expect(bad.standardError.contains(damaged.path))
        #expect(try Data(contentsOf: damaged) == bytes)
        let absent = try await runProduct("graphstore", ["verify", directory.file("absent.json.gz").path])
        #expect(absent.status == 1)
        #expect(absent.standardError.contains("no such file"))
    }

    @Test func convertToPlistOpensWithTheSameObjects() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        let made = try await Self.makeStore(url)
        let result = try await runProduct("graphstore", ["convert", url.path, "--format", "plist", "--compression", "gzip"])
        #expect(result.status == 0)
        let plist = directory.file("store.plist.gz")
        let container = try GraphContainer(for: exampleModel, store: .file(plist, format: .binaryPropertyList))
        let notes = try container.mainContext.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.createdAt)]))
        #expect(notes == made.notes)
        #expect(Set(try container.mainContext.fetch(FetchDescriptor<Post>())) == Set(made.posts))
        try container.checkInvariants()
        try await container.close()
        // And back to uncompressed JSON.
        let back = try await runProduct("graphstore", ["convert", plist.path, "--format", "json", "--compression", "none", "--output", directory.file("back.json").path])
        #expect(back.status == 0)
        let reopened = try GraphContainer(for: exampleModel, store: .file(directory.file("back.json"), compression: .none))
        #expect(try reopened.mainContext.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.createdAt)])) == made.notes)
        try await reopened.close()
    }

    @Test func convertNeverOverwritesWithoutForce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.json.gz")
        _ = try await Self.makeStore(url)
        let destination = directory.file("store.plist.gz")
        try Data("keep me".utf8).write(to: destination)
        let refused = try await runProduct("graphstore", ["convert", url.path, "--format", "plist"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("--force"))
        #expect(try Data(contentsOf: destination) == Data("keep me".utf8))
        let forced = try await runProduct("graphstore", ["convert", url.path, "--format", "plist", "--force"])
        #expect(forced.status == 0)
        #expect(try Data(contentsOf: destination).starts(with: [0x1f, 0x8b]))
    }

    /// `convert --force` checks its destination as `migrate` does: a store whose journal holds
    /// saves its file does not (a killed app's), or that an app has open, is not replaced.
    @Test func convertForceKeepsAStoreWithSavesInItsJournal() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.file("source.json.gz"), live = directory.file("live.json.gz"), crashed = directory.file("crashed.json.gz")
        _ = try await Self.makeStore(source)
        _ = try await Self.makeStore(live)
        let app = try GraphContainer(for: exampleModel, store: .file(live))
        app.mainContext.insert(Tag(name: "told saved"))
        try app.mainContext.save()
        // The files as a killed app leaves them: the save only in the journal.
        try FileManager.default.copyItem(at: live, to: crashed)
        try FileManager.default.copyItem(atPath: live.path + ".journal", toPath: crashed.path + ".journal")

        let overCrashed = try await runProduct("graphstore", ["convert", source.path, "--format", "json", "-o", crashed.path, "--force"])
        #expect(overCrashed.status != 0)
        #expect(overCrashed.standardError.contains("journal"))
        let overOpen = try await runProduct("graphstore", ["convert", source.path, "--format", "json", "-o", live.path, "--force"])
        #expect(overOpen.status != 0)
        try await app.close()

        for url in [crashed, live] {
            let reopened = try GraphContainer(for: exampleModel, store: .file(url))
            #expect(try reopened.mainContext.fetch(FetchDescriptor<Tag>()).contains { $0.name == "told saved" }, "\(url.lastPathComponent)")
            try await reopened.close()
        }
    }

    /// A sound store of another kind is called what it is, with the command that reads it,
    /// rather than a snapshot "damaged at byte 0".
    @Test func convertNamesAStoreOfAnotherKindAndPointsToMigrate() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let snapshot = directory.file("store.json.gz"), sqlite = directory.file("store.sqlite")
        _ = try await Self.makeStore(snapshot)
        let migrated = try await runProduct("graphstore", ["migrate", snapshot.path, sqlite.path])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        let refused = try await runProduct("graphstore", ["convert", sqlite.path, "--format", "plist"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains(sqlite.path) && refused.standardError.contains("GraphStore SQLite store"), "\(refused.standardError)")
        #expect(refused.standardError.contains("graphstore migrate") && !refused.standardError.contains("damaged"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("store.plist.gz").path))
    }

    /// A store read through another hard link of its file does not see the journal the app
    /// keeps beside the name it opened: the commands that read it say so instead of silently
    /// reading the file without those saves.
    @Test func aSourceWithOtherHardLinksAndNoJournalIsWarnedAbout() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = directory.file("live.json.gz"), app = directory.file("app.json.gz"), linked = directory.file("linked.json.gz")
        _ = try await Self.makeStore(live)
        let container = try GraphContainer(for: exampleModel, store: .file(live))
        container.mainContext.insert(Tag(name: "only in the journal"))
        try container.mainContext.save()
        // The files as a killed app leaves them, and another name for the store's file.
        try FileManager.default.copyItem(at: live, to: app)
        try FileManager.default.copyItem(atPath: live.path + ".journal", toPath: app.path + ".journal")
        try await container.close()
        try FileManager.default.linkItem(at: app, to: linked)

        let runs = [
            ["verify", linked.path], ["migrate", linked.path, directory.file("out.sqlite").path],
            ["convert", linked.path, "--format", "plist"],
        ]
        for arguments in runs {
            let result = try await runProduct("graphstore", arguments)
            let warning = result.standardError
            #expect(warning.contains("warning") && warning.contains(linked.path) && warning.contains("hard link") && warning.contains("journal"), "\(arguments[0]): \(warning)")
        }
        // Under the app's name, the journal is found (and the read refused); a file with one
        // name, or with its journal beside it, gets no warning.
        let underTheAppsName = try await runProduct("graphstore", ["verify", app.path])
        #expect(underTheAppsName.status == 1 && underTheAppsName.standardError.contains(app.path + ".journal"), "\(underTheAppsName.standardError)")
        #expect(!underTheAppsName.standardError.contains("hard link"))
        let single = try await runProduct("graphstore", ["verify", live.path])
        #expect(single.status == 0 && single.standardError.isEmpty, "\(single.standardError)")
    }

    @Test func badArgumentsAreRefused() async throws {
        let unknownFormat = try await runProduct("graphstore", ["convert", "x.json.gz", "--format", "yaml"])
        #expect(unknownFormat.status != 0)
        #expect(unknownFormat.standardError.contains("yaml"))
        let noCommand = try await runProduct("graphstore", ["frobnicate"])
        #expect(noCommand.status != 0)
        let noFile = try await runProduct("graphstore", ["inspect"])
        #expect(noFile.status != 0)
    }
}
