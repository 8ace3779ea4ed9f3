import IMWire
import SimKernel

/// Collects the effects of one `handle` call in order.
///
/// Frames written between two `openConnection` / `closeConnection` effects of one call are
/// coalesced into one `.send` (one transport write, as a real socket layer would do), flushed
/// before either so writes and closes keep their order. Callbacks, notes and timers are not held
/// back: they come before the `.send` of frames written earlier in the same stretch.
struct EffectBuffer {
    private(set) var effects: [ClientEffect] = []
    private var bytes: [UInt8] = []
    private var frames: [OutgoingFrame] = []

    mutating func append(_ e: ClientEffect) {
        switch e {
        case .openConnection, .closeConnection: flush()
        default: break
        }
        effects.append(e)
    }

    mutating func callback(_ c: AppCallback) { effects.append(.callback(c)) }

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
    mutating func note(_ n: ClientNote) { effects.append(.note(n)) }
    mutating func setTimer(_ t: ClientTimer, after d: SimDuration) { effects.append(.setTimer(t, after: d)) }
    mutating func cancelTimer(_ t: ClientTimer) { effects.append(.cancelTimer(t)) }

    /// Appends a frame's stream bytes to the pending write.
    mutating func write(_ frame: Frame, topic: String, obfuscated: Bool) {
        do {
            try StreamFraming.encode(frame, direction: .clientToServer, obfuscated: obfuscated, into: &bytes)
            frames.append(OutgoingFrame(type: frame.type, messageId: frame.messageId ?? 0, topic: topic))
        } catch {
            // Only strings over 65,535 bytes or a protobuf missing a required field get here:
            // a bug in the core or an absurd API argument, never wire input.
            note(.ignored(input: "write \(frame.type) \(topic)", reason: "encode failed: \(error)"))
        }
    }

    /// Emits the pending bytes as one `.send`.
    mutating func flush() {
        guard !frames.isEmpty else { return }
        effects.append(.send(bytes, frames: frames))
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
