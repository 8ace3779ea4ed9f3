import Foundation
import IMClient
import IMServer
import IMWire
import IMWorld
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

    /// Everything on the calling thread (no writer thread).
    public var singleThreaded: TraceRecorderOptions {
        var o = self
        o.writer.writerThread = false
        return o
    }
}

/// Records a run: a world observer that writes a trace record for every kernel event, every
/// core input, effect, callback and note, every world note and oracle verdict, then the ledger
/// and the final digest (Docs/trace-format.md, "Record schema").
///
/// Memory is bounded by the writer (one block) plus the string table, which grows with the
/// distinct interned strings (user, device, room ids, topics, reasons, and one messageUId per
/// message: ~60 bytes each). Observer methods cannot throw: the first write error is kept in
/// `error`, recording stops, and `finish` rethrows it.
public final class TraceRecorder: WorldObserver {
    public let writer: TraceWriter
    public let options: TraceRecorderOptions
    public let epochMs: Int64
    /// The first write error; nothing is recorded after it.
    // The hot fields skip runtime exclusivity checks (one simulation thread drives the recorder;
    // the checks cost ~10% of recording).
    @exclusivity(unchecked) public private(set) var error: TraceError?
    /// The ledger was written (at `worldDidFinish`, or by `finish`).
    public private(set) var ledgerWritten = false

    @exclusivity(unchecked) private weak var world: World?
    private var ledgerSource: (() -> Ledger)?
    private var ownStatuses: LedgerStatusRecorder?
    @exclusivity(unchecked) private var clockOffsets: [Int64?] = []
    @exclusivity(unchecked) private var nextEvent: UInt64 = 0
    /// Set by the first write error or by `close`: one flag (comparing the optional error
    /// copied it per record).
    @exclusivity(unchecked) private var stopped = false
    private let keep: Bool
    private let level: TraceLevel

    /// Creates the trace file and writes its header.
    public convenience init(path: String, scenario: Scenario, seed: UInt64, options: TraceRecorderOptions = .init())
        throws(TraceError) {
        let header = try Self.header(scenario: scenario, seed: seed, options: options)
        try self.init(writer: try TraceWriter(path: path, header: header, options: options.writer), options: options,
                      epochMs: scenario.epochMs ?? Scenario.defaultEpochMs)
    }

    /// Records into memory (`writer.bytes` after `finish`): tests.
    public convenience init(inMemory scenario: Scenario, seed: UInt64, options: TraceRecorderOptions = .init())
        throws(TraceError) {
        let header = try Self.header(scenario: scenario, seed: seed, options: options)
        try self.init(writer: try TraceWriter(inMemory: header, options: options.writer), options: options,
                      epochMs: scenario.epochMs ?? Scenario.defaultEpochMs)
    }

    /// Records through `writer` (its header must carry `epochMs` if the epoch is not 0).
    public init(writer: TraceWriter, options: TraceRecorderOptions, epochMs: Int64) throws(TraceError) {
        self.writer = writer
        self.options = options
        self.epochMs = epochMs
        keep = options.keepContent
        level = options.level
    }

    /// The header a recorder writes for a run of `scenario` with `seed`.
    public static func header(scenario: Scenario, seed: UInt64, options: TraceRecorderOptions) throws(TraceError) -> TraceHeader {
        var list = options.headerOptions.filter { !["epochMs", "traceLevel"].contains($0.key) }
        list.append(TraceOption("epochMs", "\(scenario.epochMs ?? Scenario.defaultEpochMs)"))
        list.append(TraceOption("traceLevel", "\(options.level.rawValue)"))
        return try TraceHeader(seed: seed, scenarioDigest: scenario.digest, scenarioName: scenario.name,
                               build: options.build, options: list, keepContent: options.keepContent)
    }

    // MARK: - Attaching

    /// Records `run`: observes its world, its oracle suite's verdicts, and writes `run.ledger()`.
    /// Attach before running.
    public func attach(to run: ScenarioRun) {
        run.suite?.onViolation = { [weak self] v in self?.violation(v) }
        ledgerSource = { [unowned run] in run.ledger() }
        start(run.world)
    }

    /// Records a bare world (no oracles); the ledger uses the recorder's own status observer.
    public func attach(to world: World) {
        let statuses = LedgerStatusRecorder()
        world.addObserver(statuses)
        ownStatuses = statuses
        ledgerSource = { [unowned world] in Ledger.capture(world, statuses: statuses) }
        start(world)
    }

    private func start(_ w: World) {
        world = w
        w.addObserver(self)
        nextEvent = w.sim.counters.eventsDispatched
        clockOffsets = Array(repeating: nil, count: w.deviceCount)
        let ids = w.userIds
        var userIndex: [String: Int] = [:]
        for (i, u) in ids.enumerated() { userIndex[u] = i }
        for d in 0..<w.deviceCount {
            let user = w.userId(ofDevice: d)
            record(.meta(.device(index: d, deviceId: w.deviceId(d), userId: user, platform: w.platform(ofDevice: d),
                                 userIndex: userIndex[user] ?? 0)), at: w.now)
        }
    }

