import Foundation
import IMClient
import IMServer
import IMWire
import IMWorld
import SimKernel

/// Records a run: a world observer that writes a trace record for every kernel event, every
/// core input, effect, callback and note, every world note and oracle verdict, then the ledger
/// and the final digest (Docs/trace-format.md, "Record schema").
///
/// Memory is bounded by the writer (one block) plus the string table, which grows with the
/// distinct interned strings (user, device, room ids, topics, reasons, and one messageUId per
/// message: ~60 bytes each). Observer methods cannot throw: the first write error is kept in
/// `error`, recording stops, and `finish` rethrows it.
///
/// With `options.writer.writerThread` (the default) the observer methods only hand the values
/// over (`TraceHandoff`): a writer thread encodes, compresses and writes them, the same bytes as
/// encoding inline. `core`, `writer` and `error` are then the writer thread's until `finish`,
/// `close` or `flush` returns.
public final class TraceRecorder: WorldObserver {
    /// Writes the records: everything but reading the world.
    public let core: CoreTraceRecorder
    public var writer: TraceWriter { core.writer }
    public let options: TraceRecorderOptions
    public var epochMs: Int64 { core.epochMs }
    /// The first write error; nothing is recorded after it.
    public var error: TraceError? { core.error }
    /// Set when encoding runs on the writer thread.
    private let handoff: TraceHandoff?
    /// The ledger was written (at `worldDidFinish`, or by `finish`).
    public private(set) var ledgerWritten = false

    @exclusivity(unchecked) private weak var world: World?
    private var ledgerSource: (() -> LedgerReading)?
    private var ownStatuses: LedgerStatusRecorder?

    /// Creates the trace file and writes its header.
    public convenience init(path: String, scenario: Scenario, seed: UInt64, options: TraceRecorderOptions = .init())
        throws(TraceError) {
        let header = try Self.header(scenario: scenario, seed: seed, options: options)
        try self.init(writer: try TraceWriter(path: path, header: header, options: options.blockWriter), options: options,
                      epochMs: scenario.epochMs ?? Scenario.defaultEpochMs)
    }

    /// Records into memory (`writer.bytes` after `finish`): tests.
    public convenience init(inMemory scenario: Scenario, seed: UInt64, options: TraceRecorderOptions = .init())
        throws(TraceError) {
        let header = try Self.header(scenario: scenario, seed: seed, options: options)
        try self.init(writer: try TraceWriter(inMemory: header, options: options.blockWriter), options: options,
                      epochMs: scenario.epochMs ?? Scenario.defaultEpochMs)
    }

    /// Records through `writer` (its header must carry `epochMs` if the epoch is not 0); with
    /// `options.writer.writerThread`, encoding on a writer thread.
    public init(writer: TraceWriter, options: TraceRecorderOptions, epochMs: Int64) throws(TraceError) {
        core = CoreTraceRecorder(writer: writer, options: options, epochMs: epochMs)
        self.options = options
        handoff = options.writer.writerThread ? TraceHandoff(core: core) : nil
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
        ledgerSource = { [unowned run] in Ledger.read(run.world, statuses: run.statuses) }
        start(run.world)
    }

    /// Records a world and, if given, its oracle suite's verdicts (attached before or after this
    /// recorder: observers are called by stage, so the order decides nothing); the ledger uses
    /// the recorder's own status observer.
    public func attach(to world: World, suite: OracleSuite?) {
        suite?.onViolation = { [weak self] v in self?.violation(v) }
        attach(to: world)
    }

    /// Records a bare world (no oracles); the ledger uses the recorder's own status observer.
    public func attach(to world: World) {
        let statuses = LedgerStatusRecorder()
        world.addObserver(statuses)
        ownStatuses = statuses
        ledgerSource = { [unowned world] in Ledger.read(world, statuses: statuses) }
        start(world)
    }

