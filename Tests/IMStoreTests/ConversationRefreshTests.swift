import CSQLite
import IMSimTestSupport
import Testing
import IMWire
@testable import IMStore

/// Session 31 (branch `stmt11`): what `refreshConversation` must keep doing whatever its statements
/// (a merged SELECT was tried and reverted, Docs/performance.md): drift healed, the latest message
/// moved back by `markSent`, `clearUnread` with rows at, below and above its mark.
@Suite struct ConversationRefreshTests {
    @Test func markSentHealsADriftedRowAsBefore() throws {
        let s = try memoryStore()
        let m = try store(s, incoming("M", at: 1, mentioned: true))
        let mine = try s.insertOutgoing(outgoing("hi", at: 5)).messageId
        // Drift: the flag off although a mention is unread, the count off by some, a wrong latest.
        try s.connection.execute("""
            UPDATE conversations SET hasUnreadMentioned = 0, unreadCount = 4, latestMessageId = \(m), latestTime = 1
            """)
        let update = try s.markSent(messageId: mine, messageUId: "U", sentTime: 7)
        #expect(update.latestChanged)
        let c = try #require(try s.conversation(alice))
        #expect(c.latestMessageId == mine && c.latestTime == 7)
        #expect(c.hasUnreadMentioned, "the mention is recomputed from the rows")
        #expect(c.unreadCount == 4, "markSent applies a zero delta: the count is not recounted")
    }

    @Test func markSentCanMoveTheLatestMessageBack() throws {
        let s = try memoryStore()
        let theirs = try store(s, incoming("A", at: 8))
        let mine = try s.insertOutgoing(outgoing("hi", at: 10)).messageId
        #expect(try s.conversation(alice)?.latestMessageId == mine)
        let update = try s.markSent(messageId: mine, messageUId: "U", sentTime: 5)
        #expect(update.latestChanged)
        let c = try #require(try s.conversation(alice))
        #expect(c.latestMessageId == theirs && c.latestTime == 8)
        #expect(c.unreadCount == 1)
        // Same time: the greater messageId is the latest.
        let later = try s.insertOutgoing(outgoing("again", at: 20)).messageId
        #expect(try s.markSent(messageId: later, messageUId: "V", sentTime: 8).latestChanged)
        #expect(try s.conversation(alice)?.latestMessageId == later)
    }

    @Test func clearUnreadWithRowsNewerThanTheMark() throws {
        let s = try memoryStore()
        let a = try store(s, incoming("A", at: 1))
        let b = try store(s, incoming("B", at: 2, mentioned: true))
        let c = try store(s, incoming("C", at: 2))
        _ = try store(s, incoming("D", at: 3))
        _ = try store(s, incoming("E", at: 4, persistent: .isPersisted))
        _ = try store(s, incoming("F", at: 5, mentioned: true))
        let r = try s.clearUnread(in: alice, upTo: 2)
        #expect(r.markedReadMessageIds == [a, b, c])
        let change = try #require(r.conversation)
        #expect(change.unreadCount == 2 && change.unreadDelta == -3)
        #expect(change.hasUnreadMentioned && !change.mentionChanged)
        #expect(try unreadRows(s, alice) == 2)
        let rest = try #require(try s.clearUnread(in: alice, upTo: 4).conversation)
        #expect(rest.unreadCount == 1 && rest.hasUnreadMentioned, "F at 5 is still unread and mentions")
        let all = try #require(try s.clearUnread(in: alice).conversation)
        #expect(all.unreadCount == 0 && !all.hasUnreadMentioned && all.mentionChanged)
    }

    @Test func clearUnreadRecountsADriftedCountAboveTheMark() throws {
        let s = try memoryStore(recallDecrements: false)
        _ = try store(s, incoming("A", at: 1))
        _ = try store(s, incoming("B", at: 3, mentioned: true))
        try s.connection.execute("UPDATE conversations SET unreadCount = 9, hasUnreadMentioned = 0")
        let change = try #require(try s.clearUnread(in: alice, upTo: 1).conversation)
        #expect(change.unreadCount == 1 && change.unreadDelta == -8)
        #expect(change.hasUnreadMentioned && change.mentionChanged)
    }

    @Test func refreshAfterTheLastRowIsGoneClearsTheLatest() throws {
        let s = try memoryStore()
        let a = try store(s, incoming("A", at: 1, mentioned: true))
        let r = try s.deleteMessages(ids: [a])
        let change = try #require(r.conversations.first)
        #expect(change.latestChanged && change.latestMessageId == nil)
        #expect(change.unreadCount == 0 && !change.hasUnreadMentioned && change.mentionChanged)
        let c = try #require(try s.conversation(alice))
        #expect(c.latestMessageId == nil && c.latestTime == 0)
    }

    /// The recount starts after the read mark; rows at the ends of Int64 are counted and cleared
    /// like any other (a bound of `Int64.min` must not drop a row at `Int64.min`).
    @Test func unreadRowsAtTheEndsOfTimeAreCounted() throws {
        let s = try memoryStore()
        _ = try store(s, incoming("LOW", at: .min, mentioned: true))
        _ = try store(s, incoming("HIGH", at: .max - 7))   // the helper adds 7 for receivedTime
        let mine = try s.insertOutgoing(outgoing("hi", at: 5)).messageId
        // A drifted flag, healed by markSent's scan, which must see the row at Int64.min.
        try s.connection.execute("UPDATE conversations SET hasUnreadMentioned = 0")
        _ = try s.markSent(messageId: mine, messageUId: "U", sentTime: 7)
        #expect(try s.conversation(alice)?.hasUnreadMentioned == true)
        let low = try #require(try s.clearUnread(in: alice, upTo: .min).conversation)
        #expect(low.unreadCount == 1 && !low.hasUnreadMentioned, "only the row near Int64.max is left")
        let high = try #require(try s.clearUnread(in: alice, upTo: .max - 8).conversation)
        #expect(high.unreadCount == 1)
        let all = try #require(try s.clearUnread(in: alice, upTo: .max).conversation)
        #expect(all.unreadCount == 0 && all.unreadDelta == -1)
        #expect(try unreadRows(s, alice) == 0)
    }
}
