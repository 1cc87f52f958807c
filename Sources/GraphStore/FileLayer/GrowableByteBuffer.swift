import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - GrowableByteBuffer

/// A uniquely owned, `malloc`-backed byte buffer whose capacity is grown
/// explicitly by its user, so callers keep exact control over how much memory
/// is allocated (the gzip decoder relies on this to bound a decompression bomb).
///
/// When filled, ``takeData()`` hands the allocation to `Data` without copying.
struct GrowableByteBuffer: ~Copyable {

    // MARK: - State

    /// Start of the allocation; never `nil` after a successful `init`.
    private var base: UnsafeMutableRawPointer

    /// Number of bytes allocated.
    private(set) var capacity: Int

    /// Number of bytes at the start of the buffer that hold data.
    private(set) var count: Int = 0

    // MARK: - Lifecycle

    /// Allocates a buffer of `capacity` bytes (at least one).
    ///
    /// - Throws: ``FileLayerError/outOfMemory(requestedBytes:)`` if the
    ///   allocation fails.
    /// - Complexity: O(1); the memory is not touched.
    init(capacity: Int) throws(FileLayerError) {
        let size = max(capacity, 1)
        guard let pointer = malloc(size) else {
            throw .outOfMemory(requestedBytes: size)
        }
        base = pointer
        self.capacity = size
    }

    deinit {
        free(base)
    }

    // MARK: - Access

    /// The allocated but not yet filled bytes, `capacity - count` of them.
    ///
    /// The pointer stays valid until the next call to ``grow(toCapacity:)``
    /// or ``takeData()``.
    var unusedBytes: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: base + count, count: capacity - count)
    }

    // MARK: - Mutation

    /// Marks `byteCount` more bytes of ``unusedBytes`` as filled.
    ///
    /// - Precondition: `byteCount <= capacity - count`.
    /// - Complexity: O(1).
    mutating func commit(_ byteCount: Int) {
        precondition(byteCount >= 0 && byteCount <= capacity - count, "commit beyond capacity")
        count += byteCount
    }

    /// Grows the allocation to exactly `newCapacity` bytes, keeping the data.
    /// Does nothing if the buffer is already that large.
    ///
    /// - Throws: ``FileLayerError/outOfMemory(requestedBytes:)`` if the
    ///   reallocation fails; the buffer is then unchanged.
    /// - Complexity: O(`count`) in the worst case (when `realloc` moves the
    ///   block); large blocks are usually remapped without copying.
    mutating func grow(toCapacity newCapacity: Int) throws(FileLayerError) {
        guard newCapacity > capacity else { return }
        guard let pointer = realloc(base, newCapacity) else {
            throw .outOfMemory(requestedBytes: newCapacity)
        }
        base = pointer
        capacity = newCapacity
    }

    /// Consumes the buffer and returns its filled bytes as `Data`, without
    /// copying. Excess capacity above a small slack is returned to the
    /// allocator first.
    ///
    /// - Complexity: O(1) amortised; `realloc` may copy when shrinking.
    consuming func takeData() -> Data {
        let pointer = base
        let filled = count
        let allocated = capacity
        discard self
        guard filled > 0 else {
            free(pointer)
            return Data()
        }
        var result = pointer
        // Give back large unused tails; a shrinking realloc never fails
        // in practice, and on failure the original block remains valid.
        if allocated - filled > 64 * 1024, let shrunk = realloc(pointer, filled) {
            result = shrunk
        }
        return Data(bytesNoCopy: result, count: filled, deallocator: .free)
    }
}
