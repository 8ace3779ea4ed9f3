import IMWire
import Testing
@testable import IMStore

let rcNtf = #"{"operatorId":"alice","recallTime":5000,"originalObjectName":"RC:TxtMsg"}"#

@Suite struct RecallTests {
    @Test(arguments: [true, false])
    func recallOfAnUnreadMessageAdjustsUnreadPerKnob(decrements: Bool) throws {
        let s = try memoryStore(recallDecrements: decrements)
        let a = try store(s, incoming("A", at: 100))
        let b = try store(s, incoming("B", at: 200))
        #expect(try s.conversation(alice)?.unreadCount == 2)
        let r = try s.recall(.messageUId("A"), notificationContent: rcNtf)
        #expect(r.recalledMessageIds == [a])
        #expect(r.alreadyRecalledMessageIds == [])
        let change = try #require(r.conversations.first)
        #expect(r.conversations.count == 1)
        #expect(change.key == alice)
        #expect(change.unreadDelta == (decrements ? -1 : 0))
        #expect(change.unreadCount == (decrements ? 1 : 2))
        #expect(!change.latestChanged, "A is not the latest message")
        #expect(try s.conversation(alice)?.unreadCount == (decrements ? 1 : 2))
        // The row keeps its id, UId and time; its content is the notification, no longer counted.
        let m = try #require(try s.message(id: a))
        #expect(m.objectName == "RC:RcNtf")
        #expect(m.isRecalled)
        #expect(m.content == rcNtf)
        #expect(m.extra == nil)
        #expect(m.messageUId == "A")
        #expect(m.sentTime == 100)
        #expect(m.flags == .persisted)
        #expect(try unreadRows(s, alice) == 1)
        // Bug B14 (knob off) leaves drift until the user reads the conversation: clearUnread recounts.
        let cleared = try s.clearUnread(in: alice, upTo: 100)
        #expect(cleared.conversation?.unreadCount == 1)
        #expect(try s.conversation(alice)?.latestMessageId == b)
    }

    @Test func recallOfAReadMessageDoesNotTouchUnread() throws {
        let s = try memoryStore()
        _ = try store(s, incoming("A", at: 100, status: .read))
        _ = try store(s, incoming("B", at: 200))
        let r = try s.recall(.messageUId("A"), notificationContent: rcNtf)
        #expect(r.conversations.first?.unreadDelta == 0)
        #expect(try s.conversation(alice)?.unreadCount == 1)
    }

    @Test func recallingTheLatestMessageReportsALatestChange() throws {
        let s = try memoryStore()
        let id = try s.insertOutgoing(outgoing("oops", at: 10)).messageId
        _ = try s.markSent(messageId: id, messageUId: "MINE", sentTime: 20)
        let r = try s.recall(.messageId(id), notificationContent: rcNtf)
        #expect(r.recalledMessageIds == [id])
        #expect(r.conversations.first?.latestChanged == true)
        #expect(r.conversations.first?.latestMessageId == id, "the notification keeps the messageId")
        #expect(try s.message(id: id)?.sentStatus == .sent)
    }

