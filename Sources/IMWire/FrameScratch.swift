/// The frames of one read, in one array whose storage is kept from read to read (a core's
/// `receive`: `take`, feed the decoder into it, handle the frames, `putBack`).
///
/// The array is taken out of its owner while the frames are handled, so its storage stays unique
/// (a handler may mutate the owner, and with it this scratch) and no read allocates a new one.
public struct FrameScratch: Sendable {
    private var storage: [Frame] = []

    public init() {}

    /// The array, empty, with the storage of earlier reads; this scratch holds none meanwhile.
    public mutating func take() -> [Frame] {
        var frames: [Frame] = []
        swap(&frames, &storage)
        Self.empty(&frames)
        return frames
    }

    /// Keeps `frames`' storage for the next read, its frames released now.
    public mutating func putBack(_ frames: inout [Frame]) {
        Self.empty(&frames)
        swap(&frames, &storage)
    }

    /// Removes every frame, keeping the storage. `removeAll(keepingCapacity:)` goes through the
    /// generic `replaceSubrange` (~225 instructions for a read of one frame); a read holds one
    /// or two frames, each removed here in a few (`popLast() != nil` went through the generic
    /// Optional comparison: value witnesses and metadata lookups).
    @inline(__always)
    static func empty(_ frames: inout [Frame]) {
        while !frames.isEmpty { frames.removeLast() }
    }

    /// Storage kept for the next read (in frames).
    public var capacity: Int { storage.capacity }

    /// Frame `k` of `frames`, moved out: a payload-free frame is left in its place, so the
    /// caller owns the frame (no copy, no retain) and emptying the array releases nothing of it.
    @inline(__always)
    public static func moveOut(_ frames: inout [Frame], at k: Int) -> Frame {
        var frame = Frame.pingReq()
        swap(&frame, &frames[k])
        return frame
    }
}
