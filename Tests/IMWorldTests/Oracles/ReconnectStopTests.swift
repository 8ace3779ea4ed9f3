import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// reconnect: `connect(timeLimit:)` honoured, judged from times and the link (issue 21), not from
/// the client's own stopped state.
@Suite struct ReconnectStopTests {
    /// alice connects with a 3 s limit while her network is down; it comes back at 10 s.
    func limited() throws -> Scenario {
        try duo("reconnect-limit", alice: #""autoConnect": false"#, script: """
            {"at": "1s", "device": "alice-phone", "action": "network", "state": "none"},
            {"at": "2s", "device": "alice-phone", "action": "connect", "timeLimit": 3},
            {"at": "10s", "device": "alice-phone", "action": "network", "state": "wifi"}
            """)
    }

    @Test func timeLimitRunsOutAndNoConnectionFollowsClean() throws {
        let (run, tap) = try runOracles(limited(), enabled: ["reconnect"])
        #expect(run.violations.isEmpty, "\(run.violations.map(\.text))")
        let alice = try run.device("alice-phone")
        let errors = tap.clientEffects(on: alice) { if case .callback(.connectError(34006)) = $0 { true } else { false } }
        #expect(errors.count == 1)
        #expect(tap.clientEffects(on: alice, isOpen).allSatisfy { $0.time <= errors[0].time })
    }

    /// Staged: the oracle is told of a connection opened 4 s after a 2 s limit ran out with no
    /// connection (a core that ignored timeLimit).
    @Test func connectionAfterTheTimeLimitIsReported() throws {
        let s = try limited()
        let run = try ScenarioRun(scenario: s, seed: 1, oracles: OracleOptions(enabled: [], scenarioArgument: s.name))
        let suite = try #require(run.suite)
        let o = ReconnectOracle(suite: suite)
        let alice = try run.device("alice-phone")
        _ = run.run(until: SimTime.zero + .seconds(4))
        o.world(run.world, device: alice, input: .api(.connect(token: "t", timeLimitSeconds: 2)), localMs: 0)
        _ = run.run(until: SimTime.zero + .seconds(7))
        o.world(run.world, device: alice, applied: AppliedClientEffects([.openConnection]))
        let v = try #require(run.violations.first)
        #expect(v.oracle == "reconnect" && v.device == "alice-phone")
        #expect(v.detail.contains("after the connect time limit ran out at 6.000s"), "\(v.detail)")
    }
}
