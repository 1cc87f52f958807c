import ExampleModel
import Foundation
import GraphStore
import PropertyBased

/// The values `SnapshotRoundTripTests` writes and reads back: random graphs of the example
/// model, and `EdgeValues`, a local entity of the values file formats get wrong.

// MARK: - Random graphs

/// Posts, notes and tags whose references all resolve.
struct RandomGraph: Sendable, CustomStringConvertible {
    var posts: [Post]
    var notes: [Note]
    var tags: [ExampleModel.Tag]

    var description: String {
        "RandomGraph(\(posts.count) posts, \(notes.count) notes, \(tags.count) tags: tags \(tags.map(\.name)), notes \(notes.map(\.text)))"
    }
}

/// Generators for the round-trip properties.
enum SnapshotGenerators {
    /// Unicode scalars from the interesting corners: ASCII (with quotes and backslashes),
    /// control characters including NUL, Latin letters, combining marks, CJK, Hangul, emoji,
    /// zero-width joiners and bidi controls, noncharacters and any scalar at all.
    static let scalar = Gen<Unicode.Scalar>.frequency(
        (weight: 6, gen: Gen.unicodeScalar(in: " "..."~")),
        (weight: 1, gen: Gen.unicodeScalar(in: "\u{0}"..."\u{1F}")),
        (weight: 2, gen: Gen.unicodeScalar(in: "\u{A0}"..."\u{17F}")),
        (weight: 2, gen: Gen.unicodeScalar(in: "\u{300}"..."\u{36F}")),
        (weight: 2, gen: Gen.unicodeScalar(in: "\u{4E00}"..."\u{9FFF}")),
        (weight: 1, gen: Gen.unicodeScalar(in: "\u{AC00}"..."\u{D7A3}")),
        (weight: 2, gen: Gen.unicodeScalar(in: "\u{1F300}"..."\u{1FAFF}")),
        (weight: 1, gen: Gen.unicodeScalar(in: "\u{2000}"..."\u{206F}")),
        (weight: 1, gen: Gen.unicodeScalar(in: "\u{FE00}"..."\u{FFFF}")),
        (weight: 1, gen: Gen<UInt32>.value(in: 0...0x10FFFF).compactMap { Unicode.Scalar($0) }))

    /// Text of 0 to 24 scalars.
    static let text = scalar.array(of: 0...24).map { scalars in
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        return text
    }

    /// Finite doubles with arbitrary low bits: plain ranges, any finite bit pattern
    /// (subnormals and huge values included), and calendar dates with sub-second noise.
    static let seconds = Gen<Double>.frequency(
        (weight: 3, gen: Gen.double(in: -4e9...4e9)),
        (weight: 1, gen: Gen<UInt64>.bitSet.map { Double(bitPattern: $0) }.filter(\.isFinite)),
        (weight: 1, gen: Gen.dateTime.map { $0.timeIntervalSinceReferenceDate }))

    static let date = seconds.map { Date(timeIntervalSinceReferenceDate: $0) }

    static let uuid = zip(Gen<UInt64>.bitSet, Gen<UInt64>.bitSet).map { high, low in
        withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }

    /// Indexes into the tag list, resolved when the graph is assembled.
    static let tagReferences = Gen.int(in: 0...1_000).array(of: 0...4)

    static let tagDraft = zip(uuid, text)

    static let noteDraft = zip(uuid, text, date, date, Gen.bool, tagReferences)

    static let postDraft = zip(
        Gen.int64(in: .min ... .max), text, Gen<Post.Kind>.case, date, text, text.optional,
        Gen.int(in: .min ... .max), tagReferences)

    static let graph = zip(tagDraft.array(of: 0...8), noteDraft.array(of: 0...20), postDraft.array(of: 0...20))
        .map { tagDrafts, noteDrafts, postDrafts in
            // Tag names are unique (as Swift compares strings), ids too.
            var names = Set<String>()
            var tagIDs = Set<UUID>()
            let tags = tagDrafts.compactMap { id, name -> ExampleModel.Tag? in
                guard names.insert(name).inserted, tagIDs.insert(id).inserted else { return nil }
                return ExampleModel.Tag(id: id, name: name)
            }
            func resolve(_ references: [Int]) -> [ExampleModel.Tag.ID] {
                tags.isEmpty ? [] : references.map { tags[$0 % tags.count].id }
            }
            var noteIDs = Set<UUID>()
            let notes = noteDrafts.compactMap { id, text, created, modified, archived, references -> Note? in
                guard noteIDs.insert(id).inserted else { return nil }
                return Note(id: id, text: text, createdAt: created, modifiedAt: modified, isArchived: archived, tagIDs: resolve(references))
            }
            var postIDs = Set<Int64>()
            let posts = postDrafts.compactMap { id, blog, kind, date, summary, body, count, references -> Post? in
                guard postIDs.insert(id).inserted else { return nil }
                return Post(id: id, blogName: blog, kind: kind, date: date, summary: summary, body: body, noteCount: count, tagIDs: resolve(references))
            }
            return RandomGraph(posts: posts, notes: notes, tags: tags)
        }

