import IMClient
import IMServer
import SimKernel
import Testing
@testable import IMWorld

/// The network's and the world's per-event plumbing after the session-32 instruction cuts:
/// same segments, same draws, same order, same observer calls.
@Suite struct NetworkPlumbingTests {
    /// A split write as it was written before (cut points in an array, sorted, then the end).
    static func arraySplit(_ bytes: [UInt8], arrival: SimTime, rng: inout RandomStream) -> [(SimTime, [UInt8])] {
        var arrival = arrival
        var out: [(SimTime, [UInt8])] = []
        let pieces = bytes.count >= 3 ? rng.uniform(2..<4) : 2
        var cuts: [Int] = []
        for _ in 1..<pieces { cuts.append(rng.uniform(1..<bytes.count)) }
        cuts.sort()
        var from = 0
        for cut in cuts + [bytes.count] where cut > from {
            out.append((arrival, Array(bytes[from..<cut])))
            from = cut
            arrival += rng.uniform(SimDuration.microseconds(50)...SimDuration.milliseconds(2))
        }
        return out
    }

    @Test func splitSegmentsAndLaterDrawsAreTheArrayVersions() {
        for seed in UInt64(1)...600 {
            // Short writes make equal and descending cut points common.
            let bytes = (0..<(Int(seed % 7) + 2)).map { UInt8($0) }
            var a = RandomStream(seed: seed)
            var b = a
            var p = Pipe()
            _ = p.write(bytes, now: .zero, latency: .milliseconds(10), bandwidth: nil, split: true, rng: &a)
            let want = Self.arraySplit(bytes, arrival: SimTime.zero + .milliseconds(10), rng: &b)
            #expect(p.segments.map(\.arrival) == want.map(\.0))
            #expect(p.segments.map(\.bytes) == want.map(\.1))
            #expect(a.next() == b.next())
        }
    }

