import IMWire
import SimKernel
import Testing
@testable import IMStore

@Suite struct HistoryTests {
    @Test func pagesOfAtMostTwentyNewestFirstByMessageId() throws {
        let s = try memoryStore()
        var ids: [Int64] = []
        for i in 0..<45 {
            ids.append(try store(s, incoming("A\(i)", at: Int64(1_000 + i))))
            _ = try store(s, incoming("B\(i)", in: bob, at: Int64(1_000 + i)))  // interleaved other conversation
        }
        let page1 = try s.history(in: alice, before: -1, count: 100)
        #expect(page1.count == 20, "at most 20 per call")
        #expect(page1.map(\.messageId) == Array(ids.suffix(20).reversed()))
        let page2 = try s.history(in: alice, before: page1.last!.messageId)
        #expect(page2.map(\.messageId) == Array(ids[5..<25].reversed()))
        let page3 = try s.history(in: alice, before: page2.last!.messageId)
        #expect(page3.map(\.messageId) == Array(ids[0..<5].reversed()))
        #expect(try s.history(in: alice, before: page3.last!.messageId) == [])
        #expect(try s.history(in: alice, count: 3).count == 3)
        #expect(try s.history(in: alice, count: 0) == [])
        #expect(try s.history(in: alice, count: -5) == [])
        #expect(Set(page1.map(\.conversation)) == [alice])
    }

    @Test func historyIsInServerOrderWithAMessageIdCursor() throws {
        let s = try memoryStore()
        let newer = try store(s, incoming("N", at: 2_000))
        let late = try store(s, incoming("L", at: 1_000))  // older server time, inserted later
        let tieB = try store(s, incoming("B", at: 1_500))
        let tieA = try store(s, incoming("A", at: 1_500))  // same ms: ties by messageUId
        #expect(try s.history(in: alice).map(\.messageId) == [newer, tieB, tieA, late])
        #expect(try s.history(in: alice, before: newer).map(\.messageId) == [tieB, tieA, late])
        #expect(try s.history(in: alice, before: tieB).map(\.messageId) == [tieA, late])
        #expect(try s.history(in: alice, before: late).map(\.messageId) == [])
        // A vanished cursor row pages from the newest message again.
        _ = try s.deleteMessages(ids: [tieA])
        #expect(try s.history(in: alice, before: tieA).map(\.messageId) == [newer, tieB, late])
    }
}

@Suite struct AllMessagesTests {
    /// The whole store at once equals every conversation's history pages, concatenated and
    /// reversed (the ledger relies on it).
    @Test func equalsHistoryPagesReversedForEveryConversation() throws {
        let s = try memoryStore()
        for i in 0..<45 {
            _ = try store(s, incoming("A\(i)", at: Int64(1_000 + (i * 7) % 13)))  // same-ms ties
            _ = try store(s, incoming("B\(i)", in: bob, at: Int64(1_000 + i)))
        }
        _ = try store(s, incoming("late", at: 900))
        let all = try s.allMessagesInHistoryOrder()
        #expect(all.count == 2)
        for key in [alice, bob] {
            var pages: [StoredMessage] = []
            var before: Int64 = -1
            while true {
                let page = try s.history(in: key, before: before)
                pages += page
                guard let last = page.last else { break }
                before = last.messageId
            }
            #expect(all[key] == Array(pages.reversed()))
            #expect(all[key]?.count == (key == alice ? 46 : 45))
        }
        #expect(try memoryStore().allMessagesInHistoryOrder().isEmpty)
        // Chatroom messages are left out on request only.
        let room = ConversationKey(.chatroom, "room-1")
        _ = try store(s, incoming("R1", in: room, at: 1_000))
        #expect(try s.allMessagesInHistoryOrder()[room]?.count == 1)
        #expect(try s.allMessagesInHistoryOrder(excludingChatrooms: true)[room] == nil)
        #expect(try s.allMessagesInHistoryOrder(excludingChatrooms: true).count == 2)
    }
}

@Suite struct RangeAndSnapshotTests {
    @Test func sentTimeRangeIsInclusiveAndInServerOrder() throws {
        let s = try memoryStore()
        let c = try store(s, incoming("C", at: 300))
        let a = try store(s, incoming("A", at: 100))
        let b = try store(s, incoming("B", at: 200))
        _ = try store(s, incoming("D", at: 400))
        _ = try store(s, incoming("X", in: bob, at: 200))
        #expect(try s.messages(in: alice, sentTime: 100...300).map(\.messageId) == [a, b, c])
        #expect(try s.messages(in: alice, sentTime: 101...299).map(\.messageId) == [b])
        #expect(try s.messages(in: alice, sentTime: 100...300, limit: 2).map(\.messageId) == [a, b])
        #expect(try s.messages(in: alice, sentTime: 500...600) == [])
    }