    /// Random edge values: dates from any finite bit pattern, random bytes, optionals either way.
    static let edgeValues = zip(
        Gen<UInt64>.bitSet.map { Double(bitPattern: $0) }.filter(\.isFinite).array(of: 1...4),
        Gen<UInt8>.value(in: 0...255).array(of: 0...48),
        text.optional,
        Gen.int64(in: .min ... .max).optional,
        Gen<UInt64>.bitSet.map { Double(bitPattern: $0) }.array(of: 0...6),
        text.array(of: 0...3),
        zip(text, text).array(of: 0...3),
        Gen.uint64(in: .min ... .max)
    ).map { dates, bytes, optionalText, optionalNumber, doubles, texts, pairs, unsigned in
        var value = EdgeValues.extremes
        value.id = "random"
        value.date = Date(timeIntervalSinceReferenceDate: dates[0])
        value.dates = dates.map { Date(timeIntervalSinceReferenceDate: $0) }
        value.data = Data(bytes)
        value.optionalText = optionalText
        value.optionalNumber = optionalNumber
        value.doubles = doubles
        value.texts = texts
        value.nested.names = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        value.nested.matrix = [bytes.map(Int.init), []]
        value.uint64Max = unsigned
        return value
    }
}

// MARK: - Edge values

/// An entity holding the values a file format is most likely to get wrong.
struct EdgeValues: Entity, CustomStringConvertible {
    struct Nested: Codable, Sendable {
        struct Inner: Codable, Sendable {
            var flag: Bool
            var label: String?
        }

        var values: [Double]
        var names: [String: String]
        var matrix: [[Int]]
        var byNumber: [Int: String]
        var inner: Inner?
        var inners: [Inner]
    }

    var id: String
    var date: Date
    var dates: [Date]
    var data: Data
    var emptyData: Data
    var optionalText: String?
    var optionalNumber: Int64?
    var missingText: String?
    var nested: Nested
    var int64Min: Int64
    var int64Max: Int64
    var uint64Max: UInt64
    var doubles: [Double]
    var floats: [Float]
    var text: String
    var texts: [String]

    /// The specials of `Double`: infinities, both zeros, NaN, subnormals and the extremes.
    static let specialDoubles: [Double] = [
        .infinity, -.infinity, -0.0, .nan, -.nan, .signalingNaN, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
        .leastNormalMagnitude, Double(bitPattern: 0x000F_FFFF_FFFF_FFFF), .greatestFiniteMagnitude,
        -.greatestFiniteMagnitude, .pi, 0.1, 1e-300, 123_456_789.123_456_79, .ulpOfOne,
    ]

    static let specialFloats: [Float] = [
        .infinity, -.infinity, -0.0, .nan, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1,
    ]

