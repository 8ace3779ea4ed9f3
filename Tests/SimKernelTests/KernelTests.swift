import Benchmarks
import Testing
@testable import SimKernel

/// A payload that records what it is, for order assertions.
enum Probe: SimPayload, Sendable, Equatable {
    case tick(Int)
    case timer(Int)
    var kind: UInt16 { if case .tick = self { 1 } else { 2 } }
    var digest: UInt64 {
        switch self {
        case .tick(let i), .timer(let i): UInt64(i)
        }
    }
}

struct Recorder: SimHandler {
    var seen: [(SimTime, NodeID, Probe)] = []
    mutating func handle(_ event: SimEvent<Probe>, in sim: Simulator<Probe>) {
        seen.append((event.time, event.target, event.payload))
    }
}

@Suite struct KernelTests {
    @Test func dispatchesInTimeOrder() {
        let sim = Simulator<Probe>(seed: 1)
        let n = sim.addNode("a")
        sim.schedule(.tick(3), to: n, at: SimTime(nanoseconds: 30))
        sim.schedule(.tick(1), to: n, at: SimTime(nanoseconds: 10))
        sim.schedule(.tick(2), to: n, at: SimTime(nanoseconds: 20))
        var r = Recorder()
        #expect(sim.run(&r) == .queueEmpty)
        #expect(r.seen.map(\.2) == [.tick(1), .tick(2), .tick(3)])
        #expect(sim.now == SimTime(nanoseconds: 30))
    }

    @Test func tiesBreakByInsertionOrder() {
        let sim = Simulator<Probe>(seed: 1)
        let a = sim.addNode("a"), b = sim.addNode("b")
        let t = SimTime(nanoseconds: 5)
        for i in 0..<200 { sim.schedule(.tick(i), to: i % 2 == 0 ? a : b, at: t) }
        var r = Recorder()
        sim.run(&r)
        #expect(r.seen.map(\.2) == (0..<200).map { .tick($0) })
    }

