import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// reconnect-kick: the promise of `reconnectKickEnable` (im-semantics §5; B12 redefined in §8 by
/// issue 22). Seed rule: "The setting decides; whether A had connected before does not."
@Suite struct ReconnectKickPolicyOracleTests {
    /// alice-old retries for 60 s (partitioned); alice logs in on alice-new (same platform) at 40 s.
    /// `firstConnectOnly`: alice-old never completes its first connect (partitioned from 0 s).
    func race(kickEnable: Bool, b12: Bool, firstConnectOnly: Bool = false) throws -> Scenario {
        try scenario("""
        {"name": "reconnect-kick", "duration": "2m",
         "users": [{"id": "alice", "devices": [{"id": "alice-old", "startAt": "\(firstConnectOnly ? "1s" : "0s")"},
                                              {"id": "alice-new", "autoConnect": false}]},
                   {"id": "bob", "devices": [{"id": "bob-phone", "startAt": "0s"}]}],
         "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0},
         "client": {"reconnectKickEnable": \(kickEnable)},
         "server": \(bugs(b12 ? ["B12"] : [])),
         "script": [
           {"at": "\(firstConnectOnly ? "0s" : "5s")", "action": "partition", "target": "alice-old", "for": "60s"},
           {"at": "40s", "device": "alice-new", "action": "connect"}],
         "liveness": {"deadline": "1m"}}
        """)
    }

    static func kicked(_ tap: IndexedTap) -> Bool {
        !tap.serverEvents { if case .kicked(_, _, "alice-new", "alice-old") = $0 { true } else { false } }.isEmpty
    }

    static func refused(_ tap: IndexedTap) -> Bool {
        !tap.serverEvents { if case .reconnectRefused(_, _, "alice-old", "alice-new") = $0 { true } else { false } }.isEmpty
    }

    /// Default (`reconnectKickEnable = false`): the retry kicks the device in use — the documented
    /// race, not a violation. (Before issue 22 the retry was refused.)
    @Test(arguments: [false, true])
    func defaultRetryKicksTheDeviceInUse(firstConnectOnly: Bool) throws {
        let (run, tap) = try runOracles(race(kickEnable: false, b12: false, firstConnectOnly: firstConnectOnly))
        expectClean(run)
        #expect(Self.kicked(tap))
        #expect(!Self.refused(tap))
    }

    /// `reconnectKickEnable = true`: the retry does not connect and stops; alice-new stays. Also for a
    /// device that never completed its first connect (before issue 22 it kicked: not "a reconnect").
    @Test(arguments: [false, true])
    func kickEnableRetryIsRefusedAndStops(firstConnectOnly: Bool) throws {
        let (run, tap) = try runOracles(race(kickEnable: true, b12: false, firstConnectOnly: firstConnectOnly))
        expectClean(run)
        #expect(!Self.kicked(tap))
        #expect(Self.refused(tap))
    }

    /// B12: the setting is not honoured — reported at the kick, on the retrying device.
    @Test func b12KickDespiteTheSettingIsReportedAtTheKick() throws {
        let (run, tap) = try runOracles(race(kickEnable: true, b12: true))
        let v = try onlyViolation(run)
        let kick = try #require(tap.serverEvents { if case .kicked(_, _, "alice-new", "alice-old") = $0 { true } else { false } }.first)
        expectReport(v, oracle: "reconnect-kick", device: "alice-old", conversation: nil,
                     index: kick.index, time: kick.time, scenario: "reconnect-kick")
        #expect(v.detail.contains("reconnectKickEnable = true"), "\(v.detail)")
    }

    /// B12 changes nothing when the setting is off: the kick is the default.
    @Test func b12WithTheSettingOffIsClean() throws {
        let (run, tap) = try runOracles(race(kickEnable: false, b12: true))
        expectClean(run)
        #expect(Self.kicked(tap))
    }
}
