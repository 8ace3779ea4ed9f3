import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// reconnect: attempts follow the schedule and restart on foreground / network change, stop
/// when they must.
@Suite struct ReconnectOracleTests {
    /// B11: alice's path is black-holed for 70 s, her attempts back off to 16 s; the network
    /// changes at 60 s while she waits, and the schedule does not restart.
    func b11(_ on: Bool) throws -> Scenario {
        try scenario("""
        {"name": "reconnect-b11", "duration": "2m",
         "users": [{"id": "alice", "devices": [{"id": "alice-phone", "startAt": "0s"}]}],
         "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0},
         "client": \(bugs(on ? ["B11"] : [])),
         "script": [
           {"at": "5s", "device": "alice-phone", "action": "reset"},
           {"at": "5s", "device": "alice-phone", "action": "partition", "for": "70s"},
           {"at": "60s", "device": "alice-phone", "action": "network", "state": "cellular"}],
         "liveness": {"deadline": "1m"}}
        """)
    }

    static func networkBack(_ i: ClientInput) -> Bool { if case .networkChanged(available: true) = i { true } else { false } }

    /// Judged from the link, not from the core's `reconnectScheduled` note: the change owes an
    /// attempt at once; no connection opened within the tolerance is reported at the first
    /// event after it.
    @Test func b11NoRestartIsReportedJustAfterTheNetworkChange() throws {
        let (run, tap) = try runOracles(b11(true))
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let change = try #require(tap.clientInputs(on: alice, Self.networkBack).first)
        #expect(change.time == SimTime.zero + .seconds(60))
        let deadline = change.time + SimDuration(nanoseconds: ReconnectRule.lateTolerance)
        let at = try #require(tap.firstEvent(atOrAfter: deadline + SimDuration(nanoseconds: 1)))
        expectReport(v, oracle: "reconnect", device: "alice-phone", conversation: nil,
                     index: at.index, time: at.time, scenario: "reconnect-b11")
        #expect(v.detail.contains("the network changed at 60.000s") && v.detail.contains("should restart from 0"), "\(v.detail)")
        // The premise: no connection was opened between the change and the report (made at the
        // first later event: here the old backoff timer's own attempt, before its effects).
        #expect(!tap.clientEffects(on: alice, isOpen).contains { $0.time >= change.time && $0.time < at.time },
                "\(v.time) \(v.detail) opens \(tap.clientEffects(on: alice, isOpen).map(\.time).filter { $0 >= change.time - .seconds(20) })")
    }

    @Test func b11OffRestartsAtOnce() throws {
        let (run, tap) = try runOracles(b11(false))
        expectClean(run)
        let alice = try run.device("alice-phone")
        let change = try #require(tap.clientInputs(on: alice, Self.networkBack).first)
        // The schedule restarts in the change's own effects (attempt 0 at once) and the device
        // opens a connection at that very time.
        #expect(tap.clientOut.contains { $0.device == alice && $0.index == change.index && {
            if case .note(.reconnectScheduled(0, .zero)) = $0 { true } else { false } }($0.effect) })
        #expect(tap.clientOut.contains { $0.device == alice && $0.time == change.time && isOpen($0.effect) })
        // And every scheduled attempt before it followed 0, 0.25, 0.5, 1, 2, 4, 8, 16 s…
        let delays = tap.clientEffects(on: alice) { if case .note(.reconnectScheduled) = $0 { true } else { false } }
            .filter { $0.time < change.time }
            .compactMap { if case .note(.reconnectScheduled(_, let d)) = $0.effect { d } else { nil } }
        #expect(delays.prefix(8) == [.zero, .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16)])
    }

    // B12 (the kick policy of a retry) moved to ReconnectKickPolicyOracleTests (issue 22).

    /// Hand-made effects on a plain run: after `disconnect()` the SDK must not open a connection
    /// by itself, and a scheduled delay must be the schedule's.
    func quiet() throws -> Scenario {
        try duo("reconnect-hand", script: """
            {"at": "5s", "device": "alice-phone", "action": "disconnect"},
            {"at": "9s", "device": "alice-phone", "action": "connect"}
            """)
    }

    /// Feeds `effects` to the reconnect oracle as alice-phone's, at the first event at or after `t`.
    func inject(_ effects: [ClientEffect], at t: SimTime, into run: ScenarioRun, hook: Hook) throws {
        let o = try oracle(run, "reconnect")
        let alice = try run.device("alice-phone")
        var done = false
        hook.onDispatch = { world, event in
            guard !done, event.time >= t else { return }
            done = true
            o.world(world, device: alice, applied: AppliedClientEffects(effects))
        }
    }

    @Test func openingAConnectionAfterDisconnectIsReported() throws {
        let hook = Hook()
        let t = SimTime.zero + .seconds(7)
        let (run, tap) = try runOracles(quiet(), observers: [hook]) { try inject([.openConnection], at: t, into: $0, hook: hook) }
        let v = try onlyViolation(run)
        let at = try #require(tap.firstEvent(atOrAfter: t))
        expectReport(v, oracle: "reconnect", device: "alice-phone", conversation: nil, index: at.index, time: at.time, scenario: "reconnect-hand")
        #expect(v.detail == "opened a connection by itself after disconnect()")
    }

    // (A delay off the schedule is judged from when connections are opened, not from the
    // core's `reconnectScheduled` note: ReconnectTimingOracleTests.)

    @Test func disconnectAndConnectAgainIsClean() throws {
        let (run, tap) = try runOracles(quiet())
        expectClean(run)
        let alice = try run.device("alice-phone")
        let opens = tap.clientEffects(on: alice, isOpen)
        #expect(opens.count == 2)
        #expect(opens.last?.time == SimTime.zero + .seconds(9))
    }

    /// connect(timeLimit: 5) while the path is cut: the SDK gives up with 34006 and opens no
    /// connection by itself afterwards — clean (and the device is not expected online).
    @Test func timeLimitStopsReconnecting() throws {
        let s = try duo("reconnect-limit", alice: #""autoConnect": false"#, script: """
            {"at": "1s", "action": "partition", "target": "alice-phone", "for": "30s"},
            {"at": "2s", "device": "alice-phone", "action": "connect", "timeLimit": 5}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        let alice = try run.device("alice-phone")
        let gaveUp = try #require(tap.clientEffects(on: alice) {
            if case .callback(.connectError(IMErrorCode.connectTimeLimit.rawValue)) = $0 { true } else { false } }.first)
        #expect(gaveUp.time <= SimTime.zero + .seconds(8))
        #expect(tap.clientEffects(on: alice, isOpen).allSatisfy { $0.time < gaveUp.time })
        #expect(run.world.gaveUp(device: alice))
    }
}