    @Test func cancelledTimersNeverFire() {
        let sim = Simulator<Probe>(seed: 1)
        let n = sim.addNode("a")
        var ids: [EventID] = []
        for i in 0..<100 { ids.append(sim.schedule(.timer(i), to: n, after: .milliseconds(Int64(i)))) }
        for (i, id) in ids.enumerated() where i % 3 != 0 { #expect(sim.cancel(id)) }
        #expect(sim.pendingCount == 34)
        var r = Recorder()
        sim.run(&r)
        #expect(r.seen.map(\.2) == stride(from: 0, to: 100, by: 3).map { .timer($0) })
        #expect(sim.counters.timersCancelled == 66)
    }

    @Test func cancellingFiredUnknownOrTwiceIsHarmless() {
        let sim = Simulator<Probe>(seed: 1)
        let n = sim.addNode("a")
        let fired = sim.schedule(.timer(1), to: n, after: .seconds(1))
        let twice = sim.schedule(.timer(2), to: n, after: .seconds(2))
        var r = Recorder()
        sim.run(&r, until: SimTime(nanoseconds: 1_500_000_000))
        #expect(!sim.cancel(fired))
        #expect(sim.cancel(twice))
        #expect(!sim.cancel(twice))
        #expect(!sim.cancel(EventID(slot: 999, sequence: 12345)))
        // A slot reused by a new event is not cancelled by a stale id.
        let fresh = sim.schedule(.timer(3), to: n, after: .seconds(1))
        #expect(!sim.cancel(fired))
        #expect(!sim.cancel(twice))
        #expect(sim.isPending(fresh))
        sim.run(&r)
        #expect(r.seen.map(\.2) == [.timer(1), .timer(3)])
        #expect(sim.counters.cancelsIgnored == 5)
    }

    @Test func runLimits() {
        let sim = Simulator<Probe>(seed: 1)
        let n = sim.addNode("a")
        for i in 1...10 { sim.schedule(.tick(i), to: n, at: SimTime(nanoseconds: Int64(i) * 1_000)) }
        var r = Recorder()
        #expect(sim.run(&r, until: SimTime(nanoseconds: 3_500)) == .reachedTime(SimTime(nanoseconds: 3_500)))
        #expect(r.seen.count == 3)
        #expect(sim.now == SimTime(nanoseconds: 3_500))
        #expect(sim.run(&r, maxEvents: 5) == .reachedEventCount(5))
        #expect(r.seen.count == 5)
        #expect(sim.run(&r, stopWhen: { $0.payload == .tick(7) }) == .predicate)
        #expect(r.seen.last?.2 == .tick(7))
        #expect(sim.run(&r) == .queueEmpty)
        #expect(r.seen.count == 10)
        // An event exactly at `until` is dispatched.
        sim.schedule(.tick(11), to: n, at: SimTime(nanoseconds: 20_000))
        #expect(sim.run(&r, until: SimTime(nanoseconds: 20_000)) == .reachedTime(SimTime(nanoseconds: 20_000)) || r.seen.count == 11)
        #expect(r.seen.count == 11)
    }

    @Test func requestStopEndsTheRunAfterTheCurrentEvent() {
        struct Stopper: SimHandler {
            var count = 0
            mutating func handle(_ event: SimEvent<Probe>, in sim: Simulator<Probe>) {
                count += 1
                if count == 4 { sim.requestStop() }
            }
        }
        let sim = Simulator<Probe>(seed: 1)
        let n = sim.addNode("a")
        for i in 0..<10 { sim.schedule(.tick(i), to: n, after: .nanoseconds(Int64(i))) }
        var s = Stopper()
        #expect(sim.run(&s) == .stopRequested)
        #expect(s.count == 4)
    }

    @Test func countersTrackDepthAndWork() {
        let sim = Simulator<Probe>(seed: 1)
        let n = sim.addNode("a")
        for i in 0..<50 { sim.schedule(.tick(i), to: n, after: .nanoseconds(Int64(i))) }
        var r = Recorder()
        sim.run(&r)
        #expect(sim.counters.maxQueueDepth == 50)
        #expect(sim.counters.eventsDispatched == 50)
        #expect(sim.counters.eventsScheduled == 50)
    }

    @Test func sameSeedSameDigestAndOrder() {
        let a = KernelBenchmark.run(seed: 42, nodes: 50, events: 20_000)
        let b = KernelBenchmark.run(seed: 42, nodes: 50, events: 20_000)
        #expect(a == b)
        #expect(a.events == 20_000)
        #expect(a.counters.timersCancelled > UInt64(a.timeoutsFired) * 5, "most timers are cancelled")
    }

    @Test func differentSeedsDifferentDigests() {
        let digests = Set((1...20).map { KernelBenchmark.run(seed: $0, nodes: 20, events: 2_000).digest })
        #expect(digests.count == 20)
    }

    @Test func digestSeesPayloadKindNodeAndTime() {
        func digest(_ build: (Simulator<Probe>, NodeID, NodeID) -> Void) -> UInt64 {
            let sim = Simulator<Probe>(seed: 1)
            let a = sim.addNode("a"), b = sim.addNode("b")
            build(sim, a, b)
            var r = Recorder()
            sim.run(&r)
            return sim.digest.value
        }
        let base = digest { s, a, _ in s.schedule(.tick(1), to: a, after: .seconds(1)) }
        #expect(base != digest { s, a, _ in s.schedule(.tick(2), to: a, after: .seconds(1)) })
        #expect(base != digest { s, a, _ in s.schedule(.timer(1), to: a, after: .seconds(1)) })
        #expect(base != digest { s, _, b in s.schedule(.tick(1), to: b, after: .seconds(1)) })
        #expect(base != digest { s, a, _ in s.schedule(.tick(1), to: a, after: .seconds(2)) })
        #expect(base == digest { s, a, _ in s.schedule(.tick(1), to: a, after: .seconds(1)) })
    }

    @Test func rejectsSchedulingInThePastByDesign() {
        // schedule(after:) clamps negative delays to now instead of trapping.
        let sim = Simulator<Probe>(seed: 1)
        let n = sim.addNode("a")
        sim.schedule(.tick(1), to: n, after: .nanoseconds(-5))
        var r = Recorder()
        sim.run(&r)
        #expect(r.seen.first?.0 == .zero)
    }
}
