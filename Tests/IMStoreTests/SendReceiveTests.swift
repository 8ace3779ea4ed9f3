import IMWire
import Testing
@testable import IMStore

@Suite struct SendTests {
    @Test func outgoingIsInsertedAsSendingWithLocalTime() throws {
        let s = try memoryStore()
        let r = try s.insertOutgoing(outgoing("hi", at: 1_000, cuid: 77))
        #expect(r.messageId > 0)
        #expect(r.conversationChanged && r.latestChanged)
        let m = try #require(try s.message(id: r.messageId))
        #expect(m == r.message, "the returned row is the stored row")
        #expect(m.sentStatus == .sending)
        #expect(m.direction == .send)
        #expect(m.messageUId == nil)
        #expect(m.sentTime == 1_000)
        #expect(m.receivedTime == 1_000)
        #expect(m.clientUniqueId == 77)
        #expect(m.senderUserId == "me")
        #expect(m.content == #"{"content":"hi"}"#)
        let c = try #require(try s.conversation(alice))
        #expect(c.latestMessageId == r.messageId)
        #expect(c.latestTime == 1_000)
        #expect(c.unreadCount == 0, "own messages never count as unread")
    }

    @Test func markSentAssignsUIdAndServerTime() throws {
        let s = try memoryStore()
        let id = try s.insertOutgoing(outgoing("hi", at: 1_000)).messageId
        let u = try s.markSent(messageId: id, messageUId: "UID-1", sentTime: 1_234)
        #expect(u.updated)
        #expect(u.previousStatus == .sending)
        #expect(u.conversation == alice)
        #expect(u.otherRowsWithSameUId == [])
        let m = try #require(try s.message(id: id))
        #expect(m.sentStatus == .sent)
        #expect(m.messageUId == "UID-1")
        #expect(m.sentTime == 1_234)
        #expect(try s.conversation(alice)?.latestTime == 1_234)
        // A repeated PUBACK changes nothing.
        let again = try s.markSent(messageId: id, messageUId: "UID-1", sentTime: 1_300)
        #expect(!again.updated)
        #expect(again.previousStatus == .sent)
        #expect(try s.message(id: id)?.sentTime == 1_234)
    }

    /// The server time can move the message behind a received one: latest is recomputed (B4's
    /// correct side: order by server time, not by the skewed device clock).
    @Test func markSentWithEarlierServerTimeReordersLatest() throws {
        let s = try memoryStore()
        let received = try store(s, incoming("R1", at: 5_000))
        let mine = try s.insertOutgoing(outgoing("fast clock", at: 9_000)).messageId
        #expect(try s.conversation(alice)?.latestMessageId == mine)
        let u = try s.markSent(messageId: mine, messageUId: "M1", sentTime: 4_000)
        #expect(u.latestChanged)
        #expect(try s.conversation(alice)?.latestMessageId == received)
        #expect(try s.conversation(alice)?.latestTime == 5_000)
        #expect(try s.snapshot(of: alice).map(\.messageId) == [mine, received])
    }

    @Test func failedThenResentThenSent() throws {
        let s = try memoryStore()
        let id = try s.insertOutgoing(outgoing("x", at: 10)).messageId
        let f = try s.markFailed(messageId: id)
        #expect(f.updated && f.previousStatus == .sending)
        #expect(try s.message(id: id)?.sentStatus == .failed)
        #expect(try !s.markFailed(messageId: id).updated, "FAILED → FAILED is not a change")
        let r = try s.markResending(messageId: id)
        #expect(r.updated && r.previousStatus == .failed)
        #expect(try s.message(id: id)?.sentStatus == .sending)
        #expect(try !s.markResending(messageId: id).updated)
        #expect(try s.markFailed(messageId: id).updated)
        // A late PUBACK for a FAILED row still makes it SENT (the server did accept it).
        #expect(try s.markSent(messageId: id, messageUId: "U", sentTime: 20).updated)
        #expect(try s.message(id: id)?.sentStatus == .sent)
        #expect(try s.messageCount(in: alice) == 1, "a resend reuses the row")
    }

    @Test func statusChangesOnMissingOrReceivedRowsAreNoOps() throws {
        let s = try memoryStore()
        let missing = try s.markSent(messageId: 999, messageUId: "U", sentTime: 1)
        #expect(!missing.updated)
        #expect(missing.previousStatus == nil)
        #expect(missing.conversation == nil)
        let rid = try store(s, incoming("R", at: 3))
        #expect(try !s.markFailed(messageId: rid).updated, "received rows have no send state")
        #expect(try s.message(id: rid)?.sentStatus == .sent)
    }

