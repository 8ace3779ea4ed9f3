import Foundation
import IMSimTestSupport
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// Two users on fixed 20 ms links; `extra` is spliced into the scenario object.
func pair(_ extra: String = "", duration: String = "2m", alice: String = "", bob: String = "") throws -> Scenario {
    try scenario("""
    {"name": "pair", "duration": "\(duration)",
     "users": [{"id": "alice", "devices": [{"id": "alice-phone", "startAt": "0s" \(alice)}]},
               {"id": "bob", "devices": [{"id": "bob-phone", "startAt": "0s" \(bob)}]}],
     "network": {"latency": {"fixed": "20ms"}, "splitProbability": 0, "connectSetup": {"fixed": "10ms"},
                 "bandwidthBytesPerSecond": null}
     \(extra)}
    """)
}

@Suite struct WorldBehaviourTests {
    @Test func aMessageGoesFromSenderToRecipientWithServerTime() throws {
        let s = try pair(#", "script": [{"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hi"}]"#)
        let (run, tap) = try runWithTap(s)
        #expect(run.violations.isEmpty, "\(run.violations.map(\.text))")
        let m = try #require(tap.accepted.first)
        #expect(m.conversation == ConversationKey(.privateChat, "bob"))
        #expect(m.recipients == ["bob"])
        let bob = run.world.deviceIndex("bob-phone")!
        let rows = try run.world.store(ofDevice: bob).snapshot(of: ConversationKey(.privateChat, "alice"))
        #expect(rows.map(\.messageUId) == [m.messageUId])
        #expect(rows[0].sentTime == m.dataTime)
        #expect(run.world.convergedAt != nil)
    }

    @Test func clockSkewShowsInLocalTimeButNotInServerTime() throws {
        let s = try pair(#", "script": [{"at": "5s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "hi"}]"#,
                         bob: #", "clockOffset": "45s", "clockDriftPpm": 2000"#)
        let (run, tap) = try runWithTap(s)
        #expect(run.violations.isEmpty)
        let bob = run.world.deviceIndex("bob-phone")!
        let alice = run.world.deviceIndex("alice-phone")!
        let epoch = Scenario.defaultEpochMs
        // Local clocks: bob is 45 s (plus drift) ahead, alice is on server time.
        let bobIn = try #require(tap.clientIn.last { $0.device == bob })
        let serverMsThen = epoch + bobIn.time.milliseconds
        #expect(bobIn.localMs - serverMsThen >= 45_000)
        #expect(bobIn.localMs - serverMsThen <= 45_000 + bobIn.time.milliseconds * 2000 / 1_000_000 + 1)
        let aliceIn = try #require(tap.clientIn.last { $0.device == alice })
        #expect(aliceIn.localMs == epoch + aliceIn.time.milliseconds)
        // dataTime is server time: bob's message carries no skew, and bob's row got it too.
        let m = try #require(tap.accepted.first)
        #expect(abs(m.dataTime - (epoch + 5_000)) < 1_000)
        let row = try #require(try run.world.store(ofDevice: bob).snapshot(of: ConversationKey(.privateChat, "alice")).first)
        #expect(row.sentTime == m.dataTime)
    }

    @Test func resetIsLearnedByEachSideAtItsOwnTime() throws {
        let s = try pair(#", "script": [{"at": "10s", "device": "alice-phone", "action": "reset"}]"#)
        let (run, tap) = try runWithTap(s)
        let alice = run.world.deviceIndex("alice-phone")!
        let t0 = SimTime.zero + .seconds(10)
        let clientClosed = try #require(tap.clientIn.first {
            if $0.device == alice, case .transport(.closed(.reset)) = $0.input { true } else { false }
        })
        let serverClosed = try #require(tap.serverIn.first {
            if case .connectionClosed(_, .reset) = $0.input { true } else { false }
        })
        #expect(clientClosed.time >= t0 && serverClosed.time >= t0)
        // The server learns one uplink latency (20 ms) later; the client within one downlink latency.
        #expect(serverClosed.time == t0 + .milliseconds(20))
        #expect(clientClosed.time <= t0 + .milliseconds(20))
        // And the client reconnects at once (schedule starts at 0).
        let reopened = tap.clientOut.contains { $0.device == alice && $0.time >= clientClosed.time && {
            if case .openConnection = $0.effect { true } else { false } }($0) }
        #expect(reopened)
        #expect(run.violations.isEmpty)
    }

    @Test func halfOpenIsOnlyRevealedByTheHeartbeat() throws {
        let s = try pair(#", "script": [{"at": "40s", "device": "alice-phone", "action": "halfOpen"}]"#, duration: "3m")
        let (run, tap) = try runWithTap(s)
        let alice = run.world.deviceIndex("alice-phone")!
        let t0 = SimTime.zero + .seconds(40)
        // Nobody is told the connection died…
        #expect(!tap.clientIn.contains { $0.device == alice && $0.time >= t0 && {
            if case .transport(.closed) = $0.input { true } else { false } }($0) })
        // …until a ping goes unanswered for 6 s: the client gives up on the connection and reconnects.
        let fired = try #require(tap.clientIn.first { $0.device == alice && $0.time >= t0 && {
            if case .timerFired(.pingTimeout) = $0.input { true } else { false } }($0) })
        #expect(fired.time > t0 && fired.time <= t0 + .seconds(36 + 1))
        let reopen = try #require(tap.clientOut.first { $0.device == alice && $0.time >= fired.time && {
            if case .openConnection = $0.effect { true } else { false } }($0) })
        #expect(reopen.time == fired.time)
        // The server side stays half-open until the device's reconnect replaces it (or its idle
        // timeout, whichever comes first) — never at the moment of the fault.
        let closed = try #require(tap.serverOut.first {
            if case .event(.sessionClosed(_, _, "alice-phone", let r)) = $0.effect { r == .replaced || r == .idleTimeout } else { false }
        })
        #expect(closed.time > reopen.time)
        #expect(run.violations.isEmpty, "\(run.violations.map(\.text))")
    }

    @Test func appKillKeepsTheStoreAndLosesTheCore() throws {
        let s = try pair(#"""
            , "script": [{"at": "5s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "before"},
                         {"at": "20s", "device": "bob-phone", "action": "kill"},
                         {"at": "40s", "device": "bob-phone", "action": "restart"}]
            """#)
        let tap = Tap()
        let run = try ScenarioRun(scenario: s, seed: 1, oracles: OracleOptions(scenarioArgument: "pair"), observers: [tap])
        let bob = run.world.deviceIndex("bob-phone")!
        run.run(until: SimTime.zero + .seconds(30))
        #expect(run.world.clientCore(ofDevice: bob) == nil)
        let conv = ConversationKey(.privateChat, "alice")
        #expect(try run.world.store(ofDevice: bob).messageCount(in: conv) == 1)
        run.run()
        let core = try #require(run.world.clientCore(ofDevice: bob))
        #expect(core.isConnected)
        #expect(try run.world.store(ofDevice: bob).messageCount(in: conv) == 1)
        // The new core connected again from scratch (a fresh connect() from the restarted app).
        let connects = tap.clientIn.filter { $0.device == bob && { if case .api(.connect) = $0.input { true } else { false } }($0) }
        #expect(connects.count == 2)
        #expect(run.violations.isEmpty)
    }

    @Test func sameScenarioAndSeedSameDigestAndLedger() throws {
        let (s, _) = try Scenario.load(pathOrName: "quickstart")
        func once() throws -> (String, Ledger) {
            let run = try ScenarioRun(scenario: s, seed: 7, oracles: OracleOptions(scenarioArgument: "quickstart"))
            run.run(until: SimTime.zero + .seconds(90))
            return (run.world.sim.digest.description, run.ledger())
        }
        let a = try once(), b = try once()
        #expect(a.0 == b.0)
        #expect(a.1 == b.1)
        let other = try ScenarioRun(scenario: s, seed: 8)
        other.run(until: SimTime.zero + .seconds(90))
        #expect(other.world.sim.digest.description != a.0)
    }

    @Test func sameDigestInTwoProcesses() throws {
        let args = ["run", "quickstart", "--seed", "3", "--until", "60s", "--json"]
        struct R: Decodable { var digest: String; var events: UInt64 }
        let a = try ImsimBinary.run(args), b = try ImsimBinary.run(args)
        let ra = try JSONDecoder().decode(R.self, from: Data(a.out.utf8))
        let rb = try JSONDecoder().decode(R.self, from: Data(b.out.utf8))
        #expect(ra.digest == rb.digest)
        #expect(ra.events == rb.events && ra.events > 100)
    }

    @Test func partitionDelaysBytesUntilItHeals() throws {
        let s = try pair(#"""
            , "script": [{"at": "10s", "action": "partition", "target": "bob-phone", "for": "3s"},
                         {"at": "10.5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "x"}]
            """#)
        let (run, tap) = try runWithTap(s)
        let bob = run.world.deviceIndex("bob-phone")!
        let stored = try #require(tap.clientOut.first {
            if $0.device == bob, case .note(.stored(_, _, _, _, .receive, true)) = $0.effect { true } else { false }
        })
        #expect(stored.time >= SimTime.zero + .seconds(13))
        #expect(run.violations.isEmpty)
    }
}