    /// Writes due at the same instant arrive in write order, whether the pipe drains fully
    /// between reads (its storage is reused) or keeps a backlog (its read prefix is trimmed).
    @Test func writesDueAtTheSameInstantArriveInWriteOrder() {
        for drainEachRound in [true, false] {
            var p = Pipe()
            var rng = RandomStream(seed: 9)
            var sent: [UInt8] = []
            var got: [UInt8] = []
            var t = SimTime.zero
            for round in 0..<300 {
                for k in 0..<3 {
                    let b = UInt8(truncatingIfNeeded: round * 3 + k)
                    sent.append(b)
                    _ = p.write([b], now: t, latency: .milliseconds(5), bandwidth: nil, split: false, rng: &rng)
                }
                // Reading at `t` leaves the last 5 ms of writes queued (a backlog of ~15 segments).
                got += p.takeDue(now: drainEachRound ? t + .milliseconds(5) : t)
                if drainEachRound { #expect(p.isEmpty && p.segments.isEmpty) }
                t += .milliseconds(1)
            }
            while let h = p.headArrival { got += p.takeDue(now: h) }
            #expect(got == sent)
            #expect(p.isEmpty && p.bytesQueued == 0)
        }
    }

    @Test func aWriteToAnEmptyPipeChangesItsHeadAndLaterOnesDoNot() {
        var p = Pipe()
        var rng = RandomStream(seed: 4)
        #expect(p.write([1], now: .zero, latency: .milliseconds(5), bandwidth: nil, split: false, rng: &rng))
        #expect(!p.write([2], now: .zero, latency: .milliseconds(5), bandwidth: nil, split: false, rng: &rng))
        #expect(p.takeDue(now: SimTime.zero + .milliseconds(5)) == [1, 2])
        #expect(p.write([3], now: SimTime.zero + .milliseconds(5), latency: .milliseconds(5), bandwidth: nil, split: false, rng: &rng))
    }

    final class Heard: WorldObserver {
        let name: String
        let stage: ObserverStage
        let log: Log
        init(_ name: String, _ stage: ObserverStage, _ log: Log) { self.name = name; self.stage = stage; self.log = log }
        func world(_ world: World, dispatching event: SimEvent<WorldEvent>) { log.lines.append(name) }
        func world(_ world: World, note: WorldNote) { log.notes.append(name) }
    }
    final class Log { var lines: [String] = []; var notes: [String] = [] }

    /// Observers are called by stage, in adding order within a stage, each once per fact; one
    /// added between two runs hears the facts after it.
    @Test func observersHearEachFactOnceByStage() throws {
        let world = try World(scenario: pair(), seed: 1)
        let log = Log()
        world.addObserver(Heard("w1", .watch, log))
        world.addObserver(Heard("j", .judge, log))
        world.addObserver(Heard("w2", .watch, log))
        world.run(until: SimTime.zero + .seconds(2))
        #expect(!log.lines.isEmpty && log.lines.count % 3 == 0)
        #expect(log.lines == Array(repeating: ["j", "w1", "w2"], count: log.lines.count / 3).flatMap { $0 })
        let before = log.lines.count
        world.addObserver(Heard("j2", .judge, log))
        world.run(until: SimTime.zero + .seconds(100))
        let after = Array(log.lines[before...])
        #expect(!after.isEmpty && after.count % 4 == 0)
        #expect(after == Array(repeating: ["j", "j2", "w1", "w2"], count: after.count / 4).flatMap { $0 })
    }

    /// A re-armed timer replaces the pending one (one event pending, the last one).
    @Test func aReArmedTimerReplacesThePendingOne() throws {
        let world = try World(scenario: pair(), seed: 1)
        world.run(until: SimTime.zero + .seconds(5))
        let pending = world.sim.pendingCount
        let clientHad = world.devices[0].timers[.poll] != nil ? 1 : 0
        let serverHad = world.server.timers[.offlineExpiry] != nil ? 1 : 0
        world.applyClientEffects([.setTimer(.poll, after: .seconds(30))], device: 0)
        world.applyClientEffects([.setTimer(.poll, after: .seconds(40))], device: 0)
        #expect(world.sim.pendingCount == pending + 1 - clientHad)
        let id = try #require(world.devices[0].timers[.poll])
        #expect(world.sim.isPending(id))
        world.applyServerEffects([.setTimer(.offlineExpiry, after: .seconds(30)), .setTimer(.offlineExpiry, after: .seconds(50))])
        #expect(world.sim.pendingCount == pending + 2 - clientHad - serverHad)
        let sid = try #require(world.server.timers[.offlineExpiry])
        #expect(world.sim.isPending(sid))
    }

    final class CountCheck: WorldObserver {
        var inputs = 0, callbacks = 0, statuses = 0, notes = 0, events = 0, wrong = 0
        func world(_ world: World, device: Int, applied effects: AppliedClientEffects) {
            inputs += 1
            var n = 0, s = 0, k = 0
            for case .callback in effects { n += 1 }
            for case .callback(.connectionStatus) in effects { s += 1 }
            for case .note in effects { k += 1 }
            callbacks += n
            statuses += s
            notes += k
            let recounted = AppliedClientEffects(effects.effects)
            if n != effects.callbackCount || recounted.callbackCount != n { wrong += 1 }
            if s != effects.statusCallbackCount || recounted.statusCallbackCount != s { wrong += 1 }
            if k != effects.noteCount || recounted.noteCount != k { wrong += 1 }
            // Iterating yields the effects in order (its own iterator walks the array).
            var walked = 0
            for (i, e) in zip(effects.indices, effects) where "\(e)" != "\(effects.effects[i])" { wrong += 1 }
            for _ in effects { walked += 1 }
            if walked != effects.effects.count { wrong += 1 }
        }
        func world(_ world: World, serverApplied effects: AppliedServerEffects) {
            var n = 0
            for case .event in effects { n += 1 }
            events += n
            if n != effects.eventCount || AppliedServerEffects(effects.effects).eventCount != n { wrong += 1 }
        }
    }

    /// The callback (status callback, note) and event counts the world hands observers are
    /// those of the effects.
    @Test func appliedEffectsCountTheirCallbacksAndEvents() throws {
        let s = try pair(#", "script": [{"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hi"}]"#)
        let world = try World(scenario: s, seed: 1)
        let check = CountCheck()
        world.addObserver(check)
        world.run(until: SimTime.zero + .seconds(30))
        #expect(check.inputs > 0 && check.callbacks > 0 && check.statuses > 0 && check.notes > 0 && check.events > 0)
        #expect(check.wrong == 0)
    }
}
