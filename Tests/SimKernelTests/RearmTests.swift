import Testing
@testable import SimKernel

/// `Simulator.rearm` is `cancel` then `schedule` in one step: the same events in the same order,
/// the same counters and digest, whether the timer is pending, fired, cancelled or nil.
@Suite struct RearmTests {
    /// Handlers that re-arm per-node timers on every event, one with `rearm`, one with
    /// `cancel` + `schedule`; random timers (some due at once, some beyond a narrow wheel's span).
    struct Rearming: SimHandler {
        var useRearm: Bool
        var rng: RandomStream
        var timers: [EventID?]
        var seen: [(SimTime, NodeID, Probe)] = []

        mutating func arm(_ i: Int, in sim: Simulator<Probe>) {
            let d: SimDuration = switch rng.below(4) {
            case 0: .zero
            case 1: .nanoseconds(rng.uniform(1...300))
            case 2: .nanoseconds(rng.uniform(1...50_000))
            default: .nanoseconds(rng.uniform(1...5_000_000))
            }
            let payload = Probe.timer(Int(rng.below(1000)))
            let target = NodeID(UInt32(i))
            if useRearm {
                timers[i] = sim.rearm(timers[i], payload, to: target, after: d)
            } else {
                if let t = timers[i] { sim.cancel(t) }
                timers[i] = sim.schedule(payload, to: target, after: d)
            }
        }

        mutating func handle(_ event: SimEvent<Probe>, in sim: Simulator<Probe>) {
            seen.append((event.time, event.target, event.payload))
            let i = event.target.index
            // The fired timer is left in place half the time: re-arming a fired id schedules anew.
            if case .timer = event.payload, rng.below(2) == 0 { timers[i] = nil }
            arm(i, in: sim)
            arm(Int(rng.below(UInt64(timers.count))), in: sim)
            if rng.below(8) == 0, let t = timers[Int(rng.below(UInt64(timers.count)))] { sim.cancel(t) }
        }
    }

    @Test(arguments: [QueueLayout.heap, .wheel(bucketShift: 6), .wheel(bucketShift: 12, bucketCount: 1024)])
    func rearmIsCancelThenSchedule(layout: QueueLayout) {
        for seed: UInt64 in [1, 2, 3] {
            var results: [(Digest64, KernelCounters, [(SimTime, NodeID, Probe)])] = []
            for useRearm in [false, true] {
                let sim = Simulator<Probe>(seed: seed, queue: layout)
                for i in 0..<20 { sim.addNode("n\(i)") }
                var h = Rearming(useRearm: useRearm, rng: sim.streams.stream("rearm"), timers: Array(repeating: nil, count: 20))
                for i in 0..<20 { h.arm(i, in: sim) }
                sim.run(&h, maxEvents: 5_000)
                let consistent = sim.queue.checkInvariants()
                #expect(consistent)
                results.append((sim.digest, sim.counters, h.seen))
            }
            #expect(results[0].0 == results[1].0)
            #expect(results[0].1 == results[1].1)
            #expect(results[0].2.elementsEqual(results[1].2) { $0.0 == $1.0 && $0.1 == $1.1 && $0.2 == $1.2 })
            #expect(results[0].1.timersCancelled > 1_000 && results[0].1.cancelsIgnored > 0)
        }
    }

    @Test func rearmReusesAPendingTimersSlot() {
        let sim = Simulator<Probe>(seed: 1, queue: .wheel(bucketShift: 10))
        let n = sim.addNode("a")
        let first = sim.schedule(.timer(1), to: n, after: .milliseconds(1))
        let second = sim.rearm(first, .timer(2), to: n, after: .milliseconds(2))
        #expect(second.slot == first.slot && second.sequence > first.sequence)
        #expect(!sim.isPending(first) && sim.isPending(second))
        #expect(!sim.cancel(first))
        let third = sim.rearm(nil, .timer(3), to: n, after: .milliseconds(3))
        #expect(third.slot != second.slot)
        var r = Recorder()
        sim.run(&r)
        #expect(r.seen.map(\.2) == [.timer(2), .timer(3)])
        #expect(sim.counters.timersCancelled == 1 && sim.counters.eventsScheduled == 3)
        // Re-arming a fired id counts as an ignored cancel and schedules anew.
        _ = sim.rearm(second, .timer(4), to: n, after: .zero)
        #expect(sim.counters.cancelsIgnored == 2 && sim.pendingCount == 1)
    }
}
