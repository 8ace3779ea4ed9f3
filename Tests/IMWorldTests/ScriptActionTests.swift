import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// Script steps added for issue 22 (what a scenario could not say): typing, group membership,
/// blocking a user, room lifecycle and whitelist, read / recall of an explicit message.
@Suite struct ScriptActionTests {
    static let steps = """
        {"at": "1s", "device": "alice-phone", "action": "typing", "to": "private:bob"},
        {"at": "2s", "action": "addGroupMembers", "group": "g1", "users": ["bob"]},
        {"at": "3s", "action": "removeGroupMembers", "group": "g1", "users": ["bob"]},
        {"at": "4s", "action": "blockUser", "user": "bob"},
        {"at": "5s", "action": "blockUser", "user": "bob", "blocked": false},
        {"at": "6s", "action": "createChatroom", "room": "hall"},
        {"at": "7s", "action": "keepAliveChatroom", "room": "hall", "enabled": false},
        {"at": "8s", "action": "setChatroomWhitelist", "room": "hall", "users": ["alice"]},
        {"at": "9s", "device": "bob-phone", "action": "read", "conversation": "private:alice", "message": 2},
        {"at": "10s", "device": "alice-phone", "action": "recall", "conversation": "private:bob", "message": 3}
        """

    @Test func newStepsParseAndRoundTrip() throws {
        let s = try duo("steps", script: Self.steps)
        #expect(s.script.map(\.action.kind.rawValue) == ["typing", "addGroupMembers", "removeGroupMembers", "blockUser", "blockUser",
                                                        "createChatroom", "keepAliveChatroom", "setChatroomWhitelist", "read", "recall"])
        #expect(s.script[4].action == .server(.blockUser(user: "bob", blocked: false)))
        #expect(s.script[8].action == .readUpTo(ConversationKey(.privateChat, "alice"), nth: 2, receipt: true))
        #expect(s.script[9].action == .recallMessage(ConversationKey(.privateChat, "bob"), nth: 3))
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        let again = try Scenario.load(json: try enc.encode(s))
        #expect(again == s)
    }

    @Test func badStepsNameTheField() throws {
        #expect(throws: (any Error).self) {
            try duo("bad", script: #"{"at": "1s", "device": "bob-phone", "action": "read", "conversation": "private:alice", "message": 0}"#)
        }
        #expect(throws: (any Error).self) {
            try duo("bad", script: #"{"at": "1s", "action": "addGroupMembers", "group": "g1"}"#)
        }
    }

    /// bob is added to g1 at 5 s: he gets alice's message sent after, not the one before (§1).
    @Test func groupMemberAddedSeesOnlyLaterMessages() throws {
        let s = try duo("group-add", extraUsers: #", {"id": "carol"}"#, extra: #", "groups": [{"id": "g1", "members": ["alice", "carol"]}]"#,
                        script: """
            {"at": "3s", "device": "alice-phone", "action": "send", "to": "group:g1", "text": "before"},
            {"at": "5s", "action": "addGroupMembers", "group": "g1", "users": ["bob"]},
            {"at": "7s", "device": "alice-phone", "action": "send", "to": "group:g1", "text": "after"},
            {"at": "9s", "action": "removeGroupMembers", "group": "g1", "users": ["bob"]},
            {"at": "11s", "device": "alice-phone", "action": "send", "to": "group:g1", "text": "gone"}
            """)
        let (run, _) = try runOracles(s)
        expectClean(run)
        let bob = try run.device("bob-phone"), carol = try run.device("carol-phone")
        let g1 = ConversationKey(.group, "g1")
        let bobs = try run.world.store(ofDevice: bob).history(in: g1, count: 20).map(\.content)
        #expect(bobs == [#"{"content":"after"}"#])
        #expect(try run.world.store(ofDevice: carol).history(in: g1, count: 20).count == 3)
    }

    /// Typing reaches bob's app online and is never stored or counted.
    @Test func typingIsShownNotStored() throws {
        let s = try duo("typing", script: #"{"at": "5s", "device": "alice-phone", "action": "typing", "to": "private:bob"}"#)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        let bob = try run.device("bob-phone")
        let shown = tap.clientEffects(on: bob) { if case .callback(.received(let m, _, _, _)) = $0 { m.objectName == "RC:TypSts" } else { false } }
        #expect(shown.count == 1)
        #expect(try run.world.store(ofDevice: bob).totalMessageCount() == 0)
    }

    /// A blocked user is disconnected and does not reconnect by itself (reconnect oracle on).
    @Test func blockedUserStaysOff() throws {
        let s = try duo("block", script: #"{"at": "5s", "action": "blockUser", "user": "bob"}"#)
        let (run, tap) = try runOracles(s, enabled: ["reconnect", "no-duplicate", "order", "unread-model", "delivery-order"])
        #expect(run.violations.isEmpty, "\(run.violations.map(\.text))")
        let bob = try run.device("bob-phone")
        #expect(tap.clientEffects(on: bob, isOpen).allSatisfy { $0.time < SimTime.zero + .seconds(5) })
    }
}
