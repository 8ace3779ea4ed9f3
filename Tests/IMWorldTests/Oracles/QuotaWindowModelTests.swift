import IMClient
import IMServer
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// One window model for the chatroom drop policy (`QuotaWindowModel`), used by the chatroom
/// oracle (drops) and the quota oracle (admissions). Before, the chatroom oracle read the server
/// core's configuration and both read the room's user whitelist from the server's directory —
/// the core they judge — so a server configured otherwise than the scenario could pass both.
/// Staged as in QuotaOracleTests: the world is given, in the test only, a server core whose
/// configuration or directory differs from the scenario's.
@Suite struct QuotaWindowModelTests {
    static let hall = ConversationKey(.chatroom, "hall")

    /// Five texts from alice in one window; the scenario says 4 slots (2 reserved, 2 shared).
    func burst(whitelist: String = "") throws -> Scenario {
        let room = #", "chatrooms": [{"id": "hall", "members": ["alice", "bob"], "joinCount": 10\#(whitelist)}]"#
        return try duo("room-quota-model", server: #"{"chatroom": {"quotaCapacity": 4, "quotaReservedHigh": 2}}"#,
                       extra: room, script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "text": "t", "count": 5, "interval": "10ms"}
            """)
    }

    static func server(_ change: @escaping (inout ServerConfig, inout ServerDirectory) -> Void) -> (ScenarioRun) throws -> Void {
        { run in
            var c = run.world.serverCore.config
            var d = run.world.serverCore.directory
            change(&c, &d)
            run.world.server.core = ServerCore(config: c, directory: d)
        }
    }

    func texts(_ tap: IndexedTap) -> [IndexedTap.ServerOut] {
        tap.serverEvents { if case .messageAccepted(let m) = $0 { m.objectName == "RC:TxtMsg" } else { false } }
    }

    @Test func clean() throws {
        let (run, tap) = try runOracles(burst())
        expectClean(run)
        #expect(texts(tap).count == 5)
        #expect(tap.drops.filter { $0.reason == .chatroomQuota }.count == 1)
    }

    /// A server with one slot fewer than the scenario (3): it drops the fourth text while the
    /// scenario's window had a shared slot left. The chatroom oracle used the server's own
    /// configuration (3 slots: "full") and was quiet, while the quota oracle's window (4) had a
    /// slot; with one model from the scenario the chatroom oracle reports the drop.
    @Test func aServerWithASlotLessIsReportedAtTheDrop() throws {
        let (run, tap) = try runOracles(burst(), prepare: Self.server { c, _ in c.chatroom.quotaCapacity = 3 })
        let v = try onlyViolation(run)
        let fourth = try #require(texts(tap).dropFirst(3).first)
        expectReport(v, oracle: "chatroom", device: "alice-phone", conversation: Self.hall, index: fourth.index,
                     time: fourth.time, scenario: "room-quota-model")
        #expect(v.detail.contains("high-priority RC:TxtMsg from alice dropped by the quota") && v.detail.contains("had room: 2/2 reserved and 1/2 shared"),
                "\(v.detail)")
    }

    /// The scenario puts alice on hall's user whitelist; a server that lost it (its directory has
    /// none) drops alice's fifth text. Both oracles read the whitelist from that directory and
    /// agreed with the server; now both take it from the scenario (and the API calls) and report.
    @Test func aServerThatLostTheRoomWhitelistIsReported() throws {
        let scenario = try burst(whitelist: #", "whitelist": ["alice"]"#)
        let lose = Self.server { _, d in d.chatroomWhitelists = [:] }
        let (run, tap) = try runOracles(scenario, stop: false, prepare: lose)
        let fifth = try #require(texts(tap).dropFirst(4).first)
        let oracles = run.violations.filter { $0.eventIndex == fifth.index }.map(\.oracle).sorted()
        #expect(oracles == ["chatroom", "quota"], "\(run.violations.map(\.text))")
        let quota = try #require(run.violations.first { $0.oracle == "quota" })
        #expect(quota.detail.contains("whitelisted RC:TxtMsg from alice dropped by the quota"), "\(quota.detail)")
        // Its clean twin: the server keeps the whitelist, nothing is dropped.
        let (twin, twinTap) = try runOracles(scenario)
        expectClean(twin)
        #expect(twinTap.drops.filter { $0.reason == .chatroomQuota }.isEmpty)
    }

    /// The whitelist set at run time through the server API counts from that call on: the server
    /// lets alice's fifth text in as whitelisted; a model that missed the call would take it for
    /// a high-priority message let in with no slot left (a quota report).
    @Test func theRoomWhitelistSetAtRunTimeIsFollowed() throws {
        let s = try duo("room-quota-model-api", server: #"{"chatroom": {"quotaCapacity": 4, "quotaReservedHigh": 2}}"#,
                        extra: #", "chatrooms": [{"id": "hall", "members": ["alice", "bob"], "joinCount": 10}]"#, script: """
            {"at": "4s", "action": "setChatroomWhitelist", "room": "hall", "users": ["alice"]},
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "text": "t", "count": 5, "interval": "10ms"}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        #expect(texts(tap).count == 5 && tap.drops.isEmpty)
    }
}
