import IMClient
import IMServer
import IMWire
import IMWorldValues
import SimKernel

/// Knobs of a `TraceRecorder`.
public struct TraceRecorderOptions: Sendable {
    /// Store message content, KV values, tokens and wire bytes (otherwise length + hash, or
    /// a byte count: privacy by default).
    public var keepContent: Bool
    public var level: TraceLevel
    public var writer: TraceWriterOptions
    /// Start options recorded in the header (scenario path, arguments…). `epochMs`,
    /// `traceLevel` and `devices` are added by the recorder.
    public var headerOptions: [TraceOption]
    public var build: String
    /// Largest ledger record: a big run's ledger is split into several (the block compresses them).
    public var ledgerPartBytes: Int

    public init(keepContent: Bool = false, level: TraceLevel = .full, writer: TraceWriterOptions = .init(),
                headerOptions: [TraceOption] = [], build: String = TraceHeader.currentBuild, ledgerPartBytes: Int = 256 << 10) {
        self.keepContent = keepContent
        self.level = level
        self.writer = writer
        self.headerOptions = headerOptions
        self.build = build
        self.ledgerPartBytes = max(1, ledgerPartBytes)
    }

    /// The options of the writer a recorder makes itself: with the writer thread, the recorder
    /// encodes there (`TraceHandoff`) and the writer compresses and writes inline on that thread.
    public var blockWriter: TraceWriterOptions {
        var w = writer
        w.writerThread = false
        return w
    }

    /// Everything on the calling thread (no writer thread).
    public var singleThreaded: TraceRecorderOptions {
        var o = self
        o.writer.writerThread = false
        return o
    }
}

/// Writes a run's records from core values (kernel records, client and server inputs and
/// effects, notes, meta): the recording half that needs no simulator. `TraceRecorder` (IMTrace)
/// is the world observer that feeds it; a driver without a world (replay, synthetic streams)
/// may feed it directly.
///
/// Observer-style methods cannot throw: the first write error is kept in `error`, recording
/// stops, and `close` rethrows it.
public final class CoreTraceRecorder {
    public let writer: TraceWriter
    public let epochMs: Int64
    /// The first write error; nothing is recorded after it.
    // The hot fields skip runtime exclusivity checks (one simulation thread drives the recorder;
    // the checks cost ~10% of recording).
    @exclusivity(unchecked) public private(set) var error: TraceError?
    /// The index of the next kernel event (written in each block's checkpoint).
    @exclusivity(unchecked) public var nextEvent: UInt64 = 0
    /// The run's digest so far, for checkpoints (0 without a source).
    public var digest: () -> UInt64 = { 0 }
    @exclusivity(unchecked) private var clockOffsets: [Int64?] = []
    /// Set by the first write error or by `close`: one flag (comparing the optional error
    /// copied it per record).
    @exclusivity(unchecked) private var stopped = false
    private let keep: Bool
    private let level: TraceLevel

    public init(writer: TraceWriter, options: TraceRecorderOptions, epochMs: Int64) {
        self.writer = writer
        self.epochMs = epochMs
        keep = options.keepContent
        level = options.level
    }

    /// Format 2: the strings the file header defines for every block (the world's user and
    /// device ids), before the first record.
    public func predefine(_ strings: [String]) {
        guard !stopped else { return }
        do { try writer.predefine(strings) } catch {
            self.error = error
            stopped = true
        }
    }

    /// Sizes the per-device state (the wall-clock offsets of inputs).
    public func setDeviceCount(_ n: Int) {
        clockOffsets = Array(repeating: nil, count: n)
    }

    // MARK: - Writing

    /// Appends one event at `time` (if the level records it). A kernel record counts as the
    /// next kernel event.
    public func record(_ event: TraceEvent, at time: SimTime) {
        let head = event.head
        let kernel: Bool
        if case .kernel = event { kernel = true } else { kernel = false }
        append(kind: head.kind, level: head.level, at: time, kernel: kernel) { event.encode(into: &$0, epochMs: epochMs) }
    }