    /// Every extreme at once.
    static let extremes = EdgeValues(
        id: "extremes \u{0} é e\u{301} 😀",
        date: Date(timeIntervalSinceReferenceDate: Double(bitPattern: 0x41C7_6543_2109_8765)),
        dates: [
            Date(timeIntervalSinceReferenceDate: -0.0),
            Date(timeIntervalSinceReferenceDate: .leastNonzeroMagnitude),
            Date(timeIntervalSinceReferenceDate: .greatestFiniteMagnitude),
            Date(timeIntervalSinceReferenceDate: -.greatestFiniteMagnitude),
            Date(timeIntervalSinceReferenceDate: 800_000_000.000_000_1),
            Date(timeIntervalSinceReferenceDate: -978_307_200.000_000_1),
            Date(timeIntervalSinceReferenceDate: Double(bitPattern: 0x41C7_6543_2109_8001)),
        ],
        data: Data((0...255).map { UInt8($0) }),
        emptyData: Data(),
        optionalText: "",
        optionalNumber: 0,
        missingText: nil,
        nested: Nested(
            values: specialDoubles,
            names: ["": "empty key", "\u{0}": "nul key", "é": "composed", "😀": "\u{0}\u{1}\u{7F}", "quote\"back\\slash": "</script>"],
            matrix: [[], [Int.min, Int.max], [0]],
            byNumber: [Int.min: "min", -1: "minus one", 0: "", Int.max: "max"],
            inner: Nested.Inner(flag: true, label: nil),
            inners: [Nested.Inner(flag: false, label: "\u{10FFFF}"), Nested.Inner(flag: true, label: "")]),
        int64Min: .min,
        int64Max: .max,
        uint64Max: .max,
        doubles: specialDoubles,
        floats: specialFloats,
        text: "\u{0}NUL \u{1}\u{1F}\u{7F} \"quotes\" \\ / é e\u{301} ñ 中文 한국어 👩‍👩‍👧‍👦 🇨🇭 \u{200D}\u{200F}\u{202E} \u{FEFF} \u{FFFE}\u{FFFF} \u{10FFFF} \r\n\t",
        texts: ["", "\u{0}", "\u{0}\u{0}", " ", "\u{301}", "😀", "true", "null", "0", "-0", "1e999", "NaN", "Infinity", "$null "])

    /// Empty and absent everything.
    static let empties = EdgeValues(
        id: "",
        date: Date(timeIntervalSince1970: 0),
        dates: [],
        data: Data(),
        emptyData: Data(),
        optionalText: nil,
        optionalNumber: nil,
        missingText: nil,
        nested: Nested(values: [], names: [:], matrix: [], byNumber: [:], inner: nil, inners: []),
        int64Min: 0,
        int64Max: 0,
        uint64Max: 0,
        doubles: [],
        floats: [],
        text: "",
        texts: [])

    /// A non-optional string holding `"$null"`, the plist encoder's marker for `nil`: our own
    /// binary-plist reader gives it back (Foundation's decoder reads it as `nil` and fails).
    static let nullMarkerText: EdgeValues = {
        var value = empties
        value.id = "the string $null"
        value.text = "$null"
        return value
    }()

