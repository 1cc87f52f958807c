import Foundation

/// The places a field-types path (``SnapshotHeaderV1/fieldTypes``) names in an object.
///
/// A path is keys joined by `.`; a key followed by `[]` names each element of the array there,
/// and by `{}` each value of the dictionary there, whatever its keys (`prices{}`: every price;
/// `grid[][]`: the elements of each element; `tags{}[]`: the elements of each value).
extension SnapshotValue {
    /// The components of a field-types path: its keys (split on `.`), the first level of a key
    /// kept with it, each further level its own `[]` or `{}` (`grid[][]` is `grid[]`, then `[]`).
    ///
    /// - Complexity: O(length of the path).
    static func pathComponents(_ path: String) -> ArraySlice<String> {
        var components: [String] = []
        for part in path.split(separator: ".", omittingEmptySubsequences: false) {
            var key = Substring(part)
            var levels: [String] = []
            while key.hasSuffix("[]") || key.hasSuffix("{}") {
                levels.append(String(key.suffix(2)))
                key = key.dropLast(2)
            }
            guard let first = levels.popLast() else {
                components.append(String(part))
                continue
            }
            components.append(String(key) + first)
            components += levels.reversed()
        }
        return components[...]
    }

    /// This value with `transform` applied to each value at `path` (components as
    /// ``pathComponents(_:)`` makes them; empty for this value itself), or `nil` when nothing
    /// is there or `transform` returned `nil` (no change) for each.
    ///
    /// - Throws: What `transform` throws.
    /// - Complexity: O(the values on the path), plus a copy of each array or dictionary on it
    ///   that changes.
    func replacing(at path: ArraySlice<String>, _ transform: (SnapshotValue) throws -> SnapshotValue?) rethrows -> SnapshotValue? {
        guard let first = path.first else { return try transform(self) }
        let level: PathLevel? = first.hasSuffix("[]") ? .elements : first.hasSuffix("{}") ? .values : nil
        let key = level == nil ? first : String(first.dropLast(2))
        guard !key.isEmpty else { return try replacing(level, at: path.dropFirst(), transform) }
        guard case .object(var fields) = self, let inner = fields[key],
              let changed = try inner.replacing(level, at: path.dropFirst(), transform)
        else { return nil }
        fields[key] = changed
        return .object(fields)
    }

    /// A path component's level below its key: each element of an array, or each value of a
    /// dictionary.
    private enum PathLevel { case elements, values }

    private func replacing(
        _ level: PathLevel?, at path: ArraySlice<String>, _ transform: (SnapshotValue) throws -> SnapshotValue?
    ) rethrows -> SnapshotValue? {
        switch level {
        case nil:
            return try replacing(at: path, transform)
        case .elements:
            guard case .array(var elements) = self else { return nil }
            var changed = false
            for position in elements.indices {
                guard let replaced = try elements[position].replacing(at: path, transform) else { continue }
                elements[position] = replaced
                changed = true
            }
            return changed ? .array(elements) : nil
        case .values:
            guard case .object(let fields) = self else { return nil }
            var replacedFields: [String: SnapshotValue]?
            for (key, value) in fields {
                guard let replaced = try value.replacing(at: path, transform) else { continue }
                if replacedFields == nil { replacedFields = fields }
                replacedFields?[key] = replaced
            }
            return replacedFields.map(SnapshotValue.object)
        }
    }
}
