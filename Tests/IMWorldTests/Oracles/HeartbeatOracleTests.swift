import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The heartbeat's lower bounds (HeartbeatOracle): no PINGREQ sooner than 30 s after the CONNACK
/// or the last PINGRESP, and no live connection given up before a PINGREQ went 6 s unanswered.
/// The mistakes are staged by giving alice-phone's core, in the test only, a config other than the
/// scenario's (the oracle takes the durations from the scenario, im-semantics §5).
@Suite struct HeartbeatOracleTests {
    /// alice alone; a half-open connection at 40 s (nothing comes back).
    func halfOpen() throws -> Scenario {
        try scenario("""
        {"name": "heartbeat-low", "duration": "2m",
         "users": [{"id": "alice", "devices": [{"id": "alice-phone", "startAt": "0s"}]}],
         "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0},
         "script": [{"at": "40s", "device": "alice-phone", "action": "halfOpen"}],
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

    static func isPing(_ e: ClientEffect) -> Bool {
        if case .send(_, let frames) = e { frames.contains { $0.type == .pingReq } } else { false }
    }
    static func isClose(_ e: ClientEffect) -> Bool { if case .closeConnection = e { true } else { false } }

    @Test func heartbeatEvery30sAndDeadAfter6sClean() throws {
        let (run, tap) = try runOracles(halfOpen())
        expectClean(run)
        let alice = try run.device("alice-phone")
        let pings = tap.clientEffects(on: alice, Self.isPing).map(\.time)
        let connack = try #require(tap.clientEffects(on: alice) { if case .callback(.connectionStatus(.connected)) = $0 { true } else { false } }.first)
        // The premise: the first PINGREQ comes exactly 30 s after the CONNACK was read, and the
        // half-open link is given up 6 s after the first unanswered one.
        #expect(pings.first == connack.time + .seconds(30))
        let close = try #require(tap.clientEffects(on: alice, Self.isClose).first)
        let lastPing = try #require(pings.last { $0 < close.time })
        #expect(close.time - lastPing == .seconds(6))
    }

    /// A heartbeat every 20 s: the PINGREQ at 20 s after the CONNACK is reported when written.
    @Test func heartbeatTooFastIsReported() throws {
        let force = ForceConfig { $0.heartbeatInterval = .seconds(20) }
        let (run, tap) = try runOracles(halfOpen(), observers: [force])
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let ping = try #require(tap.clientEffects(on: alice, Self.isPing).first)
        expectReport(v, oracle: "heartbeat", device: "alice-phone", conversation: nil, index: ping.index, time: ping.time,
                     scenario: "heartbeat-low")
        #expect(v.detail.contains("PINGREQ written 20s after") && v.detail.contains("every 30s, not sooner"), "\(v.detail)")
    }

    /// A core that gives a link up 2 s after an unanswered PINGREQ (§5: 6 s). ReconnectTimingOracle
    /// judges only the other side (a dead link kept), so only this check sees it.
    @Test func deadTooSoonIsReported() throws {
        let force = ForceConfig { $0.pingTimeout = .seconds(2) }
        let (run, tap) = try runOracles(halfOpen(), observers: [force])
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let close = try #require(tap.clientEffects(on: alice, Self.isClose).first)
        expectReport(v, oracle: "heartbeat", device: "alice-phone", conversation: nil, index: close.index, time: close.time,
                     scenario: "heartbeat-low")
        #expect(v.detail.contains("given up as dead 2s after the PINGREQ") && v.detail.contains("waits 6s"), "\(v.detail)")
    }

    /// Without the heartbeat oracle the same core passes every other check: the property was unchecked.
    @Test func deadTooSoonPassesTheOtherOracles() throws {
        let force = ForceConfig { $0.pingTimeout = .seconds(2) }
        let others = Set(OracleOptions.allNames).subtracting([HeartbeatOracle.oracleName])
        let (run, _) = try runOracles(halfOpen(), enabled: others, observers: [force])
        expectClean(run)
    }
}
