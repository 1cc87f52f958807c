/// Names one open frame of a ``FastJSONFrames`` stack: its level and the serial it was given,
/// so a container can tell its own frame from a later one at the same level.
struct FastJSONFrameID: Equatable {
    var level: Int
    var serial: UInt32

    /// A frame that never exists: containers made after an error write nothing.
    static let closed = FastJSONFrameID(level: -1, serial: 0)
}

/// One open JSON container, or one value whose encoder has not written anything yet.
struct FastJSONFrame {
    enum Kind: UInt8 {
        /// A value slot: its key (or separator) is written, its value not yet. Closed as `{}`,
        /// as `JSONEncoder` writes a value that encodes nothing.
        case pending
        /// `{` is written.
        case object
        /// `[` is written.
        case array
        /// A single value is written; nothing to close.
        case done
    }

    var kind: Kind
    var serial: UInt32
    /// The members or elements written so far (for separators and array indexes).
    var count: Int
}

/// The stack of open frames of one encoding, outermost first.
///
/// The encoder writes JSON as it goes, so only the innermost frame can take a value; using
/// an outer container first closes the frames inside it.
struct FastJSONFrames {
    private var frames: UnsafeMutablePointer<FastJSONFrame>
    private var capacity: Int
    /// The number of open frames.
    private(set) var depth = 0
    private var nextSerial: UInt32 = 1

    init() {
        capacity = 16
        frames = .allocate(capacity: capacity)
    }

    /// Frees the stack; call once, when the encoding is over.
    func deallocate() {
        frames.deallocate()
    }

    @inline(__always)
    subscript(level: Int) -> FastJSONFrame {
        get { frames[level] }
        nonmutating _modify { yield &frames[level] }
    }

    /// Whether `id` names an open frame.
    @inline(__always)
    func isOpen(_ id: FastJSONFrameID) -> Bool {
        id.level >= 0 && id.level < depth && frames[id.level].serial == id.serial
    }

    /// Whether `id` names the innermost open frame.
    @inline(__always)
    func isInnermost(_ id: FastJSONFrameID) -> Bool {
        id.level == depth &- 1 && frames[id.level].serial == id.serial
    }

    /// Opens a frame inside the innermost one.
    ///
    /// - Complexity: O(1) amortised.
    @inline(__always)
    mutating func push(_ kind: FastJSONFrame.Kind) -> FastJSONFrameID {
        if _slowPath(depth == capacity) { grow() }
        let serial = nextSerial
        nextSerial &+= 1
        frames[depth] = FastJSONFrame(kind: kind, serial: serial, count: 0)
        depth &+= 1
        return FastJSONFrameID(level: depth &- 1, serial: serial)
    }

    /// Forgets the innermost frame, returning it.
    @inline(__always)
    mutating func pop() -> FastJSONFrame {
        depth &-= 1
        return frames[depth]
    }

    /// Forgets every frame from `level` inward, without closing them (after an error).
    mutating func discard(from level: Int) {
        depth = Swift.min(depth, Swift.max(level, 0))
    }

    @inline(never)
    private mutating func grow() {
        let grown = UnsafeMutablePointer<FastJSONFrame>.allocate(capacity: capacity * 2)
        grown.moveInitialize(from: frames, count: depth)
        frames.deallocate()
        frames = grown
        capacity *= 2
    }
}
