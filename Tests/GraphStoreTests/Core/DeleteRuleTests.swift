import ExampleModel
import Foundation
import GraphStore
import GraphStoreTestSupport
import Testing

// MARK: - A small model with every delete rule

/// Blog ← Article (toOne blogID, cascade) ← Comment (toOne articleID, cascade); an article's
/// author is protected (`.deny`), its editor is nullified.
private struct Blog: Entity, Hashable {
    var id = UUID()
    var name: String
}

private struct Author: Entity, Hashable {
    var id = UUID()
    var name: String
}

private struct Article: Entity, Hashable {
    var id = UUID()
    var title: String
    var blogID: Blog.ID?
    var authorID: Author.ID?
    var editorID: Author.ID?

    static var relationships: [Relationship<Article>] {
        [
            .toOne(\.blogID, Blog.self, deleteRule: .cascade),
            .toOne(\.authorID, Author.self, deleteRule: .deny),
            .toOne(\.editorID, Author.self, deleteRule: .nullify),
        ]
    }
}

private struct Comment: Entity, Hashable {
    var id = UUID()
    var text: String
    var articleID: Article.ID?

    static var relationships: [Relationship<Comment>] {
        [.toOne(\.articleID, Article.self, deleteRule: .cascade)]
    }
}

// MARK: - Tests

@Suite struct DeleteRuleTests {
    fileprivate static let blogs = [Blog(name: "kept"), Blog(name: "doomed")]
    fileprivate static let authors = [Author(name: "Ann"), Author(name: "Bob")]
    /// Three articles per blog; Ann writes the "kept" blog's articles and edits every article,
    /// Bob writes nothing.
    fileprivate static let articles: [Article] = blogs.flatMap { blog in
        (0..<3).map { n in
            Article(title: "\(blog.name) \(n)", blogID: blog.id, authorID: blog.name == "kept" ? authors[0].id : nil, editorID: authors[1].id)
        }
    }
    /// Two comments per article.
    fileprivate static let comments: [Comment] = articles.flatMap { article in
        (0..<2).map { n in Comment(text: "on \(article.title) #\(n)", articleID: article.id) }
    }
    static let tags = Fixtures.tagNames.map { Tag(name: $0) }

    static let blogTypes: [any Entity.Type] = [Blog.self, Author.self, Article.self, Comment.self]

    /// Seeds and saves a container holding the blog model and the example model.
    static func seed(_ container: GraphContainer) throws {
        let main = container.mainContext
        for blog in blogs { main.insert(blog) }
        for author in authors { main.insert(author) }
        for article in articles { main.insert(article) }
        for comment in comments { main.insert(comment) }
        for tag in tags { main.insert(tag) }
        try main.save()
        try container.checkInvariants()
    }

    // MARK: Nullify

