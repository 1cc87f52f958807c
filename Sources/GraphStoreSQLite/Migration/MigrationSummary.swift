import Foundation

/// What a finished ``Migration`` moved, and how fast.
///
/// ```swift
/// let summary = try Migration.sqliteToSnapshot(from: sqliteURL, to: snapshotURL)
/// print(summary)   // entities with counts, objects per second, bytes in and out
/// ```
public struct MigrationSummary: Sendable, Hashable, CustomStringConvertible {
    /// One entity and the number of objects migrated.
    public struct EntityCount: Sendable, Hashable {
        /// The entity's name.
        public var name: String
        /// How many of its objects were migrated.
        public var objects: Int

        /// A count of `objects` for the entity `name`.
        public init(name: String, objects: Int) {
            self.name = name
            self.objects = objects
        }
    }

    /// The file read (`nil` when the migration started from a snapshot in memory).
    public var source: URL?
    /// The file written.
    public var destination: URL
    /// The entities, in the order they were written, with their object counts.
    public var entities: [EntityCount]
    /// The size of the source file, in bytes (0 without a source file).
    public var bytesRead: Int
    /// The size of the destination file, in bytes.
    public var bytesWritten: Int
    /// The time from the start of reading to the destination's rename.
    public var duration: Duration

    /// A summary with the given figures; ``Migration`` makes these, tests and tools may too.
    public init(source: URL?, destination: URL, entities: [EntityCount], bytesRead: Int, bytesWritten: Int, duration: Duration) {
        self.source = source
        self.destination = destination
        self.entities = entities
        self.bytesRead = bytesRead
        self.bytesWritten = bytesWritten
        self.duration = duration
    }

    /// The objects of every entity.
    public var objectCount: Int {
        entities.reduce(0) { $0 + $1.objects }
    }

    /// Objects migrated per second of ``duration``.
    public var objectsPerSecond: Double {
        let seconds = duration.seconds
        return seconds > 0 ? Double(objectCount) / seconds : Double(objectCount)
    }

    /// Several lines: one per entity with its count, then the totals.
    public var description: String {
        let width = max(20, (entities.map(\.name.count).max() ?? 0) + 1)
        var lines = entities.map { entity in
            entity.name.padding(toLength: width, withPad: " ", startingAt: 0) + String(entity.objects).leftPadded(10)
        }
        lines.append("\(objectCount) objects in \(String(format: "%.3f", duration.seconds)) s (\(Int(objectsPerSecond.rounded())) objects/s)")
        lines.append("read \(Self.bytes(bytesRead))\(source.map { " from \($0.path)" } ?? ""), wrote \(Self.bytes(bytesWritten)) to \(destination.path)")
        return lines.joined(separator: "\n")
    }

    // MARK: - Internal

    /// `1234567` → `1.2 MB (1234567 bytes)`.
    static func bytes(_ count: Int) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(count) bytes" : "\(String(format: "%.1f", value)) \(units[unit]) (\(count) bytes)"
    }
}

extension Duration {
    /// The duration in seconds, as a double.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension String {
    /// The string right-aligned in `width` characters.
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
