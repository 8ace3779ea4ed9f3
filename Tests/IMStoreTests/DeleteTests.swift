import IMWire
import Testing
@testable import IMStore

@Suite struct ClearHistoryTests {
    /// Three messages at 100, 200, 300 (all unread) plus one in another conversation.
    private func fixture() throws -> (IMStore, [Int64]) {
        let s = try memoryStore()
        let ids = try [100, 200, 300].map { try store(s, incoming("A\($0)", at: Int64($0))) }
        _ = try store(s, incoming("B", in: bob, at: 150))
        return (s, ids)
    }

    @Test func boundaryIsInclusive() throws {
        let (s, ids) = try fixture()
        let r = try s.clearHistory(in: alice, upTo: 200)
        #expect(r.deletedMessageIds == [ids[0], ids[1]])
        #expect(try s.snapshot(of: alice).map(\.messageId) == [ids[2]])
        let c = try #require(r.conversations.first)
        #expect(r.conversations.count == 1)
        #expect(c.unreadDelta == -2)
        #expect(c.unreadCount == 1)
        #expect(!c.latestChanged)
        #expect(try s.messageCount(in: bob) == 1, "other conversations are untouched")
    }

    @Test func justBelowTheFirstMessageDeletesNothing() throws {
        let (s, _) = try fixture()
        let r = try s.clearHistory(in: alice, upTo: 99)
        #expect(r.deletedMessageIds == [])
        #expect(r.conversations.first?.changed == false)
        #expect(try s.messageCount(in: alice) == 3)
    }

    @Test func exactlyTheLastMessageDeletesAll() throws {
        let (s, ids) = try fixture()
        let r = try s.clearHistory(in: alice, upTo: 300)
        #expect(r.deletedMessageIds == ids)
        #expect(r.conversations.first?.latestChanged == true)
        #expect(r.conversations.first?.latestMessageId == nil)
        let c = try #require(try s.conversation(alice))
        #expect(c.latestMessageId == nil && c.latestTime == 0 && c.unreadCount == 0, "the conversation row stays, empty")
    }

    @Test func zeroMeansAll() throws {
        let (s, ids) = try fixture()
        // A message with a future time (skewed sender) is also removed by 0 = all.
        let future = try store(s, incoming("F", at: 9_000_000_000_000))
        let r = try s.clearHistory(in: alice, upTo: 0)
        #expect(r.deletedMessageIds == ids + [future])
        #expect(try s.messageCount(in: alice) == 0)
        #expect(try s.messageCount(in: bob) == 1)
    }

    @Test func latestIsRecomputedWhenTheNewestGoes() throws {
        let s = try memoryStore()
        let old = try store(s, incoming("O", at: 100))
        let mine = try s.insertOutgoing(outgoing("pending", at: 50)).messageId  // SENDING at local 50
        let newest = try store(s, incoming("N", at: 500))
        #expect(try s.conversation(alice)?.latestMessageId == newest)
        let r = try s.deleteMessages(ids: [newest])
        #expect(r.conversations.first?.latestChanged == true)
        #expect(r.conversations.first?.latestMessageId == old)
        #expect(try s.conversation(alice)?.latestTime == 100)
        _ = try s.deleteMessages(ids: [old])
        #expect(try s.conversation(alice)?.latestMessageId == mine)
    }
}

@Suite struct DeleteByIdTests {
    @Test func deletesAcrossConversationsAndAdjustsEach() throws {
        let s = try memoryStore()
        let a1 = try store(s, incoming("A1", at: 1))
        let a2 = try store(s, incoming("A2", at: 2, status: .read))
        let b1 = try store(s, incoming("B1", in: bob, at: 3, mentioned: true))
        let b2 = try store(s, incoming("B2", in: bob, at: 4))
        let r = try s.deleteMessages(ids: [b1, a2, 9_999, a1, b1])
        #expect(r.deletedMessageIds == [a1, a2, b1], "missing and repeated ids are ignored")
        #expect(r.conversations.map(\.key) == [alice, bob], "sorted by key")
        #expect(r.conversations[0].unreadDelta == -1)
        #expect(r.conversations[0].latestMessageId == nil)
        #expect(r.conversations[1].unreadDelta == -1)
        #expect(r.conversations[1].mentionChanged)
        #expect(r.conversations[1].latestMessageId == b2)
        #expect(try s.totalMessageCount() == 1)
        #expect(try s.conversation(bob)?.unreadCount == 1)
    }

    @Test func deletingNothingIsEmpty() throws {
        let s = try memoryStore()
        #expect(try s.deleteMessages(ids: []) == DeleteResult(deletedMessageIds: [], conversations: []))
    }

    @Test func deleteOfARemovedConversationsMessagesReportsNoConversation() throws {
        let s = try memoryStore()
        let id = try store(s, incoming("A", at: 1))
        #expect(try s.removeConversation(alice))
        let r = try s.deleteMessages(ids: [id])
        #expect(r.deletedMessageIds == [id])
        #expect(r.conversations == [])
    }
}