    /// The one write path: level filter, a checkpoint before the first record of each block,
    /// the record, the kernel-event count. The hot paths call it directly with a record's own
    /// encoder (the same one `TraceEvent.encode` uses), skipping the `TraceEvent` wrapper;
    /// levels are those of `TraceEvent.head`.
    @inline(__always)
    private func append(kind: UInt16, level l: TraceLevel, at time: SimTime, kernel: Bool = false,
                        _ body: (inout RecordEncoder) -> Void) {
        guard !stopped, l <= level else { return }
        do {
            if writer.pendingRecordCount == 0 {
                let cp = TraceEvent.meta(.checkpoint(nextEvent: nextEvent, digest: digest()))
                try writer.append(kind: cp.kind, time: time) { cp.encode(into: &$0, epochMs: epochMs) }
            }
            try writer.append(kind: kind, time: time, body)
            if kernel { nextEvent += 1 }
        } catch {
            self.error = error
            stopped = true
        }
    }

    private func record(device d: Int, _ r: ClientEffectRecord, at time: SimTime) {
        append(kind: r.kind, level: .full, at: time) { TraceEvent.encode(device: d, r, into: &$0) }
    }

    private func record(_ r: ServerEffectRecord, at time: SimTime) {
        append(kind: r.kind, level: .full, at: time) { r.encode(into: &$0) }
    }

    /// Finishes the trace file; rethrows the first write error.
    @discardableResult
    public func close(finalDigest: UInt64) throws(TraceError) -> TraceWriteSummary {
        stopped = true
        if let error { throw error }
        return try writer.finish(finalDigest: finalDigest)
    }

    // MARK: - Core values

    // The frequent records are written straight from the core values with the record types' own
    // field encoders (no intermediate record, no copy of the effect); the rest go through the
    // record types. Same bytes either way (RecorderTests.directWritePathsMatchTheRecordTypes).

    /// A kernel event: bytes delivered on connection `c` of device `d`.
    public func deliver(_ c: UInt64, device d: Int, toServer: Bool, at time: SimTime) {
        append(kind: (toServer ? WorldEventKind.deliverUp : .deliverDown).rawValue, level: .events, at: time,
               kernel: true) { KernelRecord.encodeLink(c, d, into: &$0) }
    }

    /// A kernel event: device `d`'s client timer fired.
    public func clientTimer(device d: Int, _ t: ClientTimer, at time: SimTime) {
        append(kind: WorldEventKind.clientTimer.rawValue, level: .events, at: time, kernel: true) {
            KernelRecord.encodeClientTimer(d, t, into: &$0)
        }
    }

    /// Any other kernel event, from its record: `record(.kernel(r), at:)` wrapped it in a
    /// `TraceEvent` that the closure copied whole (~900 instructions a record, ~350 this way).
    public func kernel(_ r: KernelRecord, at time: SimTime) {
        append(kind: r.kind, level: .events, at: time, kernel: true) { r.encode(into: &$0) }
    }

    /// An input to device `d`'s client core at `now`, with the device's local clock `localMs`.
    public func clientInput(device d: Int, _ input: ClientInput, localMs: Int64, at now: SimTime) {
        guard level >= .outcomes else { return }
        let epochMs = self.epochMs
        let offset = localMs &- (epochMs &+ now.milliseconds)
        if d < clockOffsets.count, clockOffsets[d] != offset {
            clockOffsets[d] = offset
            record(.clientInput(device: d, .wallClock(offsetMs: offset)), at: now)
        }
        // One level of pattern a `switch` (nested patterns copy the whole input first).
        switch input {
        case .api: break
        // The world feeds a timer to its core exactly when it dispatches `ev.clientTimer`: that
        // record is the input (kind `in.timer` is for drivers without kernel records, e.g. replay).
        case .timerFired: return
        case .transport(let t):
            if case .bytes(let b) = t {
                // The payload is taken here, so the closure captures no array (and no `self`).
                let payload = TraceBytes.of(b, keep: keep)
                append(kind: ClientInput.TraceKind.transportBytes.rawValue, level: .full, at: now) { $0.device(d); ClientInputRecord.encodeTransportBytes(payload, into: &$0) }
                return
            }
            if level < .full { return }
        default: if level < .full { return }
        }
        record(.clientInput(device: d, ClientInputRecord(input, keepContent: keep)), at: now)
    }