    @Test func markSentReportsRowsAlreadyCarryingTheUId() throws {
        let s = try memoryStore()
        // The sendbox pull stored our own message (as a sync echo) before the late PUBACK arrived.
        let echo = try store(s, incoming("U9", at: 50, from: "me", direction: .send))
        let id = try s.insertOutgoing(outgoing("x", at: 40)).messageId
        let u = try s.markSent(messageId: id, messageUId: "U9", sentTime: 50)
        #expect(u.updated)
        #expect(u.otherRowsWithSameUId == [echo])
        #expect(try s.countRows(withUId: "U9") == 2)
    }

    @Test func messageIdsIncreaseAndAreNeverReused() throws {
        let s = try memoryStore()
        let a = try store(s, incoming("A", at: 1))
        let b = try store(s, incoming("B", at: 2))
        #expect(b > a)
        _ = try s.deleteMessages(ids: [b])
        let c = try store(s, incoming("C", at: 3))
        #expect(c > b, "AUTOINCREMENT: a deleted newest id is not handed out again")
    }
}

@Suite struct ReceiveTests {
    @Test func storesAllFieldsAndCountsUnread() throws {
        let s = try memoryStore()
        var m = incoming("U1", in: team, at: 1_000, from: "carol", mentioned: true)
        m.extra = "x-extra"
        m.clientUniqueId = 5
        let r = try s.storeReceived(m)
        #expect(r.isNew)
        #expect(r.conversationChanged && r.latestChanged)
        #expect(r.unreadDelta == 1)
        let got = try #require(try s.message(id: r.messageId))
        #expect(got == StoredMessage(
            messageId: r.messageId, messageUId: "U1", conversation: team, senderUserId: "carol", direction: .receive,
            objectName: "RC:TxtMsg", content: #"{"content":"U1"}"#, extra: "x-extra", sentTime: 1_000,
            receivedTime: 1_007, sentStatus: .sent, receivedStatus: .unread,
            flags: [.persisted, .counted, .mentioned], clientUniqueId: 5))
        #expect(got.flags.persistent == .isCounted)
        #expect(got == m.stored(messageId: r.messageId))
        let c = try #require(try s.conversation(team))
        #expect(c.unreadCount == 1)
        #expect(c.hasUnreadMentioned)
    }

    @Test func onlyReceivedCountedUnreadMessagesCount() throws {
        let s = try memoryStore()
        #expect(try s.storeReceived(incoming("A", at: 1)).unreadDelta == 1)
        #expect(try s.storeReceived(incoming("B", at: 2, persistent: .isPersisted)).unreadDelta == 0)
        #expect(try s.storeReceived(incoming("C", at: 3, status: .read)).unreadDelta == 0)
        #expect(try s.storeReceived(incoming("D", at: 4, status: .retrieved)).unreadDelta == 1,
                "RETRIEVED (fetched by another device) is still unread here")
        #expect(try s.storeReceived(incoming("E", at: 5, from: "me", direction: .send)).unreadDelta == 0,
                "sync echoes of own messages never count")
        #expect(try s.conversation(alice)?.unreadCount == 2)
        #expect(try unreadRows(s, alice) == 2)
    }

    @Test func olderMessageDoesNotBecomeLatestButStillCounts() throws {
        let s = try memoryStore()
        let newer = try store(s, incoming("N", at: 2_000))
        let r = try s.storeReceived(incoming("O", at: 1_000))  // pulled late
        #expect(r.isNew)
        #expect(!r.latestChanged)
        #expect(r.conversationChanged, "the unread count changed")
        #expect(try s.conversation(alice)?.latestMessageId == newer)
        let notCounted = try s.storeReceived(incoming("P", at: 500, persistent: .isPersisted))
        #expect(!notCounted.conversationChanged)
    }

    @Test func sameMillisecondTieBreaksByMessageId() throws {
        let s = try memoryStore()
        _ = try store(s, incoming("A", at: 100))
        let b = try s.storeReceived(incoming("B", at: 100))
        #expect(b.latestChanged)
        #expect(try s.conversation(alice)?.latestMessageId == b.messageId)
    }

    @Test func zeroSentTimeFallsBackToReceivedTime() throws {
        let s = try memoryStore()
        let m = incoming("Z", at: 0)
        let id = try store(s, m)
        #expect(try s.message(id: id)?.sentTime == 7)  // receivedTime = sentTime + 7 in the fixture
        #expect(try s.message(id: id) == m.stored(messageId: id))
    }

    @Test func dedupOnReturnsTheExistingRow() throws {
        let s = try memoryStore(dedup: true)
        let first = try s.storeReceived(incoming("DUP", at: 10))
        let second = try s.storeReceived(incoming("DUP", at: 10, text: "again"))
        #expect(first.isNew)
        #expect(!second.isNew)
        #expect(second.messageId == first.messageId)
        #expect(!second.conversationChanged)
        #expect(second.unreadDelta == 0)
        #expect(try s.countRows(withUId: "DUP") == 1)
        #expect(try s.conversation(alice)?.unreadCount == 1)
        #expect(try s.message(id: first.messageId)?.content == #"{"content":"DUP"}"#, "the first copy wins")
        // Dedup is global: the same messageUId in another conversation is still a duplicate.
        #expect(try !s.storeReceived(incoming("DUP", in: bob, at: 10)).isNew)
        // Messages without a messageUId are never deduplicated.
        #expect(try s.storeReceived(incoming(nil, at: 11)).isNew)
        #expect(try s.storeReceived(incoming(nil, at: 11)).isNew)
    }

    @Test func dedupOffStoresDuplicatesAsNewRows() throws {
        let s = try memoryStore(dedup: false)
        let first = try s.storeReceived(incoming("DUP", at: 10))
        let second = try s.storeReceived(incoming("DUP", at: 10))
        #expect(first.isNew && second.isNew)
        #expect(second.messageId > first.messageId)
        #expect(second.unreadDelta == 1)
        #expect(try s.conversation(alice)?.unreadCount == 2, "the duplicate is counted too — the user sees the bug")
        #expect(try s.countRows(withUId: "DUP") == 2)
        #expect(try s.allMessageUIds() == ["DUP", "DUP"])
        #expect(try s.duplicateMessageUIds() == [DuplicateUId(messageUId: "DUP", rows: 2)])
        #expect(try s.messages(withUId: "DUP").map(\.messageId) == [first.messageId, second.messageId])
    }

    @Test func optionsCanBeSwitchedBetweenOperations() throws {
        let s = try memoryStore(dedup: false)
        _ = try store(s, incoming("X", at: 1))
        _ = try store(s, incoming("X", at: 1))
        s.options.dedupByMessageUId = true
        #expect(try !s.storeReceived(incoming("X", at: 1)).isNew)
        #expect(try s.countRows(withUId: "X") == 2)
    }

    /// Duplicates carry copy numbers; deleting the first copy promotes another, so dedup (switched
    /// back on) still sees the messageUId as stored.
    @Test func dedupSurvivesDeletingTheFirstCopy() throws {
        let s = try memoryStore(dedup: false)
        let first = try store(s, incoming("X", at: 1))
        let second = try store(s, incoming("X", at: 1))
        let third = try store(s, incoming("X", at: 1))
        func copies() throws -> [Int64] {
            let st = try s.connection.prepare("SELECT uidCopy FROM messages WHERE messageUId = 'X' ORDER BY messageId")
            var out: [Int64] = []
            while try st.step() { out.append(st.int64(0)) }
            return out
        }
        #expect(try copies() == [0, 1, 2])
        _ = try s.deleteMessages(ids: [first])
        #expect(try copies() == [0, 2])
        s.options.dedupByMessageUId = true
        let again = try s.storeReceived(incoming("X", at: 1))
        #expect(!again.isNew)
        #expect(again.messageId == second)
        _ = try s.clearHistory(in: alice, upTo: 0)
        #expect(try s.storeReceived(incoming("X", at: 1)).isNew, "gone entirely: storable again")
        _ = third
    }

    @Test func batchIsOneTransactionAndDedupsWithinIt() throws {
        let s = try memoryStore()
        let results = try s.storeReceived([
            incoming("A", at: 1), incoming("B", at: 2), incoming("A", at: 1), incoming("C", in: bob, at: 3),
        ])
        #expect(results.map(\.isNew) == [true, true, false, true])
        #expect(results[2].messageId == results[0].messageId)
        #expect(results.map(\.unreadDelta) == [1, 1, 0, 1])
        #expect(try s.conversation(alice)?.unreadCount == 2)
        #expect(try s.conversation(bob)?.unreadCount == 1)
    }

    @Test func aFailingBatchLeavesNothing() throws {
        let s = try memoryStore()
        #expect(throws: StoreError.self) {
            try s.storeReceived([incoming("A", at: 1), incoming("B", in: ConversationKey(.group, ""), at: 2)])
        }
        #expect(try s.totalMessageCount() == 0)
        #expect(try s.conversation(alice) == nil)
    }

    @Test func storeTransactionGroupsOperations() throws {
        let s = try memoryStore()
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try s.transaction { st in
                _ = try st.storeReceived(incoming("A", at: 1))
                try st.advanceCursor(.inbox, to: 1)
                throw Abort()
            }
        }
        #expect(try s.totalMessageCount() == 0)
        #expect(try s.cursor(.inbox) == 0)
        try s.transaction { st in
            _ = try st.storeReceived(incoming("A", at: 1))
            try st.advanceCursor(.inbox, to: 1)
        }
        #expect(try s.totalMessageCount() == 1)
        #expect(try s.cursor(.inbox) == 1)
    }
}
