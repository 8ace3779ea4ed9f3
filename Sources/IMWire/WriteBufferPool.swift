/// Byte buffers whose bytes were consumed, kept for later writes: in the simulated world every
/// write's bytes travel to the other core and are freed there, one malloc/free pair per write.
/// The world hands a delivered buffer back (`recycle`) once the receiving core has read it, and
/// the cores' next writes encode into it (`take`), so its storage is reused.
///
/// Only storage is reused, never bytes: `recycle` empties the buffer (an array still shared
/// with another holder gets fresh storage from `removeAll`, leaving that holder's bytes alone).
/// A LIFO list, no clock, no threads: which buffer a write gets is deterministic, and no output
/// depends on it. One world's cores share one pool on one thread (hence `@unchecked Sendable`:
/// the cores are `Sendable` values; a runtime driver does not set a pool).
public final class WriteBufferPool: @unchecked Sendable {
    /// At most this many idle buffers are kept (more are freed).
    public static let maxBuffers = 256
    /// A buffer with more capacity than this is freed rather than kept (one large pull answer
    /// should not pin its storage).
    public static let maxCapacity = 16 * 1024

    // Unchecked: a dynamic exclusivity check per access cost ~80 instructions a write.
    @usableFromInline @exclusivity(unchecked) var buffers: [[UInt8]] = []

    public init() {}

    /// Idle buffers kept.
    public var count: Int { buffers.count }

    /// An empty buffer, with the storage of an earlier write when one is kept.
    @inlinable public func take() -> [UInt8] {
        buffers.popLast() ?? []
    }

    /// Takes back a buffer whose bytes were consumed (`consuming`: the caller's last reference
    /// moves in, no retain/release pair); its bytes are dropped, its storage kept.
    @inlinable public func recycle(_ bytes: consuming [UInt8]) {
        let capacity = bytes.capacity
        guard capacity > 0, capacity <= Self.maxCapacity, buffers.count < Self.maxBuffers else { return }
        bytes.removeAll(keepingCapacity: true)
        buffers.append(bytes)
    }
}
