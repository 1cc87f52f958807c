/// How much of a save reaches the disk before `save()` returns.
///
/// | level | before `save()` returns | survives |
/// |---|---|---|
/// | ``coalesced`` | nothing; the background writer snapshots within the coalescing interval | nothing until the next snapshot (or ``GraphContainer/flush()``) |
/// | ``journaled`` (default) | the change set is appended to `<store>.journal` with `write(2)`; fsynced in the background within the coalescing interval | the app's process dying (crash, `kill -9`); power loss after the background fsync |
/// | ``synchronous`` | the append is fsynced; concurrent saves share one fsync | the process dying and power loss |
///
/// `.journaled` is SQLite's WAL mode with `synchronous = NORMAL` and Core Data's default;
/// `.synchronous` is `synchronous = FULL`.
///
/// ```swift
/// let container = try GraphContainer(
///     for: [Note.self, Tag.self],
///     store: .file(url, format: .json, compression: .gzip, durability: .synchronous))
/// ```
public enum Durability: String, Sendable, Hashable, CaseIterable {
    /// `save()` never touches the disk: the coalescing writer snapshots the graph in the
    /// background, so the saves of the last interval are lost if the process dies.
    case coalesced
    /// `save()` appends its committed changes to the journal beside the store with one
    /// `write(2)` before it returns, so they survive the process dying; the journal is
    /// fsynced in the background within the coalescing interval, and by
    /// ``GraphContainer/flush()``.
    case journaled
    /// As ``journaled``, and the append is fsynced before `save()` returns, so the save also
    /// survives a power loss. Saves that arrive while an fsync runs share the next one (group
    /// commit).
    case synchronous
}