    /// Device `d`'s client effects at `now`; `opened` gives the connection id of each
    /// `openConnection` effect, in order.
    public func clientEffects(device d: Int, _ effects: [ClientEffect], opened: (Int) -> ConnectionID, at now: SimTime) {
        guard level >= .outcomes else { return }
        // Locals: a closure reading `self.keep` or `self.epochMs` captured (and retained) `self`.
        let keep = self.keep, epochMs = self.epochMs
        var openIndex = 0
        // `for … in` and one level of pattern per `switch`: `switch effects[i]` with nested
        // patterns copied each effect whole into a temporary first.
        for effect in effects {
            switch effect {
            case .openConnection:
                record(device: d, .openConnection(opened(openIndex)), at: now)
                openIndex += 1
            case .send(let bytes, let frames):
                let payload = TraceBytes.of(bytes, keep: keep)
                append(kind: ClientEffect.TraceKind.send.rawValue, level: .full, at: now) {
                    $0.device(d); ClientEffectRecord.encodeSend(payload, frames, into: &$0)
                }
            case .closeConnection:
                record(device: d, .closeConnection, at: now)
            case .setTimer(let t, let after):
                append(kind: ClientEffect.TraceKind.setTimer.rawValue, level: .full, at: now) { $0.device(d); ClientEffectRecord.encodeSetTimer(t, after, into: &$0) }
            case .cancelTimer(let t):
                append(kind: ClientEffect.TraceKind.cancelTimer.rawValue, level: .full, at: now) { $0.device(d); $0.clientTimer(t) }
            // Callbacks and notes: the closure captures the boxed value itself and the fields
            // are bound where they are written (binding `.received`'s store row out here copied
            // it, with its strings, into the closure and back: three copies a record).
            case .callback(let cb):
                append(kind: cb.traceKind.rawValue, level: .outcomes, at: now) {
                    $0.device(d); CallbackRecord.encode(cb, keepContent: keep, epoch: epochMs, into: &$0)
                }
            case .note(let n):
                append(kind: n.traceKind.rawValue, level: .outcomes, at: now) {
                    $0.device(d); ClientNoteRecord.encode(n, into: &$0, epoch: epochMs)
                }
            }
        }
    }

    /// An input to the server core at `now`.
    public func serverInput(_ serverInput: ServerInput, at now: SimTime) {
        guard level >= .outcomes else { return }
        switch serverInput {
        case .api: break
        case .timerFired: return  // = the `ev.serverTimer` record (see client timers above)
        case .bytes(let c, let b):
            let payload = TraceBytes.of(b, keep: keep)
            append(kind: ServerInput.TraceKind.bytes.rawValue, level: .full, at: now) { ServerInputRecord.encodeBytes(c, payload, into: &$0) }
            return
        default: if level < .full { return }
        }
        record(.serverInput(ServerInputRecord(serverInput, keepContent: keep)), at: now)
    }

    /// The server core's effects at `now`.
    public func serverEffects(_ serverEffects: [ServerEffect], at now: SimTime) {
        guard level >= .outcomes else { return }
        let keep = self.keep, epochMs = self.epochMs
        for i in serverEffects.indices {
            // The frequent kinds are read in place by the closure that writes them: binding their
            // fields out here copied the effect and retained each field again for the closure.
            let kind = ServerEffectRecord.directKind(of: serverEffects[i])
            if kind != 0 {
                // Server events (kinds from sessionOpened up) are outcomes; sends and timers full.
                append(kind: kind, level: kind >= ServerEvent.TraceKind.sessionOpened.rawValue ? .outcomes : .full, at: now) {
                    ServerEffectRecord.encodeDirect(serverEffects[i], keepContent: keep, epoch: epochMs, into: &$0)
                }
                continue
            }
            switch serverEffects[i] {
            case .close(let c):
                record(.close(c), at: now)
            case .event(let e):
                let r = ServerEventRecord(e)
                append(kind: r.kind, level: .outcomes, at: now) { r.encode(into: &$0, epoch: epochMs) }
                if let d = ServerEventRecord.droppedRecord(e) {
                    append(kind: d.kind, level: .outcomes, at: now) { d.encode(into: &$0, epoch: epochMs) }
                }
            case .send, .setTimer, .cancelTimer:
                preconditionFailure("a direct kind, written above")
            }
        }
    }
}
