import Foundation
import IMClient
import IMStore
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMReplay

/// no-duplicate, order, unread and the chatroom quit are judged by the same device-local rules
/// (`NoDuplicateRule`, `OrderRule`, `UnreadRule`, `QuitRule`) in `imsim run` and `imsim replay`:
/// on a violating run both report the same finding on the same message, and the clean twin is
/// clean on both sides.
@Suite struct ReplayChecksStoreRuleAgreementTests {
    static func duo(_ name: String, client: String = "{}", server: String = "{}", alice: String = #""startAt": "0s""#,
                    script: String) throws -> Scenario {
        try Scenario.load(json: Data("""
        {"name": "\(name)", "duration": "20s",
         "users": [{"id": "alice", "devices": [{"id": "alice-phone", \(alice)}]},
                   {"id": "bob", "devices": [{"id": "bob-phone", "startAt": "0s"}]}],
         "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0,
                     "bandwidthBytesPerSecond": null},
         "client": \(client), "server": \(server),
         "script": [\(script)],
         "liveness": {"deadline": "30s"}}
        """.utf8))
    }

    static func client(_ bugs: [String]) -> String { "{\"bugs\": [" + bugs.map { "\"\($0)\"" }.joined(separator: ", ") + "]}" }

    /// B1: the s_msg accepted during alice's first pull is stored again by the pull.
    static func b1(_ bugs: [String]) throws -> Scenario {
        try duo("agree-b1", client: client(bugs), server: #"{"pullPageSize": 1}"#, alice: #""autoConnect": false"#, script: """
            {"at": "2s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "backlog", "count": 4, "interval": "250ms"},
            {"at": "10s", "device": "alice-phone", "action": "connect"},
            {"at": "10.2s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "during the pull"}
            """)
    }

    /// B4: alice's clock runs 10 s ahead and her own message keeps the device time.
    static func b4(_ bugs: [String]) throws -> Scenario {
        try duo("agree-b4", client: client(bugs), alice: #""startAt": "0s", "clockOffset": "10s""#, script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hello"},
            {"at": "6s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "hi alice"}
            """)
    }

    /// B14: alice recalls a message bob has not read; bob's badge is not decremented.
    static func b14(_ bugs: [String]) throws -> Scenario {
        try duo("agree-b14", client: client(bugs), script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "first"},
            {"at": "6s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "oops"},
            {"at": "8s", "device": "alice-phone", "action": "recall"}
            """)
    }

    /// The first violation of `oracle` on `device` in the run and in the replay of its capture.
    func both(_ s: Scenario, device: String, oracle: String) throws -> (run: Violation, replay: ReplayViolation) {
        let (captures, run) = try recordRun(s, devices: [device], oracles: true)
        let fromRun = try #require(run.violations.first { $0.oracle == oracle && $0.device == device }, "\(run.violations.map(\.text))")
        let report = try replay(try #require(captures[device]))
        #expect(report.divergence == nil)
        let fromReplay = try #require(report.violations.first { $0.oracle == oracle }, "\(report.violations.map(\.text))")
        return (fromRun, fromReplay)
    }

    func cleanOnBoth(_ s: Scenario, device: String) throws {
        let (captures, run) = try recordRun(s, devices: [device], oracles: true)
        #expect(run.violations.isEmpty, "\(run.violations.map(\.text))")
        let report = try replay(try #require(captures[device]))
        #expect(report.violations.isEmpty, "\(report.violations.map(\.text))")
    }

    @Test func noDuplicateAgrees() throws {
        let (r, p) = try both(Self.b1(["B1"]), device: "alice-phone", oracle: "no-duplicate")
        #expect(r.detail == p.detail)
        #expect(r.messageUId == p.messageUId && r.messageUId != nil)
        #expect(r.detail.contains("stored twice on alice-phone"), "\(r.detail)")
        try cleanOnBoth(Self.b1([]), device: "alice-phone")
    }

    @Test func orderAgrees() throws {
        let (r, p) = try both(Self.b4(["B4"]), device: "alice-phone", oracle: "order")
        #expect(r.detail == p.detail)
        #expect(r.messageUId == p.messageUId && r.messageUId != nil)
        #expect(r.detail.contains("own sent message has sentTime"), "\(r.detail)")
        try cleanOnBoth(Self.b4([]), device: "alice-phone")
    }

    @Test func unreadAgrees() throws {
        let (r, p) = try both(Self.b14(["B14"]), device: "bob-phone", oracle: "unread")
        #expect(r.detail == p.detail)
        #expect(r.conversation == p.conversation && r.conversation == "private:alice")
        #expect(r.detail.contains("unread count is 2 but 1"), "\(r.detail)")
        try cleanOnBoth(Self.b14([]), device: "bob-phone")
    }

    /// The quit rule has no bug switch: both sides are fed the same `chatroomQuit` over a store
    /// that still holds the room's messages (as a client that forgot to delete them would leave
    /// it) and report the same finding; over an emptied store, none.
    @Test func quitAgrees() throws {
        let store = try IMStore(location: .memory)
        let room = ConversationKey(.chatroom, "hall")
        for i in 0..<2 {
            _ = try store.storeReceived(ReceivedMessage(
                conversation: room, messageUId: "Q\(i)", senderUserId: "bob", direction: .receive, objectName: "RC:TxtMsg",
                content: #"{"content":"q"}"#, sentTime: 1_000 + Int64(i), receivedTime: 1_010 + Int64(i),
                receivedStatus: .unread, flags: MessageFlags(persistent: .isCounted, mentioned: false)))
        }
        let quit: [ClientEffect] = [.callback(.chatroomQuit(roomId: "hall"))]
        let world = QuitRule.effects(quit, store: store)
        let checks = ReplayChecks(config: ClientConfig(), startMs: 0, device: "alice-phone")
        checks.effects(quit, store: store, serverTimes: [:], t: 5, line: 3)
        #expect(world.map(\.detail) == ["quit chatroom hall but 2 of its messages are still in the store"])
        #expect(checks.violations.map(\.detail) == world.map(\.detail))
        #expect(checks.violations.map(\.oracle) == ["chatroom"])
        _ = try store.quitChatroom("hall")
        #expect(QuitRule.effects(quit, store: store).isEmpty)
    }
}
