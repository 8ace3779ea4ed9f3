import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMClient

/// A left room whose local rows a storage fault kept (issue 28): the app is told `chatroomQuit`
/// at once (everyday-storage --swarm seed 9039: told only once the rows were gone, an app whose
/// disk failed for longer than the rejoin grace connected again believing it was still in the
/// room); the rows stay owed a removal, retried at every input and on the `storeRetry` timer
/// (seeds 48, 272, 353, 405, 438), hidden from the app until then, and the removal spares rows
/// the app is told of after the quit.
@Suite("Owed store writes: a left room, told at once, removed on the retry timer")
struct StoreRetryTimerRoomTests {
    static let room = ConversationKey(.chatroom, "r1")

    private func quits(_ effects: [ClientEffect]) -> [String] {
        effects.callbacks.compactMap { if case .chatroomQuit(let r) = $0 { r } else { nil } }
    }

    private func historyPage(_ h: inout Harness) throws -> [String] {
        h.api(.getHistory(conversation: Self.room, beforeMessageId: -1, count: 20))
        let page = try #require(h.effects.callbacks.compactMap { if case .history(_, let m) = $0 { m } else { nil } }.first)
        return page.map { $0.messageUId ?? "#\($0.messageId)" }
    }

    /// Connected, in room r1 with one stored message, on a simulated disk.
    private func inRoom(_ disk: SimDisk) throws -> Harness {
        var h = Harness(store: try IMStore(location: .device(disk)))
        h.connectInSync()
        h.join("r1")
        h.answerChatroomPull([roomMessage("r1", uid: "M1", at: 100)], syncTime: 100)
        #expect(try h.store.messageCount(in: Self.room) == 1)
        return h
    }

    // (A store without faults never arms the timer: StoreRetryTimerTests.noFaultNoTimer.)

    @Test("a disconnect whose room delete fails: chatroomQuit at once, the rows hidden, removed on the timer with no second callback")
    func disconnectQuitToldAtOnce() throws {
        let disk = SimDisk(seed: 1)
        var h = try inRoom(disk)
        disk.faults.writeError = true
        h.api(.disconnect)
        #expect(h.effects.notes.contains { if case .storeError(let op, _) = $0 { op == "clear chatroom r1" } else { false } })
        #expect(quits(h.effects) == ["r1"])                    // told now, not once the rows are gone
        #expect(h.effects.timersSet[.storeRetry] == .milliseconds(500))
        // The rows are still stored, but the app reads the room as quit: empty.
        #expect(try h.store.messageCount(in: Self.room) == 1)
        #expect(try h.core.messageCount(in: Self.room) == 0)
        #expect(try h.core.conversation(Self.room) == nil)
        #expect(try h.store.conversation(Self.room) != nil)
        #expect(try historyPage(&h).isEmpty)
        h.now += 500
        h.fire(.storeRetry)                                    // still failing: quiet, armed again
        #expect(h.effects.callbacks.isEmpty && h.effects.notes.isEmpty)
        #expect(h.effects.timersSet[.storeRetry] == .milliseconds(500))
        disk.faults.writeError = false
        h.now += 500
        h.fire(.storeRetry)
        #expect(quits(h.effects).isEmpty)                      // no second callback
        #expect(h.effects.notes.contains { if case .changed(_, _, let what) = $0 { what.contains("removed after a store failure (1 messages") } else { false } })
        #expect(try h.store.messageCount(in: Self.room) == 0)
        #expect(try h.store.conversation(Self.room) == nil)
        #expect(h.effects.timersSet[.storeRetry] == nil && h.effects.cancelled.isEmpty)
        // Nothing owed: the next connect neither rejoins nor arms the timer.
        h.connect(timestamp: 5_000)
        #expect(h.lastQuery(.joinChrmR) == nil && h.lastQuery(.joinChrm) == nil)
        #expect(h.effects.timersSet[.storeRetry] == nil)
    }

