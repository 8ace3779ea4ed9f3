import IMClient
import IMServer
import IMWire
import SimKernel

/// Moves a recorder's encoding off the simulation thread: the simulation thread appends each
/// observed value as it is (the cores' own input and effect values, retained, not copied or
/// encoded) with its time and the run's digest at that moment; a writer thread runs them, in
/// order, through a `CoreTraceRecorder` that encodes, compresses and writes.
///
/// The trace is the same file as encoding inline: the core sees the same calls in the same
/// order, and the one value it read from the world while encoding — the digest a block's
/// checkpoint holds — is taken on the simulation thread at the call and handed over with it
/// (`CoreTraceRecorder.digest` reads it back). Nothing flows back into the run, so thread timing
/// decides nothing. Handed-over values are immutable (`Sendable` enums and arrays the cores
/// return fresh each step).
///
/// Bounded like the writer: a batch of up to `batchSize` calls is filled while at most
/// `maxQueued` wait or are being encoded; a simulation thread further ahead waits.
public final class TraceHandoff {
    static let batchSize = 2048
    static let maxQueued = 2

    /// The recorder the writer thread drives. Touch it from the calling thread only before the
    /// first handed-over call or after `finish`.
    public let core: CoreTraceRecorder
    private let worker: SerialWorker<Batch>
    @exclusivity(unchecked) private var batch = Batch()
    private var finished = false

    /// `core.digest` is replaced: its checkpoints take the digest handed over with each call.
    public init(core: CoreTraceRecorder) {
        self.core = core
        let current = DigestCell()
        core.digest = { [current] in current.value }
        batch.reserve()
        worker = SerialWorker(name: "imsim-trace-writer", maxQueued: Self.maxQueued,
                              makeItem: { var b = Batch(); b.reserve(); return b },
                              process: { [core, current] (b: inout Batch) throws(TraceError) -> Int in
                                  b.run(on: core, digest: current)
                                  // The values' last references go here, on the writer thread.
                                  // Emptied instead on the simulation thread when the batch came
                                  // back, the simulation thread's quickstart cost 3.5M more
                                  // instructions (~600 a handed-over call): freeing in bursts,
                                  // two batches late, kept none of malloc's fast paths.
                                  b.removeAll()
                                  return 0
                              })
    }

    deinit { worker.stop() }

    // MARK: - The core's calls, handed over

    @inline(__always) private func add(_ e: Entry) {
        batch.entries.append(e)
        if batch.entries.count >= Self.batchSize { submit() }
    }

    /// `CoreTraceRecorder.deliver`.
    public func deliver(_ c: UInt64, device d: Int, toServer: Bool, at time: SimTime, digest: UInt64) {
        add(Entry(op: .deliver, flag: toServer, device: d, value: c, time: time, digest: digest))
    }

    /// `CoreTraceRecorder.clientTimer`.
    public func clientTimer(device d: Int, _ t: ClientTimer, at time: SimTime, digest: UInt64) {
        batch.clientTimers.append(t)
        add(Entry(op: .clientTimer, flag: false, device: d, value: 0, time: time, digest: digest))
    }

    /// `CoreTraceRecorder.kernel`.
    public func kernel(_ r: KernelRecord, at time: SimTime, digest: UInt64) {
        batch.kernels.append(r)
        add(Entry(op: .kernel, flag: false, device: 0, value: 0, time: time, digest: digest))
    }

    /// `CoreTraceRecorder.clientInput`.
    public func clientInput(device d: Int, _ input: ClientInput, localMs: Int64, at now: SimTime, digest: UInt64) {
        batch.clientInputs.append(input)
        add(Entry(op: .clientInput, flag: false, device: d, value: UInt64(bitPattern: localMs), time: now, digest: digest))
    }

    /// `CoreTraceRecorder.clientEffects`, with the connection each `openConnection` opened.
    public func clientEffects(device d: Int, _ effects: [ClientEffect], opened: [ConnectionID], at now: SimTime, digest: UInt64) {
        batch.clientEffects.append(effects)
        batch.opened.append(opened)
        add(Entry(op: .clientEffects, flag: false, device: d, value: 0, time: now, digest: digest))
    }

    /// `CoreTraceRecorder.serverInput`.
    public func serverInput(_ input: ServerInput, at now: SimTime, digest: UInt64) {
        batch.serverInputs.append(input)
        add(Entry(op: .serverInput, flag: false, device: 0, value: 0, time: now, digest: digest))
    }

    /// `CoreTraceRecorder.serverEffects`.
    public func serverEffects(_ effects: [ServerEffect], at now: SimTime, digest: UInt64) {
        batch.serverEffects.append(effects)
        add(Entry(op: .serverEffects, flag: false, device: 0, value: 0, time: now, digest: digest))
    }

    /// `CoreTraceRecorder.record`.
    public func record(_ event: TraceEvent, at time: SimTime, digest: UInt64) {
        batch.events.append(event)
        add(Entry(op: .event, flag: false, device: 0, value: 0, time: time, digest: digest))
    }

