import Benchmarks
import PropertyBased
import Testing
@testable import SimKernel

/// `EventQueue` is noncopyable; a box lets the tests keep several in an array.
final class QueueBox {
    var q: EventQueue<Int>
    init(_ layout: QueueLayout) { q = EventQueue(layout: layout) }
}

/// The timing wheel beside the heap (`QueueLayout.wheel`) must hand out exactly the events the
/// heap alone does, in the same order: the layout is a cost, never a behaviour.
@Suite struct QueueLayoutTests {
    /// Wheels of several widths and bucket counts (one bitmap word, several, the most).
    static let wheelLayouts: [QueueLayout] = [
        .wheel(bucketShift: 4), .wheel(bucketShift: 6), .wheel(bucketShift: 10),
        .wheel(bucketShift: 4, bucketCount: 256), .wheel(bucketShift: 5, bucketCount: 4096),
    ]

    /// Random schedule/cancel/pop programs run on a heap queue and on wheel queues of several
    /// bucket widths side by side; every pop and peek must agree, ids included.
    @Test func wheelPopsWhatTheHeapPops() async {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = RandomStream(seed: seed)
            var heap = EventQueue<Int>(layout: .heap)
            let wheels = Self.wheelLayouts.map(QueueBox.init)
            var pending: [EventID] = []
            var now: Int64 = 0
            var next = 0
            for _ in 0..<600 {
                switch rng.below(8) {
                case 0, 1, 2:
                    // Near (same bucket), within the wheel's span, far beyond it, or the end of time.
                    let t: Int64 = switch rng.below(5) {
                    case 0: now
                    case 1: now + rng.uniform(0...40)
                    case 2: now + rng.uniform(0...5_000)
                    case 3: now + rng.uniform(0...2_000_000)
                    default: rng.chance(Ratio(1, 10)) ? .max : now + rng.uniform(0...200)
                    }
                    let id = heap.insert(next, to: NodeID(0), at: t)
                    for i in wheels.indices {
                        let w = wheels[i].q.insert(next, to: NodeID(0), at: t)
                        #expect(w.sequence == id.sequence)
                    }
                    pending.append(id); next += 1
                case 3, 4:
                    if let pick = rng.pick(Array(pending.indices)) {
                        let victim = pending.remove(at: pick)
                        let a = heap.cancel(victim)
                        for i in wheels.indices {
                            // Slots may differ between layouts (freed in another order): cancel by sequence.
                            let wid = wheels[i].q.pendingID(sequence: victim.sequence)
                            #expect(wid != nil)
                            if let wid { #expect(wheels[i].q.cancel(wid) == a) }
                        }
                    }
                case 5:
                    let p = heap.peekTime()
                    for i in wheels.indices { #expect(wheels[i].q.peekTime() == p) }
                default:
                    let e = heap.popMin()
                    if let e { if e.time != .max { now = max(now, e.time) }; pending.removeAll { $0.sequence == e.sequence } }
                    for i in wheels.indices {
                        let w = wheels[i].q.popMin()
                        #expect(w?.sequence == e?.sequence && w?.time == e?.time && w?.payload == e?.payload)
                    }
                }
                for w in wheels {
                    #expect(w.q.liveCount == heap.liveCount)
                    let consistent = w.q.checkInvariants()
                    #expect(consistent)
                }
                let consistent = heap.checkInvariants()
                #expect(consistent)
            }
            var rest: [UInt64] = []
            while let e = heap.popMin() { rest.append(e.sequence) }
            for i in wheels.indices {
                var got: [UInt64] = []
                while let e = wheels[i].q.popMin() { got.append(e.sequence) }
                let consistent = wheels[i].q.checkInvariants(), held = wheels[i].q.heapCount
                #expect(consistent && held == 0)
                #expect(got == rest)
            }
        }
    }

    /// Cancel-heavy bursts at one instant keep the wheel's memory bounded by the live events.
    @Test func cancelledTimersDoNotPileUpInTheWheel() {
        var q = EventQueue<Int>(layout: .wheel(bucketShift: 16))
        let keep = q.insert(0, to: NodeID(0), at: 5_000_000)
        for i in 0..<100_000 {
            let id = q.insert(i, to: NodeID(0), at: 1_000_000)
            q.cancel(id)
        }
        #expect(q.liveCount == 1)
        #expect(q.heapCount <= 4 * q.liveCount + 4096 + 1)
        let consistent = q.checkInvariants()
        #expect(consistent)
        #expect(q.popMin()?.sequence == keep.sequence)
        #expect(q.popMin() == nil)
    }

    /// The same burst on a wide wheel (4096 buckets: a bitmap of 64 words and a summary word).
    @Test func cancelledTimersDoNotPileUpInAWideWheel() {
        var q = EventQueue<Int>(layout: .wheel(bucketShift: 10, bucketCount: 4096))
        let keep = q.insert(0, to: NodeID(0), at: 5_000_000)
        for i in 0..<100_000 {
            let id = q.insert(i, to: NodeID(0), at: 1_000_000 + Int64(i % 5000) * 1024)
            q.cancel(id)
        }
        #expect(q.liveCount == 1)
        #expect(q.heapCount <= 4 * q.liveCount + 4096 + 1)
        let consistent = q.checkInvariants()
        #expect(consistent)
        #expect(q.popMin()?.sequence == keep.sequence)
        #expect(q.popMin() == nil)
    }

    /// Payloads that own memory: cancelled, popped and still-pending ones are released exactly
    /// once (the queue frees what is pending when it goes away).
    @Test func payloadsAreReleasedOnCancelPopAndDeinit() {
        final class Counter { var alive = 0 }
        final class Tracked {
            let counter: Counter
            init(_ c: Counter) { counter = c; c.alive += 1 }
            deinit { counter.alive -= 1 }
        }
        let counter = Counter()
        do {
            var q = EventQueue<Tracked>(layout: .wheel(bucketShift: 6, bucketCount: 128))
            var ids: [EventID] = []
            for i in 0..<300 { ids.append(q.insert(Tracked(counter), to: NodeID(0), at: Int64(i * 37 % 20_000))) }
            #expect(counter.alive == 300)
            for id in ids.prefix(100) { q.cancel(id) }
            #expect(counter.alive == 200)
            for _ in 0..<50 { _ = q.popMin() }
            #expect(counter.alive == 150)
            let consistent = q.checkInvariants()
            #expect(consistent)
        }
        #expect(counter.alive == 0)
    }

    /// `KeyHeap` keeps a short run sorted (minimum last) and a long one as a 4-ary heap; runs of
    /// every size around the limit, filled (ranked) or heapified, then inserts that overflow the
    /// sorted run into a heap, must pop in ascending order.
    @Test func keyHeapSortedRunAndHeapPopInOrder() {
        var rng = RandomStream(seed: 39)
        for n in 0...(KeyHeap.sortedLimit + 3) {
            for extra in [0, 1, 5, 2 * KeyHeap.sortedLimit] {
                var h = KeyHeap()
                defer { h.p.deallocate() }
                var model: [UInt128] = []
                for _ in 0..<n { model.append(UInt128(rng.below(50)) << 64 | UInt128(rng.next())) }
                // Half the time through `fill` (a poured bucket), else appended and heapified.
                let viaFill = rng.below(2) == 0
                if viaFill {
                    model.withUnsafeMutableBufferPointer { h.fill(from: $0.baseAddress!, count: n) }
                } else {
                    for k in model { h.appendUnordered(k) }
                    h.heapify()
                }
                #expect(h.sorted == (n <= KeyHeap.sortedLimit))
                for _ in 0..<extra {
                    let k = UInt128(rng.below(50)) << 64 | UInt128(rng.next())
                    h.insert(k); model.append(k)
                }
                var got: [UInt128] = []
                while let m = h.min { got.append(m); h.removeMin() }
                #expect(got == model.sorted())
            }
        }
    }

    /// The kernel workload (`imsim bench kernel`) on both layouts: same digest, order and counters.
    @Test func kernelBenchmarkIsTheSameOnBothLayouts() {
        for seed: UInt64 in [1, 7] {
            let heap = KernelBenchmark.run(seed: seed, nodes: 40, events: 30_000, queue: .heap)
            let wheel = KernelBenchmark.run(seed: seed, nodes: 40, events: 30_000, queue: KernelBenchmark.wheel)
            let narrow = KernelBenchmark.run(seed: seed, nodes: 40, events: 30_000, queue: .wheel(bucketShift: 8))
            let wide = KernelBenchmark.run(seed: seed, nodes: 40, events: 30_000, queue: .wheel(bucketShift: 8, bucketCount: 4096))
            #expect(wheel == heap)
            #expect(narrow == heap)
            #expect(wide == heap)
            #expect(heap.counters.timersCancelled > 0)
        }
    }
}