    @Test func repeatedRecallIsReportedAndChangesNothing() throws {
        let s = try memoryStore()
        let a = try store(s, incoming("A", at: 100))
        _ = try s.recall(.messageUId("A"), notificationContent: rcNtf)
        let again = try s.recall(.messageUId("A"), notificationContent: #"{"other":1}"#)
        #expect(again.recalledMessageIds == [])
        #expect(again.alreadyRecalledMessageIds == [a])
        #expect(again.conversations == [])
        #expect(try s.message(id: a)?.content == rcNtf)
        #expect(try s.conversation(alice)?.unreadCount == 0)
    }

    @Test func recallOfAnUnknownMessageChangesNothing() throws {
        let s = try memoryStore()
        let r = try s.recall(.messageUId("NOPE"), notificationContent: rcNtf)
        #expect(r == RecallResult(recalledMessageIds: [], alreadyRecalledMessageIds: [], conversations: []))
        #expect(try s.recall(.messageId(42), notificationContent: rcNtf).recalledMessageIds == [])
    }

    @Test func recallByUIdReachesEveryDuplicateRow() throws {
        let s = try memoryStore(dedup: false)
        let a1 = try store(s, incoming("A", at: 100))
        let a2 = try store(s, incoming("A", at: 100))
        #expect(try s.conversation(alice)?.unreadCount == 2)
        let r = try s.recall(.messageUId("A"), notificationContent: rcNtf)
        #expect(r.recalledMessageIds == [a1, a2])
        #expect(r.conversations.first?.unreadDelta == -2)
        #expect(try s.conversation(alice)?.unreadCount == 0)
    }

    @Test func recallClearsAnUnreadMention() throws {
        let s = try memoryStore()
        _ = try store(s, incoming("A", in: team, at: 100, mentioned: true))
        _ = try store(s, incoming("B", in: team, at: 200))
        #expect(try s.conversation(team)?.hasUnreadMentioned == true)
        let r = try s.recall(.messageUId("A"), notificationContent: rcNtf)
        #expect(r.conversations.first?.mentionChanged == true)
        #expect(try s.conversation(team)?.hasUnreadMentioned == false)
    }
}

@Suite struct ReadReceiptTests {
    /// Private read receipt: every outgoing message with sentTime ≤ t becomes READ; the mark only rises.
    @Test func receiptsFormAHighWaterMark() throws {
        let s = try memoryStore()
        var ids: [Int64] = []
        for (i, t) in [100, 200, 300].enumerated() {
            let id = try s.insertOutgoing(outgoing("m\(i)", at: Int64(t) - 5)).messageId
            _ = try s.markSent(messageId: id, messageUId: "S\(i)", sentTime: Int64(t))
            ids.append(id)
        }
        let pending = try s.insertOutgoing(outgoing("unsent", at: 150)).messageId  // SENDING, sentTime 150
        let failed = try s.insertOutgoing(outgoing("failed", at: 160)).messageId
        _ = try s.markFailed(messageId: failed)
        let incomingId = try store(s, incoming("IN", at: 120))

        let r1 = try s.applyReadReceipt(in: alice, upTo: 200)
        #expect(r1.advanced)
        #expect(r1.highWaterMark == 200)
        #expect(r1.markedReadMessageIds == [ids[0], ids[1]], "≤ is inclusive; unsent and failed rows are not READ")
        #expect(try s.message(id: ids[1])?.sentStatus == .read)
        #expect(try s.message(id: ids[2])?.sentStatus == .sent)
        #expect(try s.message(id: pending)?.sentStatus == .sending)
        #expect(try s.message(id: failed)?.sentStatus == .failed)
        #expect(try s.message(id: incomingId)?.sentStatus == .sent, "received rows are not touched")

        // A stale or repeated receipt changes nothing, even for rows that became SENT since.
        _ = try s.markSent(messageId: pending, messageUId: "LATE", sentTime: 150)
        let stale = try s.applyReadReceipt(in: alice, upTo: 150)
        #expect(!stale.advanced)
        #expect(stale.highWaterMark == 200)
        #expect(stale.markedReadMessageIds == [])
        #expect(try s.message(id: pending)?.sentStatus == .sent)
        #expect(try !s.applyReadReceipt(in: alice, upTo: 200).advanced)

        // The next advancing receipt catches up everything at or below it.
        let r2 = try s.applyReadReceipt(in: alice, upTo: 300)
        #expect(r2.markedReadMessageIds == [ids[2], pending])
        #expect(try s.conversation(alice)?.readReceiptTime == 300)
        // Other conversations are untouched.
        let other = try s.insertOutgoing(outgoing("b", in: bob, at: 10)).messageId
        _ = try s.markSent(messageId: other, messageUId: "B1", sentTime: 10)
        #expect(try s.message(id: other)?.sentStatus == .sent)
    }
}

@Suite struct UnreadTests {
    @Test func clearUnreadUpToATimeIsInclusive() throws {
        let s = try memoryStore()
        let a = try store(s, incoming("A", at: 100))
        let b = try store(s, incoming("B", at: 200, mentioned: true))
        let c = try store(s, incoming("C", at: 300))
        let r = try s.clearUnread(in: alice, upTo: 200)
        #expect(r.markedReadMessageIds == [a, b])
        #expect(r.conversation?.unreadCount == 1)
        #expect(r.conversation?.unreadDelta == -2)
        #expect(r.conversation?.mentionChanged == true)
        #expect(try s.conversation(alice)?.hasUnreadMentioned == false)
        #expect(try s.message(id: b)?.receivedStatus.contains(.read) == true)
        #expect(try s.message(id: c)?.receivedStatus == .unread)
        // Clearing again marks nothing new.
        #expect(try s.clearUnread(in: alice, upTo: 200).markedReadMessageIds == [])
        // Everything.
        let all = try s.clearUnread(in: alice)
        #expect(all.markedReadMessageIds == [c])
        #expect(try s.conversation(alice)?.unreadCount == 0)
    }

    @Test func clearUnreadKeepsOtherStatusBits() throws {
        let s = try memoryStore()
        let id = try store(s, incoming("A", at: 100, status: [.retrieved, .downloaded]))
        _ = try s.clearUnread(in: alice, upTo: 100)
        #expect(try s.message(id: id)?.receivedStatus == [.read, .retrieved, .downloaded])
    }

    @Test func totalUnreadSumsConversations() throws {
        let s = try memoryStore()
        _ = try store(s, incoming("A", at: 1))
        _ = try store(s, incoming("B", in: bob, at: 2))
        _ = try store(s, incoming("C", in: bob, at: 3))
        #expect(try s.totalUnreadCount() == 3)
        _ = try s.clearUnread(in: bob)
        #expect(try s.totalUnreadCount() == 1)
    }

    @Test func clearUnreadOnAnUnknownConversationIsHarmless() throws {
        let s = try memoryStore()
        let r = try s.clearUnread(in: bob, upTo: 10)
        #expect(r.markedReadMessageIds == [])
        #expect(r.conversation == nil)
    }
}
