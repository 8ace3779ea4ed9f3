import IMWire
import SimKernel

/// Collects the effects of one `handle` call in order.
///
/// Frames written between two `openConnection` / `closeConnection` effects of one call are
/// coalesced into one `.send` (one transport write, as a real socket layer would do), flushed
/// before either so writes and closes keep their order. Callbacks, notes and timers are not held
/// back: they come before the `.send` of frames written earlier in the same stretch.
struct EffectBuffer {
    /// Room the first effect of a call reserves: growing 1, 2, 4, 8 cost a call with a few
    /// effects three or four allocations (2.2 per `handle` on mixed-1k), one now.
    static let initialCapacity = 8

    private(set) var effects: [ClientEffect] = []
    private var bytes: [UInt8] = []
    private var frames: [OutgoingFrame] = []
    /// Where a write's buffer comes from (the simulated world's pool); nil: a fresh array.
    var writeBuffers: WriteBufferPool?

    /// Every effect goes through here. The array is handed to the driver at `take`, so each
    /// call's effects need a buffer of their own; a call with none allocates nothing.
    @inline(__always) private mutating func push(_ e: ClientEffect) {
        if effects.capacity == 0 { effects.reserveCapacity(Self.initialCapacity) }
        effects.append(e)
    }

    mutating func append(_ e: ClientEffect) {
        switch e {
        case .openConnection, .closeConnection: flush()
        default: break
        }
        push(e)
    }

    mutating func callback(_ c: AppCallback) { push(.callback(c)) }

    /// Where the effects end now (for `discardReports(since:)`).
    var mark: Int { effects.count }

    /// Drops the callbacks and notes added since `mark`: what a rolled-back store transaction
    /// reported (received, stored) never happened, and the app must not be told it did.
    mutating func discardReports(since mark: Int) {
        guard mark < effects.count else { return }
        var kept = Array(effects[..<mark])
        for e in effects[mark...] {
            switch e {
            case .callback, .note: continue
            default: kept.append(e)
            }
        }
        effects = kept
    }
    mutating func note(_ n: ClientNote) { push(.note(n)) }
    mutating func setTimer(_ t: ClientTimer, after d: SimDuration) { push(.setTimer(t, after: d)) }
    mutating func cancelTimer(_ t: ClientTimer) { push(.cancelTimer(t)) }

    /// Appends a frame's stream bytes to the pending write.
    /// `consuming`: the frame is moved into its encoding, not copied.
    mutating func write(_ frame: consuming Frame, topic: String, obfuscated: Bool) {
        let outgoing = OutgoingFrame(type: frame.type, messageId: frame.messageId ?? 0, topic: topic)
        if bytes.capacity == 0, let pool = writeBuffers { bytes = pool.take() }
        do {
            try StreamFraming.encode(consume frame, direction: .clientToServer, obfuscated: obfuscated, into: &bytes)
            frames.append(outgoing)
        } catch {
            // Only strings over 65,535 bytes or a protobuf missing a required field get here:
            // a bug in the core or an absurd API argument, never wire input.
            note(.ignored(input: "write \(outgoing.type) \(topic)", reason: "encode failed: \(error)"))
        }
    }

    /// Emits the pending bytes as one `.send`.
    mutating func flush() {
        guard !frames.isEmpty else { return }
        push(.send(bytes, frames: frames))
        bytes = []
        frames = []
    }

    /// The effects, pending bytes flushed.
    mutating func take() -> [ClientEffect] {
        flush()
        let out = effects
        effects = []
        return out
    }
}
