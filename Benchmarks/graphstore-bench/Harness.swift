import Foundation

/// One row of the results table: a scenario measured on GraphStore and on SQLite in the same run.
struct Row: Codable {
    var scenario: String
    var variant: String
    /// Median milliseconds (or another unit, see `unit`) for GraphStore.
    var graphStore: Double
    /// The same for SQLite, when the scenario has a SQLite side.
    var sqlite: Double?
    var unit: String = "ms"
    var note: String = ""

    var ratio: Double? {
        guard let sqlite, sqlite > 0 else { return nil }
        return graphStore / sqlite
    }
}

/// Runs benchmarks with warm-up, repetitions and medians, alternating the two sides.
struct Harness {
    var repetitions: Int
    var warmups: Int

    /// Medians of `graphStore` and `sqlite`, each run `repetitions` times after `warmups`
    /// untimed runs, alternating which side goes first.
    func compare(_ graphStore: () throws -> Double, _ sqlite: () throws -> Double) rethrows -> (Double, Double) {
        for _ in 0..<warmups {
            _ = try graphStore()
            _ = try sqlite()
        }
        var a: [Double] = [], b: [Double] = []
        for repetition in 0..<repetitions {
            if repetition % 2 == 0 {
                a.append(try graphStore())
                b.append(try sqlite())
            } else {
                b.append(try sqlite())
                a.append(try graphStore())
            }
        }
        return (median(a), median(b))
    }

    /// ``compare(_:_:)`` for async measurements.
    func compareAsync(_ graphStore: () async throws -> Double, _ sqlite: () async throws -> Double) async rethrows -> (Double, Double) {
        for _ in 0..<warmups {
            _ = try await graphStore()
            _ = try await sqlite()
        }
        var a: [Double] = [], b: [Double] = []
        for repetition in 0..<repetitions {
            if repetition % 2 == 0 {
                a.append(try await graphStore())
                b.append(try await sqlite())
            } else {
                b.append(try await sqlite())
                a.append(try await graphStore())
            }
        }
        return (median(a), median(b))
    }

    func single(_ body: () throws -> Double) rethrows -> Double {
        for _ in 0..<warmups { _ = try body() }
        return median(try (0..<repetitions).map { _ in try body() })
    }
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
    return sorted[max(0, index)]
}

/// Milliseconds `body` takes: wall-clock time, or with `--cpu-time` the calling thread's CPU
/// time, which other work on a loaded machine disturbs much less (for single-threaded
/// measurements such as fetches; async and multi-threaded ones stay wall-clock).
func time(_ body: () throws -> Void) rethrows -> Double {
    guard measuresCPUTime else {
        let start = ContinuousClock.now
        try body()
        return milliseconds(ContinuousClock.now - start)
    }
    let start = threadCPUTime()
    try body()
    return (threadCPUTime() - start) * 1000
}

/// Whether `--cpu-time` was given.
let measuresCPUTime = CommandLine.arguments.contains("--cpu-time")

/// The calling thread's CPU time, in seconds.
func threadCPUTime() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// The CPU time of every thread of this process, in seconds.
func processCPUTime() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

func timeAsync(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    return milliseconds(ContinuousClock.now - start)
}

func milliseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1000 + Double(attoseconds) / 1e15
}

/// A fresh directory for one measurement.
func scratchDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("graphstore-bench-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func fileSize(_ url: URL) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
}

/// Peak resident memory of this process in KiB (Linux `VmHWM`).
func peakResidentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }
    return 0
}

/// The results as a Markdown table.
func markdown(_ rows: [Row]) -> String {
    var lines = ["| scenario | variant | GraphStore | SQLite | GraphStore / SQLite | note |", "|---|---|---:|---:|---:|---|"]
    for row in rows {
        let gs = format(row.graphStore, row.unit)
        let sq = row.sqlite.map { format($0, row.unit) } ?? "—"
        let ratio = row.ratio.map { String(format: "%.3f", $0) } ?? "—"
        lines.append("| \(row.scenario) | \(row.variant) | \(gs) | \(sq) | \(ratio) | \(row.note) |")
    }
    return lines.joined(separator: "\n")
}

private func format(_ value: Double, _ unit: String) -> String {
    switch unit {
    case "ms": value < 1 ? String(format: "%.4f ms", value) : String(format: "%.1f ms", value)
    case "µs": String(format: "%.1f µs", value)
    default: String(format: "%.0f %@", value, unit)
    }
}
