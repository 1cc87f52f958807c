import Foundation

/// Frees large values on a background queue instead of the thread that lets them go: the
/// version a commit replaced, a saved change set, decoded journal records and the objects a
/// fold replaced at open.
///
/// The value is moved into a box that the queue's job empties, so the last reference is
/// dropped on the queue even when the job runs before the caller has let go of the box.
enum BackgroundRelease {
    private static let queue = DispatchQueue(label: "GraphStore.BackgroundRelease", qos: .utility)

    /// From how many objects on a save's leftovers (a saved change set, the version a commit
    /// replaced) are freed here: freeing fewer on the saving thread costs less than waking the
    /// queue's thread would.
    static let objectCount = 4_096

    /// Frees `value` on the background queue. Pass the last reference (`consume` it), or the
    /// caller's copy is freed where the caller drops it.
    ///
    /// - Complexity: O(1) here.
    static func drop<T: Sendable>(_ value: consuming T) {
        let box = Guarded<T?>(consume value)
        queue.async {
            let taken = box.withLock { $0.take() }
            withExtendedLifetime(taken) {}
        }
    }

    /// `value`, with `replacement` left in its place: how the last reference is taken out of a
    /// stored property for ``drop(_:)``.
    static func take<T>(_ value: inout T, leaving replacement: T) -> T {
        var taken = replacement
        swap(&taken, &value)
        return taken
    }
}
