import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMClient

/// Owed store writes (issue 28) are retried on the `storeRetry` timer, not only when an input
/// happens to arrive: a disconnected device gets none, and its app waited for `chatroomQuit`
/// until its next call (everyday-storage --swarm seeds 48, 272, 353, 405, 438).
@Suite("Owed store writes: a left room on the retry timer")
struct StoreRetryTimerRoomTests {
    static let room = ConversationKey(.chatroom, "r1")

    private func quits(_ effects: [ClientEffect]) -> [String] {
        effects.callbacks.compactMap { if case .chatroomQuit(let r) = $0 { r } else { nil } }
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

    @Test("a disconnect whose room delete fails: the timer retries until the rows are gone, then chatroomQuit")
    func disconnectQuitRetriedOnTheTimer() throws {
        let disk = SimDisk(seed: 1)
        var h = try inRoom(disk)
        disk.faults.writeError = true
        h.api(.disconnect)
        #expect(quits(h.effects).isEmpty)                      // rows still there: not told yet
        #expect(h.effects.timersSet[.storeRetry] == .milliseconds(500))
        h.now += 500
        h.fire(.storeRetry)                                    // still failing: quiet, armed again
        #expect(quits(h.effects).isEmpty && h.effects.notes.isEmpty)
        #expect(h.effects.timersSet[.storeRetry] == .milliseconds(500))
        disk.faults.writeError = false
        h.now += 500
        h.fire(.storeRetry)
        #expect(quits(h.effects) == ["r1"])
        #expect(try h.store.messageCount(in: Self.room) == 0)
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
        #expect(quits(h.effects).isEmpty && h.effects.timersSet[.storeRetry] == .milliseconds(500))
        h.api(.joinChatroom(roomId: "r1", messageCount: 10))
        #expect(h.effects.callbacks.contains { if case .chatroomJoinFailed("r1", 33002) = $0 { true } else { false } })
        #expect(h.effects.timersSet[.storeRetry] == nil && h.effects.cancelled.isEmpty)   // still armed
        disk.faults.writeError = false
        h.api(.joinChatroom(roomId: "r1", messageCount: 10))
        #expect(quits(h.effects) == ["r1"])
        #expect(h.effects.cancelled == [.storeRetry])
        #expect(h.lastQuery(.joinChrm)?.targetId == "r1")
        #expect(try h.store.messageCount(in: Self.room) == 0)
    }
}
