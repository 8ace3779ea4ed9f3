import IMClient
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The no-loss time bound when the SDK has legitimately stopped reconnecting (here: the
/// `connect(timeLimit:)` ran out, 34006): nothing is late while it is stopped; the app's next
/// `connect()` starts the bound again, 135 s from that connect. (The world's own "gave up" mark
/// is not cleared by a later connect, so the oracle keeps its own stop state from the stream.)
@Suite struct NoLossStoppedSDKTests {
    static let bound = SimDuration.seconds(30 + 6 + 64 + 5 + 30)

    /// alice's first connect (time limit 5 s) runs into a partition and gives up at ~6 s; bob
    /// writes OLD at 10 s; the app connects again at 200 s, and bob's NEW comes during the first
    /// pull. With B3, OLD is never pulled.
    func scenario(b3: Bool) throws -> Scenario {
        try duo("loss-bound-stopped", duration: "6m", client: bugs(b3 ? ["B3"] : [], #""pingBeforeFirstPull": true"#),
                alice: #""autoConnect": false"#, script: """
            {"at": "0.5s", "action": "partition", "target": "alice-phone", "for": "150s"},
            {"at": "1s", "device": "alice-phone", "action": "connect", "timeLimit": 5},
            {"at": "10s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "OLD"},
            {"at": "200s", "device": "alice-phone", "action": "connect"},
            {"at": "200.15s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "NEW"}
            """)
    }

    @Test func stoppedThenConnectedIsCleanAndDelivered() throws {
        let (run, tap) = try runOracles(scenario(b3: false))
        expectClean(run)
        let alice = try run.device("alice-phone")
        // The premise: the SDK gave up (34006) before OLD was sent, and OLD arrived after the
        // app's connect at 200 s — more than the bound after its acceptance and after the heal.
        let gaveUp = try #require(tap.clientEffects(on: alice) { if case .callback(.connectError) = $0 { true } else { false } }.first)
        #expect(gaveUp.time < SimTime.zero + .seconds(10))
        let old = try #require(tap.accepted.first)
        let stored = try #require(tap.stores(of: old.messageUId, on: alice).first)
        #expect(stored.time > SimTime.zero + .seconds(200))
        #expect(stored.time - (SimTime.zero + .seconds(10)) > Self.bound)
    }

    /// B3 after the app's connect: OLD is late 135 s after that connect (the old oracle took the
    /// device as given up for the rest of the run and never reported it).
    @Test func lateAfterTheAppConnectsAgainIsReported() throws {
        let (run, tap) = try runOracles(scenario(b3: true))
        let v = try #require(run.violations.first)
        let old = try #require(tap.accepted.first)
        let due = SimTime.zero + .seconds(200) + Self.bound
        let at = try #require(tap.firstEvent(atOrAfter: due + SimDuration(nanoseconds: 1)))
        expectReport(v, oracle: "no-loss", device: "alice-phone", conversation: ConversationKey(.privateChat, "bob"),
                     index: at.index, time: at.time, scenario: "loss-bound-stopped")
        #expect(v.messageUId == old.messageUId)
        #expect(v.detail.hasPrefix("late: ") && v.detail.contains("after 200.000s"), "\(v.detail)")
    }
}