    @Test(arguments: StoreKind.allCases)
    func nullifyToManyRemovesOnlyTheDeletedIDKeepingOrder(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let note = Note(text: "tagged", createdAt: Fixtures.epoch, tagIDs: Self.tags.prefix(3).map(\.id))
            let post = Fixtures.posts(1, tags: [Self.tags[1].id])[0]
            main.insert(note)
            main.insert(post)
            try main.save()
            let changes = container.changes

            main.delete(Self.tags[1])
            try main.save()
            try container.checkInvariants()

            #expect(main.model(Note.self, id: note.id)?.tagIDs == [Self.tags[0].id, Self.tags[2].id])
            #expect(main.model(Post.self, id: post.id)?.tagIDs == [])
            #expect(main.model(Tag.self, id: Self.tags[1].id) == nil)
            var iterator = changes.makeAsyncIterator()
            let change = try #require(await iterator.next())
            #expect(change.deletedIDs(Tag.self) == [Self.tags[1].id])
            #expect(change.updatedIDs(Note.self) == [note.id])
            #expect(change.updatedIDs(Post.self) == [post.id])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func nullifyToOneSetsTheReferenceToNil(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let bob = Self.authors[1]
            main.delete(bob)
            try main.save()
            try container.checkInvariants()

            let articles = try main.fetch(FetchDescriptor<Article>())
            #expect(articles.count == Self.articles.count)
            #expect(articles.allSatisfy { $0.editorID == nil })
            #expect(main.model(Author.self, id: bob.id) == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func nullifyAppliesToReferencesInsertedInTheSameSave(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let note = Note(text: "new", createdAt: Fixtures.epoch, tagIDs: [Self.tags[0].id, Self.tags[4].id])
            main.insert(note)
            main.delete(Self.tags[0])
            try main.save()
            try container.checkInvariants()
            #expect(main.model(Note.self, id: note.id)?.tagIDs == [Self.tags[4].id])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deletingEveryTargetNullifiesEveryReference(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let tagIDs = Self.tags.map(\.id)
            let posts = Fixtures.posts(50, tags: tagIDs)
            let notes = (0..<20).map { Note(text: "note \($0)", createdAt: Fixtures.epoch, tagIDs: Array(tagIDs.shuffled().prefix(3))) }
            for post in posts { main.insert(post) }
            for note in notes { main.insert(note) }
            try main.save()
            try container.checkInvariants()

            let deleted = try main.delete(model: ExampleModel.Tag.self)
            #expect(deleted == Self.tags.count)
            try main.save()
            try container.checkInvariants()
            #expect(container.count(of: ExampleModel.Tag.self) == 0)
            #expect(try main.fetch(FetchDescriptor<Post>()).allSatisfy { $0.tagIDs.isEmpty })
            #expect(try main.fetch(FetchDescriptor<Note>()).allSatisfy { $0.tagIDs.isEmpty })
            #expect(container.count(of: Post.self) == 50 && container.count(of: Note.self) == 20)

            // The emptied table takes new objects, with their unique values, again.
            main.insert(Tag(name: Self.tags[0].name))
            try main.save()
            try container.checkInvariants()
            #expect(container.count(of: ExampleModel.Tag.self) == 1)
        }
    }

    // MARK: Cascade

    @Test(arguments: StoreKind.allCases)
    func cascadeDeletesThreeLevelsAndNothingElse(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let doomed = Self.blogs[1]
            let doomedArticles = Set(Self.articles.filter { $0.blogID == doomed.id }.map(\.id))
            let doomedComments = Set(Self.comments.filter { doomedArticles.contains($0.articleID!) }.map(\.id))
            #expect(doomedArticles.count == 3 && doomedComments.count == 6)
            let changes = container.changes

            main.delete(doomed)
            try main.save()
            try container.checkInvariants()

            #expect(container.count(of: Blog.self) == 1)
            #expect(container.count(of: Article.self) == 3)
            #expect(container.count(of: Comment.self) == 6)
            let remainingArticles = try main.fetch(FetchDescriptor<Article>())
            #expect(remainingArticles.allSatisfy { $0.blogID == Self.blogs[0].id })
            let remainingComments = try main.fetch(FetchDescriptor<Comment>())
            #expect(remainingComments.allSatisfy { !doomedArticles.contains($0.articleID!) })

            var iterator = changes.makeAsyncIterator()
            let change = try #require(await iterator.next())
            #expect(change.deletedIDs(Blog.self) == [doomed.id])
            #expect(Set(change.deletedIDs(Article.self)) == doomedArticles)
            #expect(Set(change.deletedIDs(Comment.self)) == doomedComments)
            #expect(change.deletedCount == 1 + 3 + 6)
            #expect(change.updatedCount == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func cascadeFromTheMiddleLevel(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let article = Self.articles[0]
            let articleID: Article.ID? = article.id
            main.delete(Article.self, id: article.id)
            try main.save()
            try container.checkInvariants()
            #expect(container.count(of: Blog.self) == 2)
            #expect(container.count(of: Article.self) == 5)
            #expect(container.count(of: Comment.self) == 10)
            #expect(try main.fetchCount(FetchDescriptor<Comment>(predicate: #Predicate { $0.articleID == articleID })) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func cascadeAppliesToObjectsInsertedInTheSameSave(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let article = Self.articles[0]
            let comment = Comment(text: "late", articleID: article.id)
            main.insert(comment)
            main.delete(article)
            try main.save()
            try container.checkInvariants()
            #expect(main.model(Comment.self, id: comment.id) == nil)
            #expect(main.model(Article.self, id: article.id) == nil)
            #expect(container.count(of: Comment.self) == 10)
        }
    }

    // MARK: Deleting a whole model

    /// `delete(model:)` of objects only this context inserted drops their inserts and still runs
    /// their delete rules on its other pending objects at save, as `delete(_:id:)` does: a new
    /// note naming a new tag loses the reference (nullify), a new article's new comment goes with
    /// it (cascade). Before, the save threw `danglingReference`.
    @Test(arguments: StoreKind.allCases)
    func deletingAModelRunsTheRulesOfObjectsOnlyThisContextInserted(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let fresh = Tag(name: "fresh")
            let note = Note(text: "tagged", createdAt: Fixtures.epoch, tagIDs: [fresh.id, Self.tags[0].id])
            main.insert(fresh)
            main.insert(note)
            let blog = Blog(name: "new")
            let article = Article(title: "new", blogID: blog.id)
            let comment = Comment(text: "on new", articleID: article.id)
            let kept = Comment(text: "on a stored article", articleID: Self.articles[0].id)
            main.insert(blog)
            main.insert(article)
            main.insert(comment)
            main.insert(kept)
            #expect(try main.delete(model: ExampleModel.Tag.self) == Self.tags.count + 1)
            #expect(try main.delete(model: Blog.self) == Self.blogs.count + 1)
            try main.save()
            try container.checkInvariants()
            #expect(main.model(Note.self, id: note.id)?.tagIDs == [])
            #expect(container.count(of: ExampleModel.Tag.self) == 0)
            // Every blog went, so every article and comment cascaded, the new ones too.
            #expect(container.count(of: Blog.self) == 0)
            #expect(container.count(of: Article.self) == 0)
            #expect(container.count(of: Comment.self) == 0)
        }
    }

    /// The deletion of an object only this context inserted, made by `delete(model:)`, does not
    /// touch an object of the same id another context saves before this context's save: the
    /// marker deletes only what this context saw. The save succeeds under `.error`.
    @Test(arguments: StoreKind.allCases)
    func deletingAModelLeavesAnObjectAnotherContextSavedUnderANewID(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let mine = Tag(name: "mine")
            main.insert(mine)
            try main.delete(model: ExampleModel.Tag.self)
            let other = container.newBackgroundContext()
            let theirs = Tag(id: mine.id, name: "theirs")
            other.insert(theirs)
            other.insert(Note(text: "theirs", createdAt: Fixtures.epoch, tagIDs: [theirs.id]))
            try other.save()
            try main.save()
            try container.checkInvariants()
            #expect(try main.fetch(FetchDescriptor<ExampleModel.Tag>()).map(\.name) == ["theirs"])
        }
    }

    // MARK: Deny

    @Test(arguments: StoreKind.allCases)
    func denyThrowsAndChangesNothingThenWorksOnceTheReferenceIsGone(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let ann = Self.authors[0]
            let writtenByAnn = Self.articles.filter { $0.authorID == ann.id }
            let version = container.version
            let extraTag = Tag(name: "unrelated")
            main.insert(extraTag)
            main.delete(ann)

            let error = #expect(throws: GraphStoreError.self) { try main.save() }
            guard case let .deleteDenied(entity, id, referencingEntity, referencingID, relationship) = error else {
                Issue.record("expected deleteDenied, got \(String(describing: error))")
                return
            }
            #expect(entity == "Author")
            #expect(id == ann.id.uuidString)
            #expect(referencingEntity == "Article")
            #expect(writtenByAnn.map(\.id.uuidString).contains(referencingID))
            #expect(relationship == "authorID")
            try container.checkInvariants()
            #expect(container.version == version)
            #expect(container.newBackgroundContext().model(Author.self, id: ann.id) == ann)
            #expect(container.newBackgroundContext().model(Tag.self, id: extraTag.id) == nil)
            #expect(main.hasChanges)

            // Still denied while one reference remains.
            for article in writtenByAnn.dropLast() {
                var changed = article
                changed.authorID = nil
                main.insert(changed)
            }
            #expect(throws: GraphStoreError.deleteDenied(
                entity: "Author", id: ann.id.uuidString, referencingEntity: "Article",
                referencingID: writtenByAnn.last!.id.uuidString, relationship: "authorID")) { try main.save() }
            try container.checkInvariants()
            #expect(container.version == version)

            var last = writtenByAnn.last!
            last.authorID = nil
            main.insert(last)
            try main.save()
            try container.checkInvariants()
            #expect(container.version == version + 1)
            #expect(main.model(Author.self, id: ann.id) == nil)
            #expect(container.count(of: Article.self) == Self.articles.count)
            #expect(main.model(Tag.self, id: extraTag.id) == extraTag)
        }
    }

    /// Deleting a blog (cascading to its articles) and the articles' author in one save: once
    /// the cascade has run no article references the author, so `.deny` must not fire, whatever
    /// the order the entities were registered in.
    @Test(arguments: StoreKind.allCases, [false, true])
    func denyIsCheckedAfterCascadesInTheSameSave(store: StoreKind, authorFirst: Bool) async throws {
        let types: [any Entity.Type] = authorFirst
            ? [Author.self, Blog.self, Article.self, Comment.self]
            : [Blog.self, Author.self, Article.self, Comment.self]
        try await withContainer(store, for: types + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            main.delete(Self.blogs[0])   // the "kept" blog: its articles are Ann's
            main.delete(Self.authors[0])
            try main.save()
            try container.checkInvariants()
            #expect(main.model(Author.self, id: Self.authors[0].id) == nil)
            #expect(container.count(of: Article.self) == 3)
            #expect(try main.fetch(FetchDescriptor<Article>()).allSatisfy { $0.authorID == nil })
        }
    }

    @Test(arguments: StoreKind.allCases)
    func denyIgnoresReferencesFromObjectsDeletedInTheSameSave(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let ann = Self.authors[0]
            for article in Self.articles where article.authorID == ann.id { main.delete(article) }
            main.delete(ann)
            try main.save()
            try container.checkInvariants()
            #expect(container.count(of: Author.self) == 1)
            #expect(container.count(of: Article.self) == 3)
            #expect(container.count(of: Comment.self) == 6)
        }
    }

    // MARK: Dangling references

    @Test(arguments: StoreKind.allCases)
    func insertingAReferenceToAMissingObjectThrows(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let main = container.mainContext
            let missing = UUID()
            let note = Note(text: "orphan", createdAt: Fixtures.epoch, tagIDs: [Self.tags[0].id, missing])
            main.insert(note)
            #expect(throws: GraphStoreError.danglingReference(
                entity: "Note", id: note.id.uuidString, relationship: "tagIDs", targetEntity: "Tag", targetID: missing.uuidString)
            ) { try main.save() }
            try container.checkInvariants()
            #expect(container.count(of: Note.self) == 0)
            main.rollback()

            let comment = Comment(text: "orphan", articleID: missing)
            main.insert(comment)
            #expect(throws: GraphStoreError.danglingReference(
                entity: "Comment", id: comment.id.uuidString, relationship: "articleID", targetEntity: "Article", targetID: missing.uuidString)
            ) { try main.save() }
            try container.checkInvariants()
            #expect(container.count(of: Comment.self) == Self.comments.count)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func referencingAnObjectAnotherContextDeletedThrowsAtSave(store: StoreKind) async throws {
        try await withContainer(store, for: Self.blogTypes + exampleModel) { container in
            try Self.seed(container)
            let writer = container.newBackgroundContext()
            let tag = Self.tags[2]
            let note = Note(text: "late", createdAt: Fixtures.epoch, tagIDs: [tag.id])
            writer.insert(note)

            let deleter = container.newBackgroundContext()
            deleter.delete(tag)
            try deleter.save()
            try container.checkInvariants()

            #expect(throws: GraphStoreError.danglingReference(
                entity: "Note", id: note.id.uuidString, relationship: "tagIDs", targetEntity: "Tag", targetID: tag.id.uuidString)
            ) { try writer.save() }
            try container.checkInvariants()
            #expect(container.count(of: Note.self) == 0)
        }
    }
}
