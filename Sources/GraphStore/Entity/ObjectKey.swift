import Foundation

/// A type-erased, hashable, sendable identifier: the core's key for any entity's id.
///
/// Two keys are equal only when their wrapped values have the same type and are equal, so an
/// `Int` id `1` and an `Int64` id `1` are different keys. The common id types (`UUID`, `Int`,
/// `Int64`, `Int32`, `String`) are stored unboxed, so hashing and comparing them needs no
/// dynamic cast.
@usableFromInline
package struct ObjectKey: Hashable, Sendable, CustomStringConvertible {
    private enum Storage: Hashable, Sendable {
        case uuid(UUID)
        case int(Int)
        case int64(Int64)
        case int32(Int32)
        case string(String)
        case other(Boxed)
    }

    private let storage: Storage

    @usableFromInline
    package init<T: Hashable & Sendable>(_ value: T) {
        // Metatype comparisons, not dynamic casts: this runs for every id in every change, in
        // generic code that is not specialized for the caller's id type.
        if T.self == UUID.self {
            storage = .uuid(unsafeBitCast(value, to: UUID.self))
        } else if T.self == Int64.self {
            storage = .int64(unsafeBitCast(value, to: Int64.self))
        } else if T.self == Int.self {
            storage = .int(unsafeBitCast(value, to: Int.self))
        } else if T.self == Int32.self {
            storage = .int32(unsafeBitCast(value, to: Int32.self))
        } else if T.self == String.self {
            storage = .string(unsafeBitCast(value, to: String.self))
        } else if T.self == ObjectKey.self {
            storage = unsafeBitCast(value, to: ObjectKey.self).storage
        } else {
            storage = .other(Boxed(value))
        }
    }

    /// Hashes the common id types with one multiply–xor–shift mix instead of SipHash.
    ///
    /// Every id of every change is hashed several times on its way into the store (the
    /// context's pending map, the persistent table, the change lists), so SipHash's fixed cost
    /// was a large share of an insert. `Dictionary`, `Set`, the ordered collections and the hash
    /// trees all hash through this requirement. The mix is keyed with a per-process random
    /// value, as Swift's own hashing is, so hash values differ between runs and cannot be
    /// chosen from outside; `String` and other ids keep `Hasher`. `hash(into:)` is unchanged
    /// (synthesized), so keys nested in other hashable values hash as before.
    @usableFromInline
    package func _rawHashValue(seed: Int) -> Int {
        let salt = objectKeyHashSalt ^ UInt64(bitPattern: Int64(seed)) &* 0x9E37_79B9_7F4A_7C15
        switch storage {
        case .int(let value): return mixedHash(UInt64(bitPattern: Int64(value)) ^ salt ^ 0x01)
        case .int64(let value): return mixedHash(UInt64(bitPattern: value) ^ salt ^ 0x02)
        case .int32(let value): return mixedHash(UInt64(UInt32(bitPattern: value)) ^ salt ^ 0x03)
        case .uuid(let value):
            let (high, low) = withUnsafeBytes(of: value.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
            return mixedHash(UInt64(bitPattern: Int64(mixedHash(high ^ salt ^ 0x04))) ^ low)
        case .string, .other:
            var hasher = Hasher()
            hasher.combine(seed)
            hash(into: &hasher)
            return hasher.finalize()
        }
    }

    /// Three-way order of two ids of the same common type (numbers by value, UUIDs by their
    /// bytes, strings by `<`), read from the storage without boxing; `nil` for any other pair.
    /// Sorted indexes break ties between equal values with this on every comparison.
    func unboxedOrder(_ other: ObjectKey) -> Int? {
        switch storage {
        case .int64(let x):
            if case .int64(let y) = other.storage { return x < y ? -1 : (x == y ? 0 : 1) }
        case .int(let x):
            if case .int(let y) = other.storage { return x < y ? -1 : (x == y ? 0 : 1) }
        case .int32(let x):
            if case .int32(let y) = other.storage { return x < y ? -1 : (x == y ? 0 : 1) }
        case .uuid(let x):
            if case .uuid(let y) = other.storage {
                let order = withUnsafeBytes(of: x.uuid) { p in withUnsafeBytes(of: y.uuid) { q in memcmp(p.baseAddress!, q.baseAddress!, 16) } }
                return order < 0 ? -1 : (order == 0 ? 0 : 1)
            }
        case .string(let x):
            if case .string(let y) = other.storage { return x == y ? 0 : (x < y ? -1 : 1) }
        case .other:
            return nil
        }
        return nil
    }

    /// The id as two words whose unsigned lexicographic order is ``unboxedOrder(_:)``'s order
    /// among ids of the same kind, and that kind; `nil` for strings and other types. Lets a
    /// sorted index be built by sorting plain integers (see ``IndexSortKeys``).
    ///
    /// - Complexity: O(1).
    func orderWords() -> (kind: UInt8, high: UInt64, low: UInt64)? {
        let signBit: UInt64 = 1 << 63
        switch storage {
        case .int64(let value): return (1, UInt64(bitPattern: value) ^ signBit, 0)
        case .int(let value): return (2, UInt64(bitPattern: Int64(value)) ^ signBit, 0)
        case .int32(let value): return (3, UInt64(bitPattern: Int64(value)) ^ signBit, 0)
        case .uuid(let value):
            // memcmp order of the 16 bytes: big-endian words.
            let (high, low) = withUnsafeBytes(of: value.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
            return (4, UInt64(bigEndian: high), UInt64(bigEndian: low))
        case .string, .other: return nil
        }
    }

    /// The wrapped value.
    package var base: any Hashable & Sendable {
        switch storage {
        case .uuid(let value): value
        case .int(let value): value
        case .int64(let value): value
        case .int32(let value): value
        case .string(let value): value
        case .other(let boxed): boxed.base
        }
    }

    /// The wrapped value as `T`, or nil when it has another type.
    package func value<T>(as type: T.Type) -> T? {
        switch storage {
        case .uuid(let value): value as? T
        case .int(let value): value as? T
        case .int64(let value): value as? T
        case .int32(let value): value as? T
        case .string(let value): value as? T
        case .other(let boxed): boxed.base as? T
        }
    }

    @usableFromInline
    package var description: String {
        switch storage {
        case .uuid(let value): value.uuidString
        case .string(let value): value
        default:
            // A unique value read through an optional property: its value, not `Optional(…)`.
            if let optional = base as? any OptionalValue, let wrapped = optional.wrapped { String(describing: wrapped) } else { String(describing: base) }
        }
    }

    /// Any other hashable id, compared by type and value. A class, so that the key stays small
    /// (one pointer) and cheap to copy.
    private final class Boxed: Hashable, Sendable {
        let base: any Hashable & Sendable

        init(_ base: some Hashable & Sendable) {
            self.base = base
        }

        static func == (lhs: Boxed, rhs: Boxed) -> Bool {
            func equals<T: Hashable>(_ value: T, _ other: any Hashable & Sendable) -> Bool {
                guard let other = other as? T else { return false }
                return value == other
            }
            return equals(lhs.base, rhs.base)
        }

        func hash(into hasher: inout Hasher) {
            base.hash(into: &hasher)
        }
    }
}

/// The key of ``ObjectKey``'s hash mix: random per process, like `Hasher`'s seed, and fixed
/// when `SWIFT_DETERMINISTIC_HASHING` is set, as `Hasher`'s is.
private let objectKeyHashSalt: UInt64 =
    ProcessInfo.processInfo.environment["SWIFT_DETERMINISTIC_HASHING"] == nil ? UInt64.random(in: .min ... .max) : 0x5EED

/// The 64-bit finalizer of MurmurHash3: every input bit affects every output bit, so the
/// hash trees, which use a hash five bits at a time from the low end, see well-spread bits.
@inline(__always)
private func mixedHash(_ value: UInt64) -> Int {
    var x = value
    x ^= x >> 33
    x &*= 0xFF51_AFD7_ED55_8CCD
    x ^= x >> 33
    x &*= 0xC4CE_B9FE_1A85_EC53
    x ^= x >> 33
    return Int(bitPattern: UInt(x))
}

/// The values of a compound unique constraint, as one hashable key.
struct CompoundKey: Hashable, Sendable, CustomStringConvertible {
    let parts: [ObjectKey]

    var description: String {
        "(" + parts.map(\.description).joined(separator: ", ") + ")"
    }
}

/// Lets generic code ask whether a value of unknown type is `nil`.
protocol OptionalValue {
    var isNil: Bool { get }
    /// The wrapped value, or `nil`.
    var wrapped: Any? { get }
}

extension Optional: OptionalValue {
    var isNil: Bool { self == nil }
    var wrapped: Any? { self.map { $0 as Any } }
}