    /// Values Foundation's `PropertyListEncoder` does not give back, and ours does (see
    /// `SnapshotRoundTripTests.binaryPropertyListFormerTraps`); JSON holds them all.
    /// (`extremes` and `empties` avoid them: they hold `-0.0` but never `0.0`, and no string
    /// canonically equivalent to another.)
    static let binaryPropertyListTraps: [(name: String, value: EdgeValues)] = [
        ("the string $null in an optional", { var value = empties; value.optionalText = "$null"; return value }()),
        ("0.0 then -0.0", { var value = empties; value.doubles = [0.0, -0.0]; return value }()),
        ("float -0.0 then 0.0", { var value = empties; value.floats = [-0.0, 0.0]; return value }()),
        ("dates 0.0 and -0.0", { var value = empties; value.dates = [Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: -0.0)]; return value }()),
        ("composed and decomposed é", { var value = empties; value.texts = ["\u{E9}", "e\u{301}"]; return value }()),
        ("ohm sign and omega", { var value = empties; value.nested.names = ["\u{2126}": "\u{3A9}"]; return value }()),
    ].map { name, value in
        var value = value
        value.id = "trap: \(name)"
        return (name, value)
    }

    /// `values` with every `Double` NaN given one bit pattern, for Foundation's binary
    /// `PropertyListEncoder`: it traps ("Duplicate elements of type 'Reference' were found in a
    /// Set") on some documents holding NaNs of two bit patterns, depending on the process's
    /// hash seed. The pattern is one of those the document holds, picked by its numbers of
    /// values and doubles, so every NaN kind still goes through Foundation across random documents. Our
    /// own encoder and readers get all the patterns. (`Float` NaN, of which the values hold one
    /// pattern, never made it trap.)
    ///
    /// - Complexity: O(number of doubles).
    static func withOneNaNPattern(_ values: [EdgeValues]) -> [EdgeValues] {
        let doubles = values.flatMap { value in
            value.doubles + value.nested.values + ([value.date] + value.dates).map(\.timeIntervalSinceReferenceDate)
        }
        var patterns: [UInt64] = []
        for double in doubles where double.isNaN && !patterns.contains(double.bitPattern) {
            patterns.append(double.bitPattern)
        }
        guard patterns.count > 1 else { return values }
        let nan = Double(bitPattern: patterns[(doubles.count + values.count) % patterns.count])
        func one(_ double: Double) -> Double { double.isNaN ? nan : double }
        return values.map { value in
            var value = value
            value.doubles = value.doubles.map(one)
            value.nested.values = value.nested.values.map(one)
            value.date = Date(timeIntervalSinceReferenceDate: one(value.date.timeIntervalSinceReferenceDate))
            value.dates = value.dates.map { Date(timeIntervalSinceReferenceDate: one($0.timeIntervalSinceReferenceDate)) }
            return value
        }
    }

    var description: String { "EdgeValues(\(id.debugDescription))" }

    /// What differs between `self` and `other`, compared to the bit: doubles and dates by bit
    /// pattern (any NaN matches any NaN), strings by their Unicode scalars.
    func differences(from other: EdgeValues) -> [String] {
        var found: [String] = []
        func check(_ same: Bool, _ field: String, _ mine: Any, _ theirs: Any) {
            if !same { found.append("\(field): wrote \(mine), read \(theirs)") }
        }
        let kit = SnapshotTestKit.self
        func sameDoubles(_ a: [Double], _ b: [Double]) -> Bool {
            a.count == b.count && zip(a, b).allSatisfy(kit.sameBits)
        }
        func sameTexts(_ a: [String], _ b: [String]) -> Bool {
            a.count == b.count && zip(a, b).allSatisfy { kit.sameScalars($0, $1) }
        }
        func sameInner(_ a: Nested.Inner?, _ b: Nested.Inner?) -> Bool {
            a?.flag == b?.flag && kit.sameScalars(a?.label, b?.label) && (a == nil) == (b == nil)
        }
        check(kit.sameScalars(id, other.id), "id", id.debugDescription, other.id.debugDescription)
        check(kit.sameBits(date, other.date), "date", date.timeIntervalSinceReferenceDate.bitPattern, other.date.timeIntervalSinceReferenceDate.bitPattern)
        check(dates.count == other.dates.count && zip(dates, other.dates).allSatisfy(kit.sameBits), "dates",
              dates.map(\.timeIntervalSinceReferenceDate.bitPattern), other.dates.map(\.timeIntervalSinceReferenceDate.bitPattern))
        check(data == other.data, "data", data as NSData, other.data as NSData)
        check(emptyData == other.emptyData, "emptyData", emptyData.count, other.emptyData.count)
        check(kit.sameScalars(optionalText, other.optionalText), "optionalText", optionalText as Any, other.optionalText as Any)
        check(optionalNumber == other.optionalNumber, "optionalNumber", optionalNumber as Any, other.optionalNumber as Any)
        check(missingText == nil && other.missingText == nil, "missingText", missingText as Any, other.missingText as Any)
        check(sameDoubles(nested.values, other.nested.values), "nested.values", nested.values, other.nested.values)
        check(nested.names.count == other.nested.names.count && nested.names.allSatisfy { key, value in
            other.nested.names.contains { kit.sameScalars($0.key, key) && kit.sameScalars($0.value, value) }
        }, "nested.names", nested.names.map { kit.scalars($0.key) + " : " + kit.scalars($0.value) },
              other.nested.names.map { kit.scalars($0.key) + " : " + kit.scalars($0.value) })
        check(nested.matrix == other.nested.matrix, "nested.matrix", nested.matrix, other.nested.matrix)
        check(nested.byNumber == other.nested.byNumber, "nested.byNumber", nested.byNumber, other.nested.byNumber)
        check(sameInner(nested.inner, other.nested.inner), "nested.inner", nested.inner as Any, other.nested.inner as Any)
        check(nested.inners.count == other.nested.inners.count && zip(nested.inners, other.nested.inners).allSatisfy(sameInner),
              "nested.inners", nested.inners, other.nested.inners)
        check(int64Min == other.int64Min, "int64Min", int64Min, other.int64Min)
        check(int64Max == other.int64Max, "int64Max", int64Max, other.int64Max)
        check(uint64Max == other.uint64Max, "uint64Max", uint64Max, other.uint64Max)
        check(sameDoubles(doubles, other.doubles), "doubles", doubles.map(\.bitPattern), other.doubles.map(\.bitPattern))
        check(floats.count == other.floats.count && zip(floats, other.floats).allSatisfy(kit.sameBits), "floats",
              floats.map(\.bitPattern), other.floats.map(\.bitPattern))
        check(kit.sameScalars(text, other.text), "text", kit.scalars(text), kit.scalars(other.text))
        check(sameTexts(texts, other.texts), "texts", texts.map(kit.scalars), other.texts.map(kit.scalars))
        return found
    }
}
