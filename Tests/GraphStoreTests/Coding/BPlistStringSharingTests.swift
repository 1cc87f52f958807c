import Foundation
import Testing
import GraphStoreTestSupport

@testable import GraphStore
@testable import GraphStoreCoding

/// The property-list writer's table of shared strings, keyed by their bytes as written, and
/// its UUID text.
@Suite struct BPlistStringSharingTests {
    @Test func uuidTextIsUUIDString() {
        var rng = SystemRandomNumberGenerator()
        var samples: [UUID] = [UUID(uuid: (0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0)), UUID(uuid: (255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255))]
        for _ in 0..<100_000 {
            var bytes = [UInt8](repeating: 0, count: 16)
            for i in 0..<16 { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
            samples.append(bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
        }
        var mismatches = 0
        for uuid in samples {
            var text = [UInt8](repeating: 0, count: 36)
            text.withUnsafeMutableBufferPointer { UUIDParsing.writeCanonical(uuid, at: $0.baseAddress!) }
            if String(decoding: text, as: UTF8.self) != uuid.uuidString { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    /// Random strings (ASCII, non-ASCII, `$null`, lengths around 14/15/64/65), many repeated,
    /// added through several tables joined with `append`, with strings added after the join:
    /// every reference reads back as the string it was given.
    @Test(arguments: 0..<20) func randomStringsThroughJoinedTables(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &+ 1)
        let alphabet: [String] = ["a", "b", "$", "n", "u", "l", "é", "e\u{301}", "\u{1F600}", "\u{0}", "z", "日"]
        func randomString() -> String {
            let pick = rng.next() % 10
            if pick == 0 { return "$null" }
            if pick == 1 { return String(repeating: "x", count: [14, 15, 16, 63, 64, 65][Int(rng.next() % 6)]) }
            if pick == 2 { return UUID().uuidString }
            let n = Int(rng.next() % 70)
            return (0..<n).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }.joined()
        }
        let pool = (0..<300).map { _ in randomString() }
        var values: [String] = []
        let main = BPlistObjectTable(expectedObjects: Int(rng.next() % 50))
        var refs: [UInt32] = []
        for _ in 0..<200 { let s = pool[Int(rng.next() % 300)]; values.append(s); refs.append(main.string(s)) }
        for _ in 0..<3 {
            let part = BPlistObjectTable(expectedObjects: Int(rng.next() % 5000))
            var partRefs: [UInt32] = [], partValues: [String] = []
            for _ in 0..<2000 {
                let s = pool[Int(rng.next() % 300)]
                partValues.append(s)
                partRefs.append(rng.next() % 7 == 0 ? part.null : part.string(s))
                if partRefs.last! == part.null { partValues[partValues.count - 1] = "\u{0}NULL" }
                if rng.next() % 11 == 0 { _ = part.integer(Int64(rng.next() % 5)) }
            }
            let base = main.append(part)
            values += partValues; refs += partRefs.map { $0 + base }
            for _ in 0..<200 { let s = pool[Int(rng.next() % 300)]; values.append(s); refs.append(main.string(s)) }
        }
        let top = main.array(refs)
        let data = main.serialized(top: top)
        let plist = try PropertyListSerialization.propertyList(from: data, format: nil) as! [Any]
        #expect(plist.count == values.count)
        var bad = 0
        for (read, written) in zip(plist, values) {
            let s = read as! String
            if written == "\u{0}NULL" { if s != "$null" { bad += 1 }; continue }
            if !s.utf8.elementsEqual(written.utf8) { bad += 1 }
        }
        #expect(bad == 0)
    }
}