    // MARK: - Writing

    /// Appends one event at `time` (if the level records it). The observer methods use it; so
    /// do synthetic streams.
    public func record(_ event: TraceEvent, at time: SimTime) {
        let head = event.head
        append(kind: head.kind, level: head.level, at: time) { event.encode(into: &$0, epochMs: epochMs) }
    }

    /// The one write path: level filter, a checkpoint before the first record of each block,
    /// the record, the kernel-event count. The hot observer paths call it directly with a
    /// record's own encoder (the same one `TraceEvent.encode` uses), skipping the `TraceEvent`
    /// wrapper; levels are those of `TraceEvent.head`.
    @inline(__always)
    private func append(kind: UInt16, level l: TraceLevel, at time: SimTime, _ body: (inout RecordEncoder) -> Void) {
        guard !stopped, l <= level else { return }
        do {
            if writer.pendingRecordCount == 0 {
                let digest = world?.sim.digest.value ?? 0
                let cp = TraceEvent.meta(.checkpoint(nextEvent: nextEvent, digest: digest))
                try writer.append(kind: cp.kind, time: time) { cp.encode(into: &$0, epochMs: epochMs) }
            }
            try writer.append(kind: kind, time: time, body)
            if kind <= 19 { nextEvent += 1 }  // kernel events are kinds 1–19
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

    private func violation(_ v: Violation) {
        record(.meta(.violation(v)), at: SimTime(nanoseconds: v.timeNanoseconds))
    }

    private func writeLedger(at time: SimTime) {
        guard !ledgerWritten, let ledgerSource else { return }
        ledgerWritten = true
        let bytes = ledgerSource().compactJSON()
        let size = options.ledgerPartBytes
        let parts = max(1, (bytes.count + size - 1) / size)
        for p in 0..<parts {
            let lo = p * size
            let hi = min(bytes.count, lo + size)
            record(.meta(.ledger(part: p, parts: parts, json: Array(bytes[lo..<hi]))), at: time)
        }
    }

    /// Writes the ledger (if `worldDidFinish` has not), a `runEnd` record and the footer with the
    /// world's final digest. Call once, after the run; rethrows the first write error.
    @discardableResult
    public func finish(stopReason: String) throws(TraceError) -> TraceWriteSummary {
        if let error { throw error }
        guard let world else { throw .writerClosed }
        let complete = world.phase == .finished
        writeLedger(at: world.now)
        record(.meta(.runEnd(stopReason: stopReason, events: world.sim.counters.eventsDispatched, complete: complete,
                             digest: world.sim.digest.value)), at: world.now)
        return try close(finalDigest: world.sim.digest.value)
    }

    /// Finishes the trace file as it is (no ledger or run-end record): for recorders fed by
    /// `record(_:at:)` without a world.
    @discardableResult
    public func close(finalDigest: UInt64) throws(TraceError) -> TraceWriteSummary {
        stopped = true
        if let error { throw error }
        return try writer.finish(finalDigest: finalDigest)
    }

    // MARK: - WorldObserver

    // The observer methods write the frequent records straight from the world's values with the
    // record types' own field encoders (no intermediate record, no copy of the effect); the rest
    // go through the record types. Same bytes either way
    // (RecorderTests.directWritePathsMatchTheRecordTypes).

    public func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        // Copy the payload out first: switching on `event.payload` copied the whole generic
        // `SimEvent` through its type metadata (~100 instructions per event).
        let time = event.time
        let payload = event.payload
        switch payload {
        case .deliver(let c, let toServer):
            let d = world.device(ofConnection: ConnectionID(UInt64(c))) ?? 0
            append(kind: toServer ? KernelRecord.deliverUpKind : KernelRecord.deliverDownKind, level: .events, at: time) { KernelRecord.encodeLink(UInt64(c), d, into: &$0) }
        case .clientTimer(let d, let t):
            append(kind: KernelRecord.clientTimerKind, level: .events, at: time) { KernelRecord.encodeClientTimer(Int(d), t, into: &$0) }
        default:
            let r = KernelRecord(payload) { world.device(ofConnection: ConnectionID(UInt64($0))) ?? 0 }
            append(kind: r.kind, level: .events, at: time) { r.encode(into: &$0) }
        }
    }

    public func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        guard level >= .outcomes else { return }
        let now = world.now
        let offset = localMs &- (epochMs &+ now.milliseconds)
        if d < clockOffsets.count, clockOffsets[d] != offset {
            clockOffsets[d] = offset
            record(.clientInput(device: d, .wallClock(offsetMs: offset)), at: now)
        }
        switch input {
        case .api: break
        // The world feeds a timer to its core exactly when it dispatches `ev.clientTimer`: that
        // record is the input (kind `in.timer` is for drivers without kernel records, e.g. replay).
        case .timerFired: return
        case .transport(.bytes(let b)):
            append(kind: ClientInputRecord.transportBytesKind, level: .full, at: now) { $0.uvarint(d); ClientInputRecord.encodeTransportBytes(.of(b, keep: keep), into: &$0) }
            return
        default: if level < .full { return }
        }
        record(.clientInput(device: d, ClientInputRecord(input, keepContent: keep)), at: now)
    }