    @Test func snapshotOrdersBySentTimeThenUIdThenMessageId() throws {
        let s = try memoryStore(dedup: false)
        let z = try store(s, incoming("Z", at: 100))
        let a = try store(s, incoming("A", at: 100))
        let unsent = try s.insertOutgoing(outgoing("pending", at: 100)).messageId
        let a2 = try store(s, incoming("A", at: 100))
        let early = try store(s, incoming("Q", at: 50))
        #expect(try s.snapshot(of: alice).map(\.messageId) == [early, unsent, a, a2, z])
        #expect(try s.allMessageUIds(in: alice) == ["A", "A", "Q", "Z"])
        #expect(try s.allMessageUIds(in: bob) == [])
        #expect(try s.countRows(withUId: "A") == 2)
        #expect(try s.countRows(withUId: "Q") == 1)
        #expect(try s.countRows(withUId: "nope") == 0)
    }

    /// Two stores that received the same messages in different orders have the same snapshot
    /// (modulo local fields) — what the ledger relies on.
    @Test func snapshotsOfTwoDevicesCompare() throws {
        let msgs = (0..<12).map { incoming("U\($0 % 7)-\($0)", at: Int64(100 + ($0 % 4) * 10)) }
        let d1 = try memoryStore(), d2 = try memoryStore()
        for m in msgs { _ = try d1.storeReceived(m) }
        for m in msgs.reversed() { _ = try d2.storeReceived(m) }
        func canonical(_ s: IMStore) throws -> [String] {
            try s.snapshot(of: alice).map { "\($0.sentTime) \($0.messageUId ?? "-") \($0.content)" }
        }
        #expect(try canonical(d1) == canonical(d2))
        // History is in server order too, so both devices show the same conversation.
        #expect(try d1.history(in: alice).map(\.messageUId) == d2.history(in: alice).map(\.messageUId))
    }
}

@Suite struct LedgerConversationsTests {
    /// The ledger's lean read equals the conversation list with each listed conversation's
    /// messages from `allMessagesInHistoryOrder` (chatrooms, same-ms ties, duplicate and missing
    /// uids, a listed conversation without messages, messages of an unlisted one).
    @Test func agreesWithConversationListAndAllMessagesInHistoryOrder() throws {
        let s = try memoryStore(dedup: false)
        let group = ConversationKey(.group, "g/ünï")
        for i in 0..<30 {
            _ = try store(s, incoming("A\(i % 25)", at: Int64(1_000 + (i * 7) % 5)))  // same-ms ties, duplicate uids
            _ = try store(s, incoming("G\(i)", in: group, at: Int64(2_000 - i), from: "u\(i % 3)",
                                      status: i % 2 == 0 ? .read : .unread, text: "\"quoted\" \\ ünï \(i)"))
            _ = try store(s, incoming("R\(i)", in: room, at: Int64(1_000 + i)))
        }
        _ = try store(s, incoming(nil, at: 1_002))  // no uid, sorts as '' among its sentTime's
        let pending = try s.insertOutgoing(outgoing("pending", at: 1_001)).messageId
        let failed = try s.insertOutgoing(outgoing("failed", in: bob, at: 1_003)).messageId
        _ = try s.markFailed(messageId: failed)
        _ = try s.markSent(messageId: pending, messageUId: "A3", sentTime: 1_003)
        _ = try s.setTop(team, true)  // listed, no messages
        _ = try store(s, incoming("D1", in: ConversationKey(.privateChat, "dave"), at: 5))
        _ = try s.removeConversation(ConversationKey(.privateChat, "dave"))  // messages stay, not listed

        let got = try s.ledgerConversations()
        let list = try s.conversationList()
        let all = try s.allMessagesInHistoryOrder(excludingChatrooms: true)
        #expect(got.map(\.key) == list.map(\.key).sorted())
        #expect(Set(got.map(\.key)) == [alice, bob, group, team])
        for c in got {
            let listed = try #require(list.first { $0.key == c.key })
            #expect(c.unreadCount == listed.unreadCount)
            let expected = (all[c.key] ?? []).map { m in
                LedgerMessage(messageId: m.messageId, messageUId: m.messageUId, senderUserId: m.senderUserId,
                              direction: m.direction, objectName: m.objectName, sentTime: m.sentTime,
                              sentStatus: m.sentStatus, receivedStatus: m.receivedStatus,
                              contentHash: StableHash.fnv1a(m.content))
            }
            #expect(c.messages == expected, "\(c.key)")
        }
        #expect(got.first { $0.key == alice }?.messages.count == 32)
        #expect(got.first { $0.key == team }?.messages == [])
        #expect(try memoryStore().ledgerConversations() == [])
    }

    /// The message scan is prepared for each read and finalized after it (not cached: see
    /// `ledgerConversations`); the conversations come through the list's cached statement.
    @Test func ledgerReadCachesNoStatementBeyondTheList() throws {
        let s = try memoryStore()
        _ = try s.conversationList()
        let before = s.connection.cachedStatementCount
        // Nothing listed: no message scan at all.
        #expect(try s.ledgerConversations() == [])
        #expect(s.connection.cachedStatementCount == before)
        _ = try store(s, incoming("A1", at: 5))
        let withMessages = s.connection.cachedStatementCount
        let got = try s.ledgerConversations()
        #expect(got.map(\.key) == [alice])
        #expect(got.first?.messages.map(\.messageUId) == ["A1"])
        #expect(s.connection.cachedStatementCount == withMessages, "the message scan is not cached")
        // A second read prepares it again and reads the same.
        #expect(try s.ledgerConversations() == got)
        #expect(s.connection.cachedStatementCount == withMessages)
    }
}
