import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The chatroom quota's other direction (ChatroomQuotaOracle, "quota"): the server lets a message
/// into a room only when its 200 ms window has a slot for it (im-semantics §6). The scenario says
/// 4 slots (2 reserved high, 2 shared); a server that counts otherwise is staged by giving the
/// world, in the test only, a server core whose configuration differs from the scenario's (the
/// oracle reads the scenario's knobs).
@Suite struct QuotaOracleTests {
    static let room = #", "chatrooms": [{"id": "hall", "members": ["alice", "bob"], "joinCount": 10}]"#
    static let hall = ConversationKey(.chatroom, "hall")

    /// Five texts (high) in one window, then two likes (low) in a later one.
    func burst() throws -> Scenario {
        try duo("room-quota", server: #"{"chatroom": {"quotaCapacity": 4, "quotaReservedHigh": 2, "lowPriorityTypes": ["App:Like"]}}"#,
                extra: Self.room, script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "text": "t", "count": 5, "interval": "10ms"},
            {"at": "6s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "type": "App:Like", "content": "{\\"like\\":1}", "count": 3, "interval": "10ms"}
            """)
    }

    /// Gives the server core, before the run, `change` applied to its configuration.
    static func serverConfig(_ change: @escaping (inout ServerConfig) -> Void) -> (ScenarioRun) throws -> Void {
        { run in
            var c = run.world.serverCore.config
            change(&c)
            run.world.server.core = ServerCore(config: c, directory: run.world.serverCore.directory)
        }
    }

    @Test func quotaAsConfiguredClean() throws {
        let (run, tap) = try runOracles(burst())
        expectClean(run)
        // The premise: the fifth text and the third like were dropped by the quota.
        let dropped = tap.drops.filter { $0.reason == .chatroomQuota }.compactMap(\.uid)
        let texts = tap.accepted.filter { $0.objectName == "RC:TxtMsg" }
        let likes = tap.accepted.filter { $0.objectName == "App:Like" }
        #expect(texts.count == 5 && likes.count == 3)
        #expect(dropped == [texts[4].messageUId, likes[2].messageUId])
    }

    /// A server with one slot more than the scenario (5): the fifth text gets in. Reported at its
    /// accept; the chatroom oracle (which judges drops only) is quiet.
    @Test func admittedBeyondTheQuotaIsReported() throws {
        let (run, tap) = try runOracles(burst(), prepare: Self.serverConfig { $0.chatroom.quotaCapacity = 5 })
        let v = try onlyViolation(run)
        let texts = tap.serverEvents { if case .messageAccepted(let m) = $0 { m.objectName == "RC:TxtMsg" } else { false } }
        #expect(texts.count == 5)
        let fifth = texts[4]
        guard case .event(.messageAccepted(let m)) = fifth.effect else { return }
        expectReport(v, oracle: "quota", device: "alice-phone", conversation: Self.hall, index: fifth.index, time: fifth.time,
                     scenario: "room-quota")
        #expect(v.messageUId == m.messageUId)
        #expect(v.detail.contains("high-priority RC:TxtMsg") && v.detail.contains("had no slot left"), "\(v.detail)")
    }

    /// A server that lets low priority take the reserved slots (the B13 rule, written by mistake
    /// for every room): the third like gets in though both shared slots are used.
    @Test func lowIntoReservedIsReported() throws {
        let (run, tap) = try runOracles(burst(), prepare: Self.serverConfig { $0.bugs.insert(.b13) })
        let v = try onlyViolation(run)
        let likes = tap.serverEvents { if case .messageAccepted(let m) = $0 { m.objectName == "App:Like" } else { false } }
        let third = try #require(likes.count == 3 ? likes[2] : nil)
        expectReport(v, oracle: "quota", device: "alice-phone", conversation: Self.hall, index: third.index, time: third.time,
                     scenario: "room-quota")
        #expect(v.detail.contains("low-priority App:Like") && v.detail.contains("no shared slot left"), "\(v.detail)")
    }

    @Test func admittedBeyondTheQuotaPassesTheOtherOracles() throws {
        let others = Set(OracleOptions.allNames).subtracting([ChatroomQuotaOracle.oracleName])
        let (run, _) = try runOracles(burst(), enabled: others, prepare: Self.serverConfig { $0.chatroom.quotaCapacity = 5 })
        expectClean(run)
    }
}
