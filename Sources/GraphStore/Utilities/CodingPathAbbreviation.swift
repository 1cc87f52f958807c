extension Array where Element == any CodingKey {
    /// The path as an error message shows it: whole when short; when long (a value nested
    /// hundreds of levels deep), its first 16 and last 8 keys around one naming how many were
    /// left out, so that the message stays readable.
    ///
    /// - Complexity: O(1) for a long path (O(count) to copy a short one).
    var abbreviatedForMessages: [any CodingKey] {
        guard count > 32 else { return self }
        return Array(prefix(16)) + [AnyKey("…(\(count - 24) more)…")] + Array(suffix(8))
    }

    /// The path as error messages write it: keys by name, indexes in brackets, joined by dots
    /// (`upsert.[3].tags`).
    var dotted: String {
        map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
