import IMWire
import Testing
@testable import IMServer

/// A chatroom pull leaves out, and never reports lost, only the pulling session's own messages:
/// the same user *and* device, in the ring and among the messages it already evicted alike.
@Suite struct ChatroomOwnMessageTests {
    /// alice and bob on devices with the same id; alice's messages fall out of a ring of 1. Bob's
    /// pull from before them is told each evicted one is lost (they are not his own), and the
    /// page holds alice's newest; alice's own pull reports nothing of hers and serves nothing.
    @Test func evictedMessagesOfAnotherUserOnTheSameDeviceIdAreReportedLost() {
        var h = ChatroomTests.harness { $0.chatroom.historySize = 1; $0.chatroom.autoDestroyAfterMs = 86_400_000 }
        let a = h.online("alice", device: "shared")
        let b = h.online("bob", device: "shared")
        _ = h.join(a, room: "r")
        _ = h.join(b, room: "r")
        var uids: [String] = []
        for i in 0..<3 {
            h.advance(ms: 100)
            uids.append(h.sendText(a, to: "r", "m\(i)", topic: .chatMsg).1.puback(a)!.messageUId)
        }
        h.advance(ms: 100)
        let conv = ConversationKey(.chatroom, "r")
        let bobPull = h.chatroomPull(b, room: "r", syncTime: Harness.t0, count: 10)
        let lost = bobPull.drops.filter { $0.reason == .chatroomRingOverflow }
        #expect(lost.map(\.uid) == [uids[0], uids[1]])
        #expect(lost.allSatisfy { $0.user == "bob" })
        #expect(bobPull.has(.dropped(messageUId: uids[0], conversation: conv, userId: "bob", reason: .chatroomRingOverflow)))
        #expect(bobPull.pullPage(b)?.list.count == 1)

        let alicePull = h.chatroomPull(a, room: "r", syncTime: Harness.t0, count: 10)
        #expect(alicePull.drops.isEmpty)
        #expect(alicePull.pullPage(a)?.list.isEmpty == true)
    }
}