    private func start(_ w: World) {
        world = w
        w.addObserver(self)
        // Before the first handed-over call: the writer thread has not touched the core yet.
        core.nextEvent = w.sim.counters.eventsDispatched
        if handoff == nil { core.digest = { [weak w] in w?.sim.digest.value ?? 0 } }
        core.setDeviceCount(w.deviceCount)
        let ids = w.userIds
        // The ids every block would otherwise define again: users, then devices (unique, in world order).
        var predefined: [String] = []
        var seen = Set<String>()
        for s in ids + (0..<w.deviceCount).map({ w.deviceId($0) }) where seen.insert(s).inserted { predefined.append(s) }
        core.predefine(predefined)
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
        if let handoff {
            handoff.record(event, at: time, digest: world?.sim.digest.value ?? 0)
        } else {
            core.record(event, at: time)
        }
    }

    private func violation(_ v: Violation) {
        record(.meta(.violation(v)), at: SimTime(nanoseconds: v.timeNanoseconds))
    }

    private func writeLedger(at time: SimTime) {
        guard !ledgerWritten, let ledgerSource else { return }
        ledgerWritten = true
        // Read off the world's stores here; the ledger's values, JSON and records are the
        // writer thread's work.
        let reading = ledgerSource()
        let size = options.ledgerPartBytes
        let write = { (core: CoreTraceRecorder) in
            let bytes = reading.ledger().compactJSON()
            let parts = max(1, (bytes.count + size - 1) / size)
            for p in 0..<parts {
                let lo = p * size
                let hi = min(bytes.count, lo + size)
                core.record(.meta(.ledger(part: p, parts: parts, json: Array(bytes[lo..<hi]))), at: time)
            }
        }
        if let handoff { handoff.perform(digest: world?.sim.digest.value ?? 0, write) } else { write(core) }
    }

    /// Writes the ledger (if `worldDidFinish` has not), a `runEnd` record and the footer with the
    /// world's final digest. Call once, after the run; rethrows the first write error.
    @discardableResult
    public func finish(stopReason: String) throws(TraceError) -> TraceWriteSummary {
        // With the writer thread, a write error is thrown by `close` below.
        if handoff == nil, let error { throw error }
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
        if let handoff { return try handoff.close(finalDigest: finalDigest) }
        return try core.close(finalDigest: finalDigest)
    }

    /// Writes everything recorded so far to the file as complete blocks and waits for it (as
    /// far as a run killed now gets); recording goes on after it.
    public func flush() throws(TraceError) {
        handoff?.drain()
        if let error { throw error }
        try writer.flush()
    }

    // MARK: - WorldObserver

    public func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        // Copy the payload out first: switching on `event.payload` copied the whole generic
        // `SimEvent` through its type metadata (~100 instructions per event).
        let time = event.time
        let payload = event.payload
        switch payload {
        case .deliver(let c, let toServer):
            let d = world.device(ofConnection: ConnectionID(UInt64(c))) ?? 0
            if let handoff {
                handoff.deliver(UInt64(c), device: d, toServer: toServer, at: time, digest: world.sim.digest.value)
            } else {
                core.deliver(UInt64(c), device: d, toServer: toServer, at: time)
            }
        case .clientTimer(let d, let t):
            if let handoff {
                handoff.clientTimer(device: Int(d), t, at: time, digest: world.sim.digest.value)
            } else {
                core.clientTimer(device: Int(d), t, at: time)
            }
        default:
            let r = KernelRecord(payload) { world.device(ofConnection: ConnectionID(UInt64($0))) ?? 0 }
            if let handoff { handoff.kernel(r, at: time, digest: world.sim.digest.value) } else { core.kernel(r, at: time) }
        }
    }

    public func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        if let handoff {
            handoff.clientInput(device: d, input, localMs: localMs, at: world.now, digest: world.sim.digest.value)
        } else {
            core.clientInput(device: d, input, localMs: localMs, at: world.now)
        }
    }

    public func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        let opened = applied.openedConnections
        if let handoff {
            handoff.clientEffects(device: d, applied.effects, opened: opened, at: world.now, digest: world.sim.digest.value)
        } else {
            core.clientEffects(device: d, applied.effects, opened: { opened[$0] }, at: world.now)
        }
    }

    public func world(_ world: World, serverInput: ServerInput, serverMs: Int64) {
        if let handoff {
            handoff.serverInput(serverInput, at: world.now, digest: world.sim.digest.value)
        } else {
            core.serverInput(serverInput, at: world.now)
        }
    }

    public func world(_ world: World, serverApplied applied: AppliedServerEffects) {
        if let handoff {
            handoff.serverEffects(applied.effects, at: world.now, digest: world.sim.digest.value)
        } else {
            core.serverEffects(applied.effects, at: world.now)
        }
    }

    public func world(_ world: World, note: WorldNote) {
        if let handoff {
            handoff.record(.world(WorldNoteRecord(note)), at: world.now, digest: world.sim.digest.value)
        } else {
            core.record(.world(WorldNoteRecord(note)), at: world.now)
        }
    }

    public func worldDidFinish(_ world: World) {
        writeLedger(at: world.now)
    }
}

