import Foundation

/// The number of processors available to this process, read once.
///
/// `ProcessInfo.activeProcessorCount` reads the cgroup files on Linux on every call (about
/// 13 µs here), and opening a store asked for it several times; a container's quota does not
/// change under a running app often enough to be worth that.
package enum Processors {
    /// `ProcessInfo.processInfo.activeProcessorCount` when first asked.
    package static let active = ProcessInfo.processInfo.activeProcessorCount

    /// The stack of a thread that decodes objects: 8 MiB, a main thread's, so that objects
    /// nested as deep as the parsers allow decode on it as on the caller's thread.
    package static let decodingThreadStackSize = 8 << 20
}
