import ExampleModel
import Foundation
import Testing

@testable import GraphStore
@testable import GraphStoreCoding

/// `FastJSONEncoder` writes what `JSONEncoder` writes with the snapshot's strategies (compared
/// with members sorted: numbers, escapes and structure byte for byte), through every kind of
/// container, and fails with the same errors at the same coding paths; its documented
/// differences are checked too.
@Suite struct FastJSONEncoderTests {
    typealias Kit = FastJSONEncoderTestKit

    // MARK: - Values

    struct Empty: Codable {
        init() {}
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws {}
    }

    enum Shape: Codable {
        case circle(radius: Double)
        case square(Double, label: String?)
        case none
    }

    struct Wrapper: Codable {
        var inner: Inner
        init(_ inner: Inner) { self.inner = inner }
        init(from decoder: any Decoder) throws { inner = try decoder.singleValueContainer().decode(Inner.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(inner)
        }
    }

    struct Inner: Codable {
        var flag: Bool
        var label: String?
    }

    struct Scalars: Codable {
        var int8 = [Int8.min, Int8.max], int16 = [Int16.min, Int16.max], int32 = [Int32.min, Int32.max]
        var int64 = [Int64.min, Int64.max, 0, -1], int = [Int.min, Int.max]
        var uint8 = [UInt8.max], uint16 = [UInt16.max], uint32 = [UInt32.max], uint64 = [UInt64.max, 0], uint = [UInt.max]
        var int128 = [Int128.min, Int128.max], uint128 = [UInt128.max]
        var doubles: [Double] = FastJSONDecoderTests.edgeDoubles + EdgeValues.specialDoubles
        var floats: [Float] = EdgeValues.specialFloats + [.ulpOfOne, 16_777_216, Float(bitPattern: 1), Float(bitPattern: 0x007F_FFFF), -3.4028235e38]
        var singleDouble = -0.0, singleFloat = Float.nan, bools = [true, false]
        var strings: [String] = FastJSONDecoderTests.edgeStrings + [String(repeating: "é/\"\\\u{1}", count: 50)]
        var decimals: [Decimal] = [Decimal(string: "3.14")!, Decimal(string: "-0.000000000000000000000000000001")!, Decimal(Int64.max), .greatestFiniteMagnitude]
        // Without a base: one with a base is the deliberate difference (`RelativeURLCodingTests`).
        var urls = [URL(string: "https://example.com/a?b=c#d")!, URL(string: "file:///tmp/x%20y")!, URL(string: "rel")!]
        var datas = [Data(), Data([0]), Data([0, 1]), Data((0...255).map { UInt8($0) }), Data(repeating: 0xFF, count: 100)]
        var dates = [Date(timeIntervalSinceReferenceDate: 785_000_000.123_456_7), .distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: .infinity)]
        var uuids = [UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xFF)), UUID()]
    }

    struct Structures: Codable {
        var empty = Empty(), empties = [Empty(), Empty()], optionalEmpty: Empty? = Empty()
        var shapes: [Shape] = [.circle(radius: 2), .square(-0.0, label: nil), .square(1, label: "x"), .none]
        var wrapped = Wrapper(Inner(flag: true, label: nil)), wrappers = [Wrapper(Inner(flag: false, label: "/"))]
        var optionals: [Int?] = [nil, 1, nil], missing: String? = nil, present: String? = "here", nestedOptional: Inner?? = .some(nil)
        var matrix: [[[Int]]] = [[], [[]], [[1, 2], [3]]]
        var byName: [String: [Int]] = ["": [], "a/b": [1], "é": [2], "\u{0}": []]
        var byNumber: [Int: String] = [Int.min: "min", 0: "", -1: "minus one"]
        var byUUID: [UUID: Int] = [UUID(): 1, UUID(): 2]
        var kinds: [Post.Kind] = Post.Kind.allCases
        var sets: Set<String> = ["a", "b"]
    }

    @Test func scalarsAndFoundationTypesAsJSONEncoderWritesThem() {
        Kit.expectSame(Scalars())
    }

    @Test func structuresAsJSONEncoderWritesThem() {
        Kit.expectSame(Structures())
    }

    @Test(arguments: [0.0, -0.0, 1, 0.1, 1e-7, 1e21, 1e22, 1e23, 123_456_789_012_345_680, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .nan, .infinity, -.infinity, 2.5e-308])
    func topLevelDoubles(value: Double) {
        Kit.expectSame(value)
        Kit.expectSame(Float(value))
        Kit.expectSame(Date(timeIntervalSinceReferenceDate: value))
    }

    @Test func topLevelFragmentsAndExampleModel() throws {
        Kit.expectSame("text with / and \"")
        Kit.expectSame(Int64.min)
        Kit.expectSame(true)
        Kit.expectSame(Optional<Int>.none)
        Kit.expectSame(UUID())
        Kit.expectSame(Data([1, 2, 3]))
        Kit.expectSame(Post(id: 1, blogName: "b/log", kind: .chat, date: .distantPast, summary: "s\n", body: nil, noteCount: -3, tagIDs: [UUID(), UUID()]))
        Kit.expectSame(Note(text: "\u{1F}", createdAt: Date(timeIntervalSinceReferenceDate: -0.0)))
        Kit.expectSame([EdgeValues.extremes, .empties])
    }

    /// An object held as `any Entity` is opened for the call: the same text as the concrete value.
    @Test func existentialEntities() throws {
        let post = Post(id: 9, blogName: "x", date: Date(timeIntervalSinceReferenceDate: 0.5), summary: "y", body: "z", tagIDs: [UUID()])
        let objects: [any Entity] = [post, EdgeValues.extremes]
        #expect(try FastJSONEncoder.encode(objects[0]) == FastJSONEncoder.encode(post))
        var buffer = FastJSONBuffer()
        for object in objects {
            try FastJSONEncoder.encode(object, into: &buffer)
            buffer.append(UInt8(ascii: "\n"))
        }
        let lines = buffer.data.split(separator: UInt8(ascii: "\n")).map { Data($0) }
        #expect(lines.count == 2)
        #expect(try Kit.decode(Post.self, lines[0]) == post)
        #expect(try Kit.decode(EdgeValues.self, lines[1]).differences(from: .extremes) == [])
    }

    // MARK: - Containers

    class Base: Codable {
        var base = 1
        init() {}
        required init(from decoder: any Decoder) throws {}
    }

    /// Superclass through `superEncoder()`, as Swift's documentation suggests.
    final class ViaSuperEncoder: Base {
        var own = "own"
        enum Keys: CodingKey { case own }
        override init() { super.init() }
        required init(from decoder: any Decoder) throws { try super.init(from: decoder) }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(own, forKey: .own)
            try super.encode(to: container.superEncoder())
        }
    }

    /// Superclass into the same encoder: two keyed containers of one value share one object.
    final class SharingTheEncoder: Base {
        var own = [1.5]
        enum Keys: CodingKey { case own }
        override init() { super.init() }
        required init(from decoder: any Decoder) throws { try super.init(from: decoder) }
        override func encode(to encoder: any Encoder) throws {
            try super.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(own, forKey: .own)
        }
    }

    struct AllContainers: Encodable {
        enum Keys: String, CodingKey { case a, b, c, d, e, f, g }
        func encode(to encoder: any Encoder) throws {
            var root = encoder.container(keyedBy: Keys.self)
            try root.encodeNil(forKey: .a)
            _ = root.superEncoder()  // never used: {}
            var nested = root.nestedContainer(keyedBy: Keys.self, forKey: .b)
            try nested.encode(1, forKey: .a)
            var deeper = nested.nestedUnkeyedContainer(forKey: .b)
            try deeper.encode("x")
            var inArray = deeper.nestedContainer(keyedBy: Keys.self)
            try inArray.encode(Empty(), forKey: .c)
            try deeper.encodeNil()
            _ = deeper.nestedUnkeyedContainer()
            var single = deeper.superEncoder().singleValueContainer()
            try single.encode(Wrapper(Inner(flag: true, label: "in")))
            try nested.encode(true, forKey: .c)  // back in an outer container: closes the inner ones
            let keyedSuper = root.superEncoder(forKey: .c)
            var superArray = keyedSuper.unkeyedContainer()
            try superArray.encode(UInt8(7))
            try root.encodeIfPresent(Optional<Int>.none, forKey: .d)
            try root.encodeIfPresent(Optional<Int>.some(4), forKey: .e)
            var second = encoder.container(keyedBy: Keys.self)  // the same object
            try second.encode([UUID(uuid: UUID.zero)], forKey: .f)
            try root.encode(Float.infinity, forKey: .g)
        }
    }

    @Test func containersOfEveryKindAsJSONEncoderWritesThem() throws {
        Kit.expectSame(AllContainers())
        Kit.expectSame(ViaSuperEncoder())
        Kit.expectSame(SharingTheEncoder())
        Kit.expectSame([ViaSuperEncoder(), ViaSuperEncoder()])
        // And the order is the encoding order.
        let text = String(decoding: try FastJSONEncoder.encode(AllContainers()), as: UTF8.self)
        #expect(text.hasPrefix(#"{"a":null,"super":{},"b":{"a":1,"b":["x",{"c":{}},null,[],{"flag":true,"label":"in"}],"c":true},"c":[7],"e":4,"#))
    }

    /// A value that throws leaves no trace in its container, and the encoding can go on.
    struct CatchingEncoder: Encodable {
        enum Keys: CodingKey { case before, bad, after, list }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1, forKey: .before)
            #expect(throws: EncodingError.self) { try container.encode(Throwing(depth: 2), forKey: .bad) }
            #expect(throws: EncodingError.self) { try container.encode(Decimal.nan, forKey: .bad) }
            try container.encode(2, forKey: .after)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try list.encode("a")
            #expect(throws: EncodingError.self) { try list.encode(Throwing(depth: 1)) }
            #expect(list.count == 1)
            try list.encode("b")
        }
    }

    @Test func aThrowingValueLeavesNoTrace() throws {
        let text = String(decoding: try FastJSONEncoder.encode(CatchingEncoder()), as: UTF8.self)
        #expect(text == #"{"before":1,"after":2,"list":["a","b"]}"#)
    }

    // MARK: - Errors

    /// Throws `invalidValue` at its encoder's coding path after writing `depth` levels inside.
    struct Throwing: Encodable {
        var depth: Int
        enum Keys: CodingKey { case inner, more }
        func encode(to encoder: any Encoder) throws {
            guard depth > 0 else {
                throw EncodingError.invalidValue(depth, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "thrown at the bottom"))
            }
            if depth % 2 == 0 {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(depth, forKey: .more)
                try container.encode(Throwing(depth: depth - 1), forKey: .inner)
            } else {
                var container = encoder.unkeyedContainer()
                try container.encode(depth)
                try container.encode(["more": [Throwing(depth: depth - 1)]])
            }
        }
    }

    struct ThrowingPlaces: Encodable {
        var place: Int
        enum Keys: CodingKey { case a, b }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            switch place {
            case 0: try container.encode(Throwing(depth: 5), forKey: .a)
            case 1: try Throwing(depth: 3).encode(to: container.superEncoder())
            case 2: try Throwing(depth: 2).encode(to: container.superEncoder(forKey: .b))
            case 3:
                var single = container.superEncoder(forKey: .a).singleValueContainer()
                try single.encode(Throwing(depth: 4))
            case 4:
                var list = container.nestedUnkeyedContainer(forKey: .b)
                try list.encode(1)
                try Throwing(depth: 1).encode(to: list.superEncoder())
            case 5: try container.encode(["k": [Decimal.nan]], forKey: .a)
            case 6:
                var list = container.nestedUnkeyedContainer(forKey: .b)
                try list.encode(1)
                var nested = list.nestedContainer(keyedBy: Keys.self)
                try nested.encode(Throwing(depth: 0), forKey: .a)
            case 7:
                var list = container.nestedUnkeyedContainer(forKey: .b)
                var nested = list.nestedUnkeyedContainer()
                try nested.encode(Throwing(depth: 0))
            default: try container.encode(Wrapper(Inner(flag: true, label: nil)), forKey: .a)
            }
        }
    }

    @Test(arguments: 0..<9)
    func errorsCarryJSONEncodersCodingPaths(place: Int) {
        let bottom = "thrown at the bottom"
        switch place {
        case 4:
            // Documented differences: JSONEncoder's paths lose components inside an unkeyed
            // container's `superEncoder()` (`[Index 1/more/Index 0]`), `nestedContainer`
            // (`[b/a]`) and `nestedUnkeyedContainer()`; ours are complete.
            #expect(Kit.fast(ThrowingPlaces(place: place)) == .error("invalidValue(Int) at [b#-/Index 1#1/Index 1#1/more#-/Index 0#0]: \(bottom)"))
        case 6:
            #expect(Kit.fast(ThrowingPlaces(place: place)) == .error("invalidValue(Int) at [b#-/Index 1#1/a#-]: \(bottom)"))
        case 7:
            // JSONEncoder: `[Index 0]`.
            #expect(Kit.fast(ThrowingPlaces(place: place)) == .error("invalidValue(Int) at [b#-/Index 0#0/Index 0#0]: \(bottom)"))
        case 5:
            // JSONEncoder writes a NaN Decimal as the text `NaN` (a documented difference).
            #expect(Kit.fast(ThrowingPlaces(place: place)) == .error("invalidValue(Decimal) at [a#-/k#-/Index 0#0]: Unable to encode Decimal.nan directly in JSON."))
        default:
            Kit.expectSame(ThrowingPlaces(place: place))
            Kit.expectSame([[ThrowingPlaces(place: place)]])
        }
    }

    @Test func aValueThatEncodesNothingAtTheTopIsAnError() {
        Kit.expectSame(Empty())
        #expect(Kit.fast(Empty()) == .error("invalidValue(Empty) at []: Top-level Empty did not encode any values."))
        Kit.expectSame([Empty()])
    }

    /// An error leaves the buffer as it was; what is written before it stays.
    @Test func aFailedEncodingLeavesTheBufferAsItWas() throws {
        var buffer = FastJSONBuffer()
        try FastJSONEncoder.encode([1, 2], into: &buffer)
        let copy = buffer
        #expect(throws: EncodingError.self) { try FastJSONEncoder.encode(Throwing(depth: 6), into: &buffer) }
        #expect(buffer.bytes == Array("[1,2]".utf8))
        try FastJSONEncoder.encode("x", into: &buffer)
        #expect(buffer.bytes == Array("[1,2]\"x\"".utf8))
        #expect(copy.bytes == Array("[1,2]".utf8), "copies share bytes until one changes")
    }

    // MARK: - Documented differences

    /// Writing through a container after a value outside it was written: `JSONEncoder` allows
    /// it, this encoder refuses it at the container's path (and the snapshot codec then falls
    /// back to `JSONEncoder`).
    struct OutOfOrder: Encodable {
        var late: Int
        enum Keys: CodingKey { case a, b, c }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            switch late {
            case 0:
                var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .a)
                try container.encode(1, forKey: .b)
                try nested.encode(2, forKey: .c)
            case 1:
                let superEncoder = container.superEncoder(forKey: .a)
                try container.encode(1, forKey: .b)
                var single = superEncoder.singleValueContainer()
                try single.encode("late")
            default:
                var nested = container.nestedUnkeyedContainer(forKey: .a)
                try container.encode(1, forKey: .b)
                _ = nested.nestedContainer(keyedBy: Keys.self)  // cannot throw: reported at the end
            }
        }
    }

    @Test func containersUsedOutOfOrderAreRefused() {
        let message = "A container was used after a value outside it was written; FastJSONEncoder writes values in the order they are encoded, containers nested."
        #expect(Kit.fast(OutOfOrder(late: 0)) == .error("invalidValue(Int) at [a#-/c#-]: \(message)"))
        #expect(Kit.fast(OutOfOrder(late: 1)) == .error("invalidValue(String) at [a#-]: \(message)"))
        #expect(Kit.fast(OutOfOrder(late: 2)) == .error("invalidValue(()) at [a#-/Index 0#0]: \(message)"))
        for late in 0..<3 {
            guard case .text = Kit.reference(OutOfOrder(late: late)) else {
                Issue.record("JSONEncoder refuses OutOfOrder(\(late))")
                continue
            }
        }
    }

    /// A key encoded twice is written twice (`JSONEncoder` keeps the last value); readers
    /// keep the first.
    @Test func aKeyEncodedTwiceIsWrittenTwice() throws {
        struct Twice: Encodable {
            enum Keys: CodingKey { case a }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(1, forKey: .a)
                try container.encode(2, forKey: .a)
            }
        }
        #expect(String(decoding: try FastJSONEncoder.encode(Twice()), as: UTF8.self) == #"{"a":1,"a":2}"#)
    }

    // MARK: - Buffer

    @Test func bufferAppendsReusesAndHandsOverItsBytes() throws {
        var buffer = FastJSONBuffer(capacity: 4)
        #expect(buffer.isEmpty)
        try FastJSONEncoder.encode(["a": 1], into: &buffer)
        buffer.append(UInt8(ascii: " "))
        try FastJSONEncoder.encode(String(repeating: "long/", count: 1_000), into: &buffer)
        #expect(buffer.count == 7 + 1 + 6_002)
        var other = FastJSONBuffer()
        other.append(contentsOf: buffer)
        #expect(other.bytes == buffer.bytes)
        buffer.removeAll()
        #expect(buffer.isEmpty && !other.isEmpty)
        try FastJSONEncoder.encode(false, into: &buffer)
        let shared = buffer
        let data = buffer.takeData()
        #expect(data == Data("false".utf8) && shared.data == data && buffer.isEmpty)
        var unique = FastJSONBuffer()
        try FastJSONEncoder.encode([1.5], into: &unique)
        #expect(unique.takeData() == Data("[1.5]".utf8) && unique.isEmpty)
        #expect(try FastJSONEncoder.encode(Optional<String>.none) == Data("null".utf8))
    }
}

extension UUID {
    static let zero: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}