    @Test("work an input completes first cancels the timer; a join of the room is refused (33002) only until then")
    func anInputCompletingTheWorkCancelsTheTimer() throws {
        let disk = SimDisk(seed: 2)
        var h = try inRoom(disk)
        disk.faults.writeError = true
        h.api(.quitChatroom(roomId: "r1"))
        #expect(quits(h.effects) == ["r1"] && h.effects.timersSet[.storeRetry] == .milliseconds(500))
        h.api(.joinChatroom(roomId: "r1", messageCount: 10))
        #expect(h.effects.callbacks.contains { if case .chatroomJoinFailed("r1", 33002) = $0 { true } else { false } })
        #expect(h.lastQuery(.joinChrm) == nil)
        #expect(h.effects.timersSet[.storeRetry] == nil && h.effects.cancelled.isEmpty)   // still armed
        disk.faults.writeError = false
        h.api(.joinChatroom(roomId: "r1", messageCount: 10))
        #expect(quits(h.effects).isEmpty)                      // told at the quit, not again
        #expect(h.effects.cancelled == [.storeRetry])
        #expect(h.lastQuery(.joinChrm)?.targetId == "r1")
        #expect(try h.store.messageCount(in: Self.room) == 0)
    }

    @Test("the owed removal spares a row the app is told of after the quit; only that row is shown meanwhile")
    func rowsToldAfterTheQuitAreSpared() throws {
        let disk = SimDisk(seed: 3)
        var h = try inRoom(disk)
        disk.faults.writeError = true
        h.api(.disconnect)
        #expect(quits(h.effects) == ["r1"])
        // The app sends to the room it left (offline: FAILED). The send's row commits while the
        // removal is still owed — stored here straight into the store, as a disk that fails the
        // retry at the top of an input and not the insert after it would.
        disk.faults.writeError = false
        let mine = try h.store.insertOutgoing(OutgoingMessage(
            conversation: Self.room, senderUserId: Harness.user, objectName: "RC:TxtMsg", content: text("after"),
            flags: MessageFlags(persistent: .isPersisted, mentioned: false), clientUniqueId: 9, localTime: h.now)).messageId
        #expect(try h.store.messageCount(in: Self.room) == 2)
        #expect(try h.core.messageCount(in: Self.room) == 1)
        #expect(try h.core.conversation(Self.room)?.latestMessageId == mine)
        // The history input's retry (top of the input) removes M1 and keeps the new row.
        #expect(try historyPage(&h) == ["#\(mine)"])
        #expect(h.effects.notes.contains { if case .changed(_, _, let what) = $0 { what.contains("removed after a store failure (1 messages") } else { false } })
        #expect(quits(h.effects).isEmpty)
        #expect(try h.store.history(in: Self.room).map(\.messageId) == [mine])
        #expect(try h.store.conversation(Self.room)?.latestMessageId == mine)
        #expect(try h.core.messageCount(in: Self.room) == 1)
        // Quitting again removes every row of the room, the spared one too.
        h.api(.quitChatroom(roomId: "r1"))
        #expect(quits(h.effects) == ["r1"])
        #expect(try h.store.messageCount(in: Self.room) == 0)
    }

    @Test("a hidden row is gone for resend and recall too")
    func hiddenRowsCannotBeResentOrRecalled() throws {
        let disk = SimDisk(seed: 4)
        var h = try inRoom(disk)
        // An own FAILED row in the room (sent while the room was joined, refused).
        let failed = try h.store.insertOutgoing(OutgoingMessage(
            conversation: Self.room, senderUserId: Harness.user, objectName: "RC:TxtMsg", content: text("mine"),
            flags: MessageFlags(persistent: .isPersisted, mentioned: false), clientUniqueId: 8, localTime: h.now)).messageId
        _ = try h.store.markFailed(messageId: failed)
        let sent = try h.store.insertOutgoing(OutgoingMessage(
            conversation: Self.room, senderUserId: Harness.user, objectName: "RC:TxtMsg", content: text("sent"),
            flags: MessageFlags(persistent: .isPersisted, mentioned: false), clientUniqueId: 7, localTime: h.now)).messageId
        _ = try h.store.markSent(messageId: sent, messageUId: "S1", sentTime: 200)
        disk.faults.writeError = true
        h.api(.quitChatroom(roomId: "r1"))
        #expect(quits(h.effects) == ["r1"])
        #expect(try h.store.message(id: failed)?.sentStatus == .failed)
        h.api(.resend(messageId: failed))
        #expect(h.effects.sendResults.map(\.error) == [IMErrorCode.invalidParameter.rawValue])
        #expect(h.publishes.isEmpty)
        h.api(.recall(messageId: sent))
        #expect(h.effects.callbacks.contains { if case .recallResult(sent, IMErrorCode.invalidParameter.rawValue) = $0 { true } else { false } })
        #expect(h.publishes.isEmpty)
    }
}