    public func world(_ world: World, device d: Int, effects: [ClientEffect]) {
        guard level >= .outcomes else { return }
        let now = world.now
        var nextConnection = UInt64(world.connectionCount)
        for i in effects.indices {
            switch effects[i] {
            case .openConnection:
                record(device: d, .openConnection(ConnectionID(nextConnection)), at: now)
                nextConnection += 1
            case .send(let bytes, let frames):
                append(kind: ClientEffectRecord.sendKind, level: .full, at: now) {
                    $0.uvarint(d); ClientEffectRecord.encodeSend(.of(bytes, keep: keep), frames, into: &$0)
                }
            case .closeConnection:
                record(device: d, .closeConnection, at: now)
            case .setTimer(let t, let after):
                append(kind: ClientEffectRecord.setTimerKind, level: .full, at: now) { $0.uvarint(d); ClientEffectRecord.encodeSetTimer(t, after, into: &$0) }
            case .cancelTimer(let t):
                append(kind: ClientEffectRecord.cancelTimerKind, level: .full, at: now) { $0.uvarint(d); $0.clientTimer(t) }
            case .callback(.received(let m, let left, let off, let pkg)):
                append(kind: CallbackRecord.receivedKind, level: .outcomes, at: now) {
                    $0.uvarint(d)
                    CallbackRecord.encodeReceived(m, left: left, offline: off, hasPackage: pkg, keepContent: keep, epoch: epochMs, into: &$0)
                }
            case .callback(let cb):
                let r = CallbackRecord(cb, keepContent: keep)
                append(kind: r.kind, level: .outcomes, at: now) { TraceEvent.encode(device: d, r, into: &$0, epoch: epochMs) }
            case .note(.cursor(let name, let v)):
                append(kind: ClientNoteRecord.cursorKind, level: .outcomes, at: now) {
                    $0.uvarint(d); ClientNoteRecord.encodeCursor(name, v, into: &$0, epoch: epochMs)
                }
            case .note(.stored(let id, let uid, let c, let t, let dir, let new)):
                append(kind: ClientNoteRecord.storedKind, level: .outcomes, at: now) {
                    $0.uvarint(d); ClientNoteRecord.encodeStored(id, uid, c, t, dir, new, into: &$0, epoch: epochMs)
                }
            case .note(let n):
                let r = ClientNoteRecord(n)
                append(kind: r.kind, level: .outcomes, at: now) { TraceEvent.encode(device: d, r, into: &$0, epoch: epochMs) }
            }
        }
    }

    public func world(_ world: World, serverInput: ServerInput, serverMs: Int64) {
        guard level >= .outcomes else { return }
        switch serverInput {
        case .api: break
        case .timerFired: return  // = the `ev.serverTimer` record (see client timers above)
        case .bytes(let c, let b):
            append(kind: ServerInputRecord.bytesKind, level: .full, at: world.now) { ServerInputRecord.encodeBytes(c, .of(b, keep: keep), into: &$0) }
            return
        default: if level < .full { return }
        }
        record(.serverInput(ServerInputRecord(serverInput, keepContent: keep)), at: world.now)
    }

    public func world(_ world: World, serverEffects: [ServerEffect]) {
        guard level >= .outcomes else { return }
        let now = world.now
        for i in serverEffects.indices {
            switch serverEffects[i] {
            case .send(let c, let bytes, let frames):
                append(kind: ServerEffectRecord.sendKind, level: .full, at: now) { ServerEffectRecord.encodeSend(c, .of(bytes, keep: keep), frames, into: &$0) }
            case .close(let c):
                record(.close(c), at: now)
            case .setTimer(let t, let after):
                append(kind: ServerEffectRecord.setTimerKind, level: .full, at: now) { ServerEffectRecord.encodeSetTimer(t, after, into: &$0) }
            case .cancelTimer(let t):
                append(kind: ServerEffectRecord.cancelTimerKind, level: .full, at: now) { $0.serverTimer(t) }
            case .event(.fannedOut(let uid, let u, let dev, let c, let via)):
                append(kind: ServerEventRecord.fannedOutKind, level: .outcomes, at: now) {
                    ServerEventRecord.encodeFannedOut(uid, u, dev, c, via, into: &$0)
                }
            case .event(.pulled(let c, let u, let dev, let t, let uids, let st, let f)):
                append(kind: ServerEventRecord.pulledKind, level: .outcomes, at: now) {
                    ServerEventRecord.encodePulled(c, u, dev, t, uids, st, f, into: &$0, epoch: epochMs)
                }
            case .event(let e):
                let r = ServerEventRecord(e)
                append(kind: r.kind, level: .outcomes, at: now) { r.encode(into: &$0, epoch: epochMs) }
            }
        }
    }

    public func world(_ world: World, note: WorldNote) {
        record(.world(WorldNoteRecord(note)), at: world.now)
    }

    public func worldDidFinish(_ world: World) {
        writeLedger(at: world.now)
    }
}
