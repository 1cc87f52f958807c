import Foundation
import GRDB
import GraphStore

/// The indexes and triggers made on an entity table by someone other than GraphStore (a
/// reporting tool's `CREATE INDEX`, an audit trigger), which `DROP TABLE` removes with the
/// table. A store that writes a table again reads them first and makes them again after, so
/// that writing the table again takes nothing away from another program.
///
/// GraphStore makes no index or trigger of its own on an entity table; a `PRIMARY KEY`'s
/// automatic index has no SQL and is made again by `CREATE TABLE`.
struct TableCompanions {
    /// One index or trigger, as `sqlite_master` records it.
    struct Item: Equatable {
        /// `index` or `trigger`.
        let type: String
        let name: String
        /// The statement that made it.
        let sql: String
    }

    let table: String
    /// Indexes first, then triggers, each in the order they were made.
    let items: [Item]

    var isEmpty: Bool { items.isEmpty }

    /// The indexes and triggers on `table` in `db`.
    ///
    /// - Throws: SQLite's errors.
    /// - Complexity: One read of `sqlite_master`.
    static func read(of table: String, in db: Database) throws -> TableCompanions {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT type, name, sql FROM sqlite_master
                WHERE type IN ('index', 'trigger') AND sql IS NOT NULL AND tbl_name = ? COLLATE NOCASE
                ORDER BY type = 'trigger', rowid
                """,
            arguments: [table])
        return TableCompanions(table: table, items: rows.map { Item(type: $0[0], name: $0[1], sql: $0[2]) })
    }

    /// Makes every index and trigger again, on the table made again under the same name with
    /// the same columns.
    ///
    /// - Throws: ``GraphStoreError/codingFailed(path:entity:id:reason:)`` naming the table, the
    ///   index or trigger that SQLite refused, and SQLite's reason: writing the same rows again
    ///   meets the same refusal, so the writer does not retry it (see `SQLiteWriter`); SQLite's
    ///   other errors (a full disk) as they are. The caller's transaction then rolls back,
    ///   leaving the table and its companions as they were.
    func makeAgain(in db: Database, path: String) throws {
        for item in items {
            do {
                try db.execute(sql: item.sql)
            } catch let error as DatabaseError where Self.isRefusal(error) {
                throw GraphStoreError.codingFailed(
                    path: path, entity: table, id: nil,
                    reason: "writing table \(table) again, its \(item.type) \(item.name), made by another program, cannot be made again (\(error.message ?? "\(error)")); nothing was written, and writing the same rows again cannot succeed: remove the \(item.type) and open the store again")
            }
        }
    }

    /// Makes again each index and trigger that still fits the tables (a migration may rename
    /// or remove the table or the columns it names, or leave values a `UNIQUE` index refuses),
    /// and returns those that do not, each with SQLite's reason. Each is tried under a
    /// savepoint, so one that fails leaves nothing.
    ///
    /// SQLite checks a trigger's body only when a statement that fires it is prepared, so a
    /// trigger is made and then an insert, an update of every column and a delete of the table
    /// are prepared (not run): a trigger naming a removed column or table would otherwise make
    /// every later write of the table fail.
    ///
    /// - Throws: SQLite's errors other than a refused statement (a full disk).
    func makeAgainWhatFits(in db: Database) throws -> [(item: Item, reason: String)] {
        var refused: [(item: Item, reason: String)] = []
        for item in items {
            try db.execute(sql: "SAVEPOINT graphstore_companion")
            do {
                try db.execute(sql: item.sql)
                if item.type == "trigger" { try Self.prepareWrites(of: table, in: db) }
                try db.execute(sql: "RELEASE graphstore_companion")
            } catch let error as DatabaseError where Self.isRefusal(error) {
                try db.execute(sql: "ROLLBACK TO graphstore_companion")
                try db.execute(sql: "RELEASE graphstore_companion")
                refused.append((item, error.message ?? "\(error)"))
            }
        }
        return refused
    }

    /// Whether SQLite refused the statement making an index or trigger (it names what is
    /// missing, or the values break a `UNIQUE` index), rather than failing for another reason
    /// (a full disk).
    private static func isRefusal(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_ERROR || error.resultCode == .SQLITE_CONSTRAINT
    }

    /// Prepares, without running, an insert, an update of every column and a delete of
    /// `table`, which compiles the table's triggers.
    ///
    /// - Throws: SQLite's error for a trigger that does not fit the tables.
    private static func prepareWrites(of table: String, in db: Database) throws {
        let name = table.quotedDatabaseIdentifier
        let columns = try db.columns(in: table).map(\.name.quotedDatabaseIdentifier)
        let assignments = columns.map { "\($0) = \($0)" }.joined(separator: ", ")
        for sql in [
            "INSERT INTO \(name) DEFAULT VALUES", "UPDATE \(name) SET \(assignments) WHERE 0", "DELETE FROM \(name) WHERE 0",
        ] {
            _ = try db.makeStatement(sql: sql)
        }
    }
}
