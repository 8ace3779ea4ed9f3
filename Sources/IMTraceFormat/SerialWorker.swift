import Foundation

/// A thread that processes items strictly in submission order, off the thread that submits them.
///
/// The trace's writer and recorder use it to keep encoding, compression and file I/O off the
/// simulation thread (the way FoundationDB's trace log and Perfetto's service do). Nothing flows
/// back into the simulation: items are values the submitter no longer touches, and the worker's
/// output (trace bytes) is the same as processing them inline, so a run stays a pure function of
/// (scenario, seed, build).
///
/// Bounded: at most `maxQueued` items wait or are in process; a submitter that gets further
/// ahead waits. Items are recycled: `submit` hands an item over and gives back a processed one
/// (emptied by `process`), so steady state allocates nothing. The first error `process` throws
/// is kept; later items are dropped and `submit`, `drain` and `stop` report it.
final class SerialWorker<Item>: @unchecked Sendable {
    let maxQueued: Int
    private let process: (inout Item) throws(TraceError) -> Int
    private let makeItem: () -> Item
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [Item] = []
    /// An item taken off `queue` is being processed.
    private var busy = false
    private var spare: [Item] = []
    private var failure: TraceError?
    private var closing = false
    private var running = true
    private var done = 0
    private var progress = 0

    /// `process` handles one item (and empties it for reuse); what it returns is published as
    /// `progress`. `makeItem` makes a fresh empty item when none is spare.
    init(name: String, maxQueued: Int, makeItem: @escaping () -> Item,
         process: @escaping (inout Item) throws(TraceError) -> Int) {
        precondition(maxQueued >= 1)
        self.maxQueued = maxQueued
        self.makeItem = makeItem
        self.process = process
        let t = Thread { [self] in run() }
        t.name = name
        t.start()
    }

    /// Items processed so far, and the value `process` returned for the last one.
    var status: (processed: Int, progress: Int) {
        condition.lock(); defer { condition.unlock() }
        return (done, progress)
    }

    /// Queues `item` (waiting while `maxQueued` are pending) and replaces it with an empty one.
    /// Throws the failure of an earlier item; `item` is then left as it was.
    func submit(_ item: inout Item) throws(TraceError) {
        condition.lock()
        defer { condition.unlock() }
        while failure == nil && queue.count + (busy ? 1 : 0) >= maxQueued { condition.wait() }
        if let failure { throw failure }
        let next = spare.popLast() ?? makeItem()
        queue.append(item)
        item = next
        condition.signal()
    }

    /// Waits until every submitted item is processed; throws the first failure.
    func drain() throws(TraceError) {
        condition.lock()
        defer { condition.unlock() }
        while failure == nil && (busy || !queue.isEmpty) { condition.wait() }
        if let failure { throw failure }
    }

    /// Processes what is queued, then ends the thread. The thread holds the worker: its owner
    /// must call this (idempotent).
    func stop() {
        condition.lock()
        closing = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            while queue.isEmpty && !closing { condition.wait() }
            if queue.isEmpty { break }
            var item = queue.removeFirst()  // moved out: `process` mutates it without a copy
            busy = true
            condition.unlock()
            var error: TraceError?
            var p = 0
            do throws(TraceError) { p = try process(&item) } catch let e { error = e }
            condition.lock()
            busy = false
            if let error {
                failure = error
                queue.removeAll()
            } else {
                done += 1
                progress = p
                if spare.count < maxQueued { spare.append(item) }
            }
            condition.broadcast()
        }
        running = false
        condition.broadcast()
        condition.unlock()
    }
}