// The records' initialisers from the world's own event types: the record schema
// (IMTraceFormat) knows no simulator.
extension KernelRecord {
    /// `device` of a world event (`-1` = world-wide in `WorldEvent`).
    public init(_ e: WorldEvent, deviceOf: (UInt32) -> Int) {
        switch e {
        case .appStart(let d): self = .appStart(device: Int(d))
        case .script(let s, let r): self = .script(step: Int(s), repeatIndex: Int(r))
        case .deliver(let c, let s): self = .deliver(ConnectionID(UInt64(c)), device: deviceOf(c), toServer: s)
        case .connectArrive(let c): self = .connectArrive(ConnectionID(UInt64(c)), device: deviceOf(c))
        case .connectComplete(let c): self = .connectComplete(ConnectionID(UInt64(c)), device: deviceOf(c))
        case .closeNotice(let c, let s, let r): self = .closeNotice(ConnectionID(UInt64(c)), device: deviceOf(c), toServer: s, reason: r)
        case .clientTimer(let d, let t): self = .clientTimer(device: Int(d), t)
        case .serverTimer(let t): self = .serverTimer(t)
        case .workload(let u, let k): self = .workload(user: Int(u), kind: k)
        case .faultStart(let k, let d): self = .faultStart(k, device: d >= 0 ? Int(d) : nil)
        case .faultEnd(let k, let d): self = .faultEnd(k, device: d >= 0 ? Int(d) : nil)
        case .network(let d, let up): self = .network(device: Int(d), up: up)
        case .serverRestart: self = .serverRestart
        case .heal: self = .heal
        case .convergenceCheck: self = .convergenceCheck
        case .end: self = .end
        }
    }
}

extension WorldNoteRecord {
    public init(_ n: WorldNote) {
        switch n {
        case .connectionOpened(let c, let d): self = .connectionOpened(c, device: d)
        case .connectionRefused(let c, let d): self = .connectionRefused(c, device: d)
        case .connectTimedOut(let c, let d): self = .connectTimedOut(c, device: d)
        case .bytesLost(let c, let s, let n): self = .bytesLost(c, toServer: s, count: n)
        case .fault(let k, let d, let s, let detail): self = .fault(k, device: d, started: s, detail: detail)
        case .lifecycle(let d, let c): self = .lifecycle(device: d, c)
        case .network(let d, let up): self = .network(device: d, up: up)
        case .clockStep(let d, let by): self = .clockStep(device: d, byMs: by)
        case .serverDown: self = .serverDown
        case .serverUp: self = .serverUp
        case .phase(let p): self = .phase(p)
        case .script(let s, let a): self = .script(step: s, action: a)
        }
    }
}
