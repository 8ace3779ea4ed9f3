import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// Reconnect and heartbeat timing measured on the link (ReconnectTimingOracle). The plausible
/// mistakes are staged by giving alice-phone's core, in the test only, a config that differs
/// from the scenario's (the oracle derives the schedule from the scenario: im-semantics §5).
@Suite struct ReconnectTimingOracleTests {
    /// alice's path is black-holed from 5 s for 20 s: her attempts time out and back off.
    func outage(_ extra: String = "") throws -> Scenario {
        try scenario("""
        {"name": "reconnect-timing", "duration": "90s",
         "users": [{"id": "alice", "devices": [{"id": "alice-phone", "startAt": "0s"}]}],
         "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0},
         "script": [
           {"at": "5s", "device": "alice-phone", "action": "reset"},
           {"at": "5s", "device": "alice-phone", "action": "partition", "for": "20s"}\(extra)],
         "liveness": {"deadline": "1m"}}
        """)
    }

    /// Replaces alice-phone's core, just before its `connect()`, with one using `change(config)`.
    final class ForceConfig: WorldObserver {
        let change: (inout ClientConfig) -> Void
        var done = false
        init(_ change: @escaping (inout ClientConfig) -> Void) { self.change = change }
        func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
            guard !done, case .api(.connect) = input, world.deviceId(d) == "alice-phone" else { return }
            done = true
            var c = world.clientConfig
            change(&c)
            world.devices[d].core = ClientCore(identity: world.devices[d].identity, config: c, store: world.devices[d].store)
        }
    }

    static func opens(_ tap: IndexedTap, _ d: Int) -> [SimTime] { tap.clientEffects(on: d, isOpen).map(\.time) }

    @Test func attemptsFollowTheScheduleClean() throws {
        let (run, tap) = try runOracles(outage())
        expectClean(run)
        let alice = try run.device("alice-phone")
        let opens = Self.opens(tap, alice)
        #expect(opens.count >= 4, "the outage made several attempts")
        // The premise the oracle measures: each gap after a failed attempt grows.
        #expect(opens.count >= 3 && opens[2] - opens[1] > opens[1] - opens[0])
    }

    /// A backoff index stuck at 0: every attempt is made at once. The core's own notes say
    /// "attempt 0, delay 0" each time — consistent with the schedule — so only the measured
    /// times show it.
    @Test func backoffStuckAtZeroIsReported() throws {
        let force = ForceConfig { $0.reconnectSchedule = [.zero] }
        let (run, tap) = try runOracles(outage(), observers: [force])
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let opens = Self.opens(tap, alice)
        // The second attempt after the reset came at once, 0.25 s too early.
        #expect(v.oracle == "reconnect" && v.device == "alice-phone")
        #expect(v.detail.contains("too early") && v.detail.contains("attempt 1"), "\(v.detail)")
        #expect(opens.contains { $0.nanoseconds == v.timeNanoseconds })
    }

    /// A backoff that advances too slowly (each delay doubled): the second attempt after the
    /// reset is due 0.25 s after the first failed one and comes 0.5 s after it — late. The core's
    /// own note ("attempt 1, delay 0.5s") would agree with itself; only the measured time shows it.
    @Test func backoffTooSlowIsReportedLate() throws {
        let force = ForceConfig { $0.reconnectSchedule = $0.reconnectSchedule.map { $0 * 2 } }
        let (run, tap) = try runOracles(outage(), observers: [force])
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let opens = Self.opens(tap, alice).filter { $0 >= SimTime.zero + .seconds(5) }
        #expect(v.oracle == "reconnect" && v.device == "alice-phone")
        #expect(v.detail.contains("no reconnect attempt by") && v.detail.contains("attempt 1 after 250ms"), "\(v.detail)")
        // Reported at the first event after the 100 ms tolerance — here the late attempt's own
        // timer (nothing else happens on the partitioned link), before its effects.
        #expect(opens.count >= 2 && v.timeNanoseconds <= opens[1].nanoseconds, "\(v.time) \(v.detail) opens \(opens.prefix(4))")
        #expect(opens.count >= 2 && opens[1] - opens[0] > .milliseconds(350))
    }

    /// A half-open connection at 40 s: nothing comes back. A core that waits 20 s for the
    /// PINGRESP keeps a dead connection past the 6 s of §5.
    func halfOpen() throws -> Scenario {
        try scenario("""
        {"name": "heartbeat", "duration": "2m",
         "users": [{"id": "alice", "devices": [{"id": "alice-phone", "startAt": "0s"}]}],
         "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0},
         "script": [{"at": "40s", "device": "alice-phone", "action": "halfOpen"}],
         "liveness": {"deadline": "1m"}}
        """)
    }

    @Test func deadLinkDetectedWithin6sClean() throws {
        let (run, tap) = try runOracles(halfOpen())
        expectClean(run)
        let alice = try run.device("alice-phone")
        let close = try #require(tap.clientEffects(on: alice) { if case .closeConnection = $0 { true } else { false } }.first)
        #expect(close.time <= SimTime.zero + .seconds(40 + 30 + 6))
    }

    @Test func pingTimeoutTooLongIsReported() throws {
        let force = ForceConfig { $0.pingTimeout = .seconds(20) }
        let (run, _) = try runOracles(halfOpen(), observers: [force])
        let v = try onlyViolation(run)
        #expect(v.detail.contains("unanswered for 6s but the connection was kept"), "\(v.detail)")
    }

    @Test func heartbeatTooSlowIsReported() throws {
        let force = ForceConfig { $0.heartbeatInterval = .seconds(45) }
        let (run, _) = try runOracles(halfOpen(), observers: [force])
        let v = try onlyViolation(run)
        #expect(v.detail.contains("no PINGREQ by"), "\(v.detail)")
    }
}
