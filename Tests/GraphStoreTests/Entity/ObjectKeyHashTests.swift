import Foundation
import GraphStore
import Testing

/// `ObjectKey` hashes the common id types with its own mix instead of SipHash: equal keys must
/// hash equally under every seed, and the low bits, which pick a hash trie's root slot, must be
/// spread for the sequential ids apps use most.
@Suite struct ObjectKeyHashTests {
    static let keys: [ObjectKey] = [
        ObjectKey(7), ObjectKey(Int64(7)), ObjectKey(Int32(7)), ObjectKey("7"), ObjectKey(UInt8(7)),
        ObjectKey(UUID(uuidString: "00000000-0000-0000-0000-000000000007")!), ObjectKey(-1), ObjectKey(Int.min),
    ]

    @Test func equalKeysHashEquallyUnderEverySeed() {
        for key in Self.keys {
            // A key rebuilt from its value, and one wrapped twice, are the same key.
            let copies = [ObjectKey(key), rebuilt(key)]
            for copy in copies {
                #expect(copy == key)
                for seed in [0, 1, -1, 42, Int.max] {
                    #expect(copy._rawHashValue(seed: seed) == key._rawHashValue(seed: seed), "\(key) seed \(seed)")
                }
                #expect(copy.hashValue == key.hashValue)
                #expect(Set([copy, key]).count == 1)
            }
        }
    }

    @Test func idsOfDifferentTypesStayDistinctKeys() {
        // Same number, different types: different keys, and (with overwhelming likelihood)
        // different hashes, so they do not pile up in one slot.
        #expect(Set(Self.keys).count == Self.keys.count)
        let hashes = Set(Self.keys.prefix(3).map { $0._rawHashValue(seed: 0) })
        #expect(hashes.count == 3)
    }

    @Test func sequentialIDsSpreadOverTheTrieRootSlots() {
        for make in [{ ObjectKey($0) }, { ObjectKey(Int64($0)) }, { ObjectKey(Int32($0)) }] as [(Int) -> ObjectKey] {
            var slots = Array(repeating: 0, count: 32)
            for id in 0..<32_768 { slots[make(id)._rawHashValue(seed: 0) & 31] += 1 }
            // 1,024 expected per slot, standard deviation 31: the bounds are 7 deviations out.
            #expect(slots.allSatisfy { (800...1_250).contains($0) }, "\(slots)")
        }
    }

    private func rebuilt(_ key: ObjectKey) -> ObjectKey {
        switch key.base {
        case let value as Int: ObjectKey(value)
        case let value as Int64: ObjectKey(value)
        case let value as Int32: ObjectKey(value)
        case let value as String: ObjectKey(value)
        case let value as UInt8: ObjectKey(value)
        case let value as UUID: ObjectKey(value)
        default: key
        }
    }
}