    /// Runs `task` on the writer thread, in order with the calls around it (work that needs no
    /// world: e.g. turning a captured ledger into its records).
    public func perform(digest: UInt64, _ task: @escaping (CoreTraceRecorder) -> Void) {
        batch.tasks.append(task)
        add(Entry(op: .task, flag: false, device: 0, value: 0, time: .zero, digest: digest))
    }

    // MARK: - Draining

    private func submit() {
        guard !batch.entries.isEmpty else { return }
        // After `finish` nothing is recorded (as the core records nothing once closed).
        if finished { batch.removeAll(); return }
        // The core keeps its own first error; the worker's process never throws.
        try? worker.submit(&batch)
    }

    /// Hands over what is pending and waits until the writer thread has run it all. After it,
    /// `core` may be read on the calling thread until the next call is handed over.
    public func drain() {
        guard !finished else { return }
        submit()
        try? worker.drain()
    }

    /// Closes the trace on the writer thread (its last block is compressed there too), then ends
    /// the thread; `core.close` on the calling thread once the thread has ended.
    public func close(finalDigest: UInt64) throws(TraceError) -> TraceWriteSummary {
        guard !finished else { return try core.close(finalDigest: finalDigest) }
        var result: Result<TraceWriteSummary, TraceError> = .failure(.writerClosed)
        perform(digest: 0) { core in
            do throws(TraceError) { result = .success(try core.close(finalDigest: finalDigest)) } catch { result = .failure(error) }
        }
        finish()
        return try result.get()
    }

    /// Drains and ends the writer thread (idempotent). `core` then belongs to the caller.
    public func finish() {
        guard !finished else { return }
        drain()
        finished = true
        worker.stop()
    }

    // MARK: - Batches

    private enum Op: UInt8 { case deliver, clientTimer, kernel, clientInput, clientEffects, serverInput, serverEffects, event, task }

    /// One handed-over call: plain fields; its payload, if any, is next in its kind's array.
    private struct Entry {
        var op: Op
        var flag: Bool
        var device: Int
        var value: UInt64
        var time: SimTime
        var digest: UInt64
    }

    private final class DigestCell: @unchecked Sendable {
        var value: UInt64 = 0
    }

    private struct Batch {
        var entries: [Entry] = []
        var clientTimers: [ClientTimer] = []
        var kernels: [KernelRecord] = []
        var clientInputs: [ClientInput] = []
        var clientEffects: [[ClientEffect]] = []
        var opened: [[ConnectionID]] = []
        var serverInputs: [ServerInput] = []
        var serverEffects: [[ServerEffect]] = []
        var events: [TraceEvent] = []
        var tasks: [(CoreTraceRecorder) -> Void] = []

        mutating func reserve() {
            entries.reserveCapacity(TraceHandoff.batchSize)
            clientEffects.reserveCapacity(TraceHandoff.batchSize / 2)
            opened.reserveCapacity(TraceHandoff.batchSize / 2)
            serverEffects.reserveCapacity(TraceHandoff.batchSize / 4)
            clientInputs.reserveCapacity(TraceHandoff.batchSize / 4)
            serverInputs.reserveCapacity(TraceHandoff.batchSize / 4)
            clientTimers.reserveCapacity(TraceHandoff.batchSize / 8)
            kernels.reserveCapacity(TraceHandoff.batchSize / 8)
        }

        mutating func removeAll() {
            entries.removeAll(keepingCapacity: true)
            clientTimers.removeAll(keepingCapacity: true)
            kernels.removeAll(keepingCapacity: true)
            clientInputs.removeAll(keepingCapacity: true)
            clientEffects.removeAll(keepingCapacity: true)
            opened.removeAll(keepingCapacity: true)
            serverInputs.removeAll(keepingCapacity: true)
            serverEffects.removeAll(keepingCapacity: true)
            events.removeAll(keepingCapacity: true)
            tasks.removeAll(keepingCapacity: true)
        }

        /// The calls, in order, on `core` (the writer thread).
        func run(on core: CoreTraceRecorder, digest: DigestCell) {
            var timer = 0, kernel = 0, cin = 0, ceff = 0, sin = 0, seff = 0, event = 0, task = 0
            for e in entries {
                digest.value = e.digest
                switch e.op {
                case .deliver:
                    core.deliver(e.value, device: e.device, toServer: e.flag, at: e.time)
                case .clientTimer:
                    core.clientTimer(device: e.device, clientTimers[timer], at: e.time)
                    timer += 1
                case .kernel:
                    core.kernel(kernels[kernel], at: e.time)
                    kernel += 1
                case .clientInput:
                    core.clientInput(device: e.device, clientInputs[cin], localMs: Int64(bitPattern: e.value), at: e.time)
                    cin += 1
                case .clientEffects:
                    let opened = self.opened[ceff]
                    core.clientEffects(device: e.device, clientEffects[ceff], opened: { opened[$0] }, at: e.time)
                    ceff += 1
                case .serverInput:
                    core.serverInput(serverInputs[sin], at: e.time)
                    sin += 1
                case .serverEffects:
                    core.serverEffects(serverEffects[seff], at: e.time)
                    seff += 1
                case .event:
                    core.record(events[event], at: e.time)
                    event += 1
                case .task:
                    tasks[task](core)
                    task += 1
                }
            }
        }
    }
}
