import Foundation
import GRDB
import GraphStore

/// What an imported id is to the app that opens the snapshot: two rows whose ids differ in
/// SQLite (`INTEGER 5` and `REAL 5.0`, a UUID as a BLOB and as lowercase text, `'caf\u{E9}'`
/// and `'cafe\u{301}'`) may still be one id to the app's Swift type, which would then see two
/// objects with one id, or a reference to either as a reference to both.
enum CoreDataIDIdentity {
    /// The kinds of values no one Swift id type reads together.
    enum Kind: String {
        case number, text, data, boolean, other
    }

    /// The kind of an id as the snapshot holds it.
    static func kind(of value: SnapshotValue) -> Kind {
        switch value {
        case .integer, .unsigned, .double: .number
        case .string: .text
        case .data: .data
        case .bool: .boolean
        default: .other
        }
    }

    /// The id as the app's type holds it: equal for two ids the app cannot tell apart.
    ///
    /// Numbers are one when they are the same number (a JSON snapshot writes `5` and `5.0`
    /// alike; a `Decimal` is read from the number's exact text), or, for a `Double` or `Float`
    /// attribute (and dates, read as doubles), the same `Double` or `Float`; text read as a UUID (``CoreDataImportOptions/ValueConversion/uuid``)
    /// is one when it is the same UUID in any case; other text when Swift's `String` says so
    /// (which compares by Unicode canonical equivalence, as `SnapshotValue`'s `==` does).
    ///
    /// - Parameters:
    ///   - type: The model's type of the id attribute, or `nil` without a model.
    ///   - conversion: How the id column is read.
    static func identity(
        of value: SnapshotValue, type: CoreDataModelDescription.AttributeType?, conversion: CoreDataImportOptions.ValueConversion
    ) -> SnapshotValue {
        switch (value, type) {
        case (.integer(let number), .float?): return .double(Double(Float(number)))
        case (.integer(let number), .double?), (.integer(let number), .date?): return .double(Double(number))
        case (.double(let number), .float?): return .double(Double(Float(number)))
        case (.double, .double?), (.double, .date?): return value
        case (.double(let number), _): return Int64(exactly: number).map { .integer($0) } ?? value
        case (.string(let text), _) where conversion == .uuid: return UUID(uuidString: text).map { .string($0.uuidString) } ?? value
        default: return value
        }
    }

    /// What makes two ids that SQLite stores differently one id, for the error that names them.
    static func sameness(of value: SnapshotValue, type: CoreDataModelDescription.AttributeType?, conversion: CoreDataImportOptions.ValueConversion) -> String {
        switch (kind(of: value), type) {
        case (.number, .float?): "the same Float"
        case (.number, .double?), (.number, .date?): "the same Double"
        case (.number, _): "the same number, which a snapshot writes alike"
        case (.text, _) where conversion == .uuid: "the same UUID"
        case (.text, _): "equal Swift strings (Swift compares strings by Unicode canonical equivalence)"
        default: "equal"
        }
    }

    /// The ids of one entity read so far, row by row (`Row` labels a row in messages: a `Z_PK`,
    /// a row number), as the app's id type holds them: finds a row whose id is of another kind
    /// than the first row's, or is one id to the app with an earlier row's.
    struct Tracker<Row> {
        /// Why a row's id cannot join the ids read before it.
        enum Clash {
            /// The first row's id is of `first.kind`, this one's of `kind`: no one Swift type
            /// reads both.
            case kinds(first: (row: Row, stored: DatabaseValue, kind: Kind), kind: Kind)
            /// `other` holds the same id to the app: `identical` when SQLite stores the two
            /// alike too, else they differ in SQLite only.
            case sameID(other: (row: Row, stored: DatabaseValue), identical: Bool)
        }

        /// The model's type of the id attribute, or `nil` without a model.
        let type: CoreDataModelDescription.AttributeType?
        /// How the id column is read.
        let conversion: CoreDataImportOptions.ValueConversion
        private var first: (row: Row, stored: DatabaseValue, kind: Kind)?
        private var owners: [SnapshotValue: (row: Row, stored: DatabaseValue)] = [:]

        init(type: CoreDataModelDescription.AttributeType?, conversion: CoreDataImportOptions.ValueConversion) {
            self.type = type
            self.conversion = conversion
        }

        /// Adds the id `id` (read from `stored`) of `row`; `nil` when it joins the others.
        ///
        /// - Complexity: O(1) hashing.
        mutating func add(_ id: SnapshotValue, stored: DatabaseValue, row: Row) -> Clash? {
            let kind = CoreDataIDIdentity.kind(of: id)
            if let first, first.kind != kind { return .kinds(first: first, kind: kind) }
            if first == nil { first = (row, stored, kind) }
            guard let other = owners.updateValue((row, stored), forKey: identity(of: id, type: type, conversion: conversion)) else { return nil }
            return .sameID(other: other, identical: isIdentical(other.stored, stored))
        }

        /// What makes `id` one with another that SQLite stores differently (see
        /// ``CoreDataIDIdentity/sameness(of:type:conversion:)``).
        func sameness(of id: SnapshotValue) -> String {
            CoreDataIDIdentity.sameness(of: id, type: type, conversion: conversion)
        }
    }

    /// Whether SQLite stores the two values alike: the same storage class and the same bits or
    /// bytes. (`DatabaseValue`'s `==` takes `5` and `5.0` for one, and two spellings of one
    /// string under canonical equivalence.)
    static func isIdentical(_ first: DatabaseValue, _ second: DatabaseValue) -> Bool {
        switch (first.storage, second.storage) {
        case (.null, .null): true
        case (.int64(let a), .int64(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        case (.blob(let a), .blob(let b)): a == b
        default: false
        }
    }

    /// A stored value for a message, with its storage class: `INTEGER 5`, `REAL 5.0`,
    /// `TEXT 'cafe\u{301}'` (characters outside printable ASCII escaped, so that two spellings
    /// that look alike read differently), `BLOB x'e621…'`.
    static func describe(_ stored: DatabaseValue) -> String {
        switch stored.storage {
        case .null: "NULL"
        case .int64(let number): "INTEGER \(number)"
        case .double(let number): "REAL \(number)"
        case .string(let text): "TEXT '\(escaped(text))'"
        case .blob(let data): "BLOB x'\(data.map { String(format: "%02x", $0) }.joined())'"
        }
    }

    /// `text` with each Unicode scalar outside printable ASCII written `\u{…}`.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x20, scalar.value < 0x7F, scalar != "\\" {
                result.unicodeScalars.append(scalar)
            } else {
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return result
    }
}
