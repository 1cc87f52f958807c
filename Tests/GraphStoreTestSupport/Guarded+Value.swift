import GraphStore

// Tests share logs, flags and counters between tasks and threads through the library's own
// lock type, `Guarded`, rather than a second one of their own.
extension Guarded {
    /// A copy of the current value.
    package var value: Value {
        withLock { $0 }
    }
}
