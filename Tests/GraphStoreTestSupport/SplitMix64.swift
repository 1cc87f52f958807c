import Foundation

/// A small, fast, seeded random number generator (SplitMix64), so that a test run with random
/// input replays exactly from its seed.
///
/// ```swift
/// var random = SplitMix64(seed: 7)
/// let id = Int.random(in: 0..<120, using: &random)
/// let bytes = SplitMix64.bytes(4096)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` pseudo-random bytes from `seed`: the same bytes on every run.
    public static func bytes(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
        var random = SplitMix64(seed: seed)
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for index in words.indices { words[index] = random.next() }
        return words.withUnsafeBytes { Data($0.prefix(count)) }
    }
}
