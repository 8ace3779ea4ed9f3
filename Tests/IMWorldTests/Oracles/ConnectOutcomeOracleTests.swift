import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// `connect()` answers once (ConnectOutcomeOracle, "connect-outcome"): success(userId) at the
/// call's first CONNECTED, never again for a reconnection. The mutant `if first` → `if !(first)`
/// (ConnectionStateMachine.connackReceived) told the app success at every reconnection but the
/// first, and nothing checked it. Staged here by rewriting the effects the oracle sees (the core
/// itself stays correct): dropping alice's success, or adding one at a reconnection.
@Suite struct ConnectOutcomeOracleTests {
    /// alice's connection is reset at 10 s (the SDK reconnects by itself); she disconnects at
    /// 20 s and connects again at 22 s (a new call).
    func resetThenReconnect() throws -> Scenario {
        try duo("connect-outcome", duration: "40s", script: """
            {"at": "10s", "device": "alice-phone", "action": "reset"},
            {"at": "20s", "device": "alice-phone", "action": "disconnect"},
            {"at": "22s", "device": "alice-phone", "action": "connect"}
            """)
    }

    /// Forwards everything to one oracle, with alice-phone's effect lists rewritten.
    final class Rewrite: WorldObserver {
        let inner: any Oracle
        let rewrite: ([ClientEffect]) -> [ClientEffect]
        var alice = -1
        init(_ inner: any Oracle, _ rewrite: @escaping ([ClientEffect]) -> [ClientEffect]) {
            self.inner = inner
            self.rewrite = rewrite
        }
        func world(_ world: World, dispatching event: SimEvent<WorldEvent>) { inner.world(world, dispatching: event) }
        func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {
            inner.world(world, device: device, input: input, localMs: localMs)
        }
        func world(_ world: World, device: Int, applied: AppliedClientEffects) {
            inner.world(world, device: device, applied: world.deviceId(device) == "alice-phone"
                ? AppliedClientEffects(rewrite(applied.effects), openedConnections: applied.openedConnections) : applied)
        }
        func world(_ world: World, serverInput: ServerInput, serverMs: Int64) { inner.world(world, serverInput: serverInput, serverMs: serverMs) }
        func world(_ world: World, serverApplied: AppliedServerEffects) { inner.world(world, serverApplied: serverApplied) }
        func world(_ world: World, note: WorldNote) { inner.world(world, note: note) }
        func worldDidFinish(_ world: World) { inner.finalCheck(world) }
    }

    static func isSuccess(_ e: ClientEffect) -> Bool { if case .callback(.connected) = e { true } else { false } }
    static func isStatusConnected(_ e: ClientEffect) -> Bool {
        if case .callback(.connectionStatus(.connected)) = e { true } else { false }
    }

    /// Runs the scenario with the real oracles off and a ConnectOutcomeOracle fed rewritten effects.
    func runRewritten(_ rewrite: @escaping ([ClientEffect]) -> [ClientEffect]) throws -> (ScenarioRun, IndexedTap) {
        let s = try resetThenReconnect()
        let tap = IndexedTap()
        let run = try ScenarioRun(scenario: s, seed: 1, oracles: OracleOptions(enabled: [ConnectOutcomeOracle.oracleName], scenarioArgument: s.name),
                                  observers: [tap])
        let suite = try #require(run.suite)
        run.world.addObserver(Rewrite(ConnectOutcomeOracle(suite: suite), rewrite))
        run.run(until: nil)
        return (run, tap)
    }

    @Test func oneSuccessPerCallClean() throws {
        let (run, tap) = try runOracles(resetThenReconnect())
        expectClean(run)
        // The premise: three CONNECTED (start, after the reset, after the new call), two successes.
        let alice = try run.device("alice-phone")
        let connected = tap.clientEffects(on: alice, Self.isStatusConnected)
        let successes = tap.clientEffects(on: alice, Self.isSuccess)
        #expect(connected.count == 3)
        #expect(successes.map(\.index) == [connected[0].index, connected[2].index])
    }

    @Test func successWithheldIsReported() throws {
        let (run, tap) = try runRewritten { $0.filter { !Self.isSuccess($0) } }
        let v = try #require(run.violations.first)
        #expect(run.violations.count == 1)
        let alice = try run.device("alice-phone")
        let first = try #require(tap.clientEffects(on: alice, Self.isStatusConnected).first)
        expectReport(v, oracle: "connect-outcome", device: "alice-phone", conversation: nil, index: first.index, time: first.time,
                     scenario: "connect-outcome")
        #expect(v.detail.contains("did not tell the app success(userId)"), "\(v.detail)")
    }

    @Test func successAtAReconnectionIsReported() throws {
        // Every CONNECTED carries a success: the one after the reset is a second outcome for the first call.
        let (run, tap) = try runRewritten { effects in
            effects.contains(where: Self.isStatusConnected) && !effects.contains(where: Self.isSuccess)
                ? effects + [.callback(.connected(userId: "alice"))] : effects
        }
        let v = try #require(run.violations.first)
        #expect(run.violations.count == 1)
        let alice = try run.device("alice-phone")
        let second = tap.clientEffects(on: alice, Self.isStatusConnected)[1]
        expectReport(v, oracle: "connect-outcome", device: "alice-phone", conversation: nil, index: second.index, time: second.time,
                     scenario: "connect-outcome")
        #expect(v.detail.contains("told success(alice) again"), "\(v.detail)")
    }
}
