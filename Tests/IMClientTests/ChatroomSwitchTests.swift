import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMClient

/// Issue 22 item 2. Seed rule (im-semantics §6): "加入新的聊天室后，会自动退出之前的聊天室" — joining
/// another room quits the first only after the new join has succeeded; a failed join (23410…)
/// leaves the user in the old room, still receiving it.
@Suite("Chatroom switch")
struct ChatroomSwitchTests {
    @Test("a failed join of another room keeps the old room, which still pulls", arguments: [UInt16(23410), 23409, 23411])
    func failedJoinKeepsTheOldRoom(code: UInt16) throws {
        var h = Harness()
        h.connectInSync()
        h.join("r1")
        h.answerChatroomPull([], syncTime: 0)
        h.api(.joinChatroom(roomId: "r2", messageCount: 10))
        #expect(h.queries(.exitChrm).isEmpty)                       // not quit at the call
        #expect(!h.effects.callbacks.contains { if case .chatroomQuit("r1") = $0 { true } else { false } })
        h.answer(.joinChrm, status: code, qos: .atMostOnce)
        #expect(h.effects.callbacks.contains { if case .chatroomJoinFailed("r2", Int32(code)) = $0 { true } else { false } })
        #expect(!h.effects.callbacks.contains { if case .chatroomQuit("r1") = $0 { true } else { false } })
        // Still in r1: a room notify pulls it.
        h.server(sNtf(time: 5_000, id: 9, room: "r1"))
        #expect(h.lastQuery(.chrmPull)?.targetId == "r1")
    }

    @Test("a successful join of another room quits the old one then")
    func successfulJoinQuitsTheOldRoom() throws {
        var h = Harness()
        h.connectInSync()
        h.join("r1")
        h.answerChatroomPull([], syncTime: 0)
        h.api(.joinChatroom(roomId: "r2", messageCount: 10))
        #expect(h.queries(.exitChrm).isEmpty)
        h.answer(.joinChrm, body: try ProtoBody.encode(RMTPChrmOutput.with { $0.nothing = 0 }), qos: .atMostOnce)
        #expect(h.effects.callbacks.contains { if case .chatroomJoined("r2") = $0 { true } else { false } })
        #expect(h.effects.callbacks.contains { if case .chatroomQuit("r1") = $0 { true } else { false } })
        #expect(h.queries(.exitChrm).map(\.targetId) == ["r1"])
    }
}

/// Issue 22 item 7. Seed rule (wire-protocol §4): "only the join pull keeps a 10-entry id cache" —
/// an incremental pull (s_ntf → chrmPull) relies on the room cursor alone.
@Suite("Chatroom id cache")
struct ChatroomIdCacheTests {
    @Test("an incremental pull is not filtered by the join pull's id cache; a second join pull is")
    func cacheIsForTheJoinPullOnly() {
        var h = Harness()
        h.connectInSync()
        h.join("r1")
        h.answerChatroomPull([roomMessage("r1", uid: "M1", at: 100)], syncTime: 100)
        #expect(h.effects.received.map(\.message.messageUId) == ["M1"])
        // The server's page repeats M1 at the cursor's own millisecond: the cursor keeps it.
        h.server(sNtf(time: 120, id: 1, room: "r1"))
        h.answerChatroomPull([roomMessage("r1", uid: "M1", at: 100), roomMessage("r1", uid: "M2", at: 120)], syncTime: 120)
        #expect(h.effects.received.map(\.message.messageUId) == ["M1", "M2"])
        // A second join pull: the cache hides what was shown.
        h.join("r1")
        h.answerChatroomPull([roomMessage("r1", uid: "M2", at: 120)], syncTime: 120)
        #expect(h.effects.received.isEmpty)
    }
}
