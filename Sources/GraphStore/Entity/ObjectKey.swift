/// A type-erased, hashable, sendable identifier: the core's key for any entity's id.
///
/// Two keys are equal only when their wrapped values have the same type and are equal, so an
/// `Int` id `1` and an `Int64` id `1` are different keys.
package struct ObjectKey: Hashable, Sendable, CustomStringConvertible {
    package let base: any Hashable & Sendable

    package init(_ base: some Hashable & Sendable) {
        if let key = base as? ObjectKey {
            self = key
        } else {
            self.base = base
        }
    }

    package static func == (lhs: ObjectKey, rhs: ObjectKey) -> Bool {
        func equals<T: Hashable>(_ value: T, _ other: any Hashable & Sendable) -> Bool {
            guard let other = other as? T else { return false }
            return value == other
        }
        return equals(lhs.base, rhs.base)
    }

    package func hash(into hasher: inout Hasher) {
        base.hash(into: &hasher)
    }

    /// The wrapped value as `T`, or nil when it has another type.
    package func value<T>(as type: T.Type) -> T? {
        base as? T
    }

    package var description: String {
        String(describing: base)
    }
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
}

extension Optional: OptionalValue {
    var isNil: Bool { self == nil }
}
