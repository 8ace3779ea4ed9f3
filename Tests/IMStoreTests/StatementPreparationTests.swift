import Testing
import IMWire
@testable import IMStore

/// Issue 30: every distinct statement costs each connection ~30–100k instructions to prepare, so
/// operations share statements where the results are the same (Docs/store.md, "Statement
/// preparation"). These pin both the behaviour and the sharing.
@Suite struct StatementPreparationTests {
    @Test func countersKeepTheirBehaviourOnTheCursorsStatements() throws {
        let s = try memoryStore()
        let before = s.connection.cachedStatementCount
        #expect(try s.nextCounterValue("c") == 1)
        #expect(try s.nextCounterValue("c") == 2)
        try s.raiseCounter("c", toAtLeast: 10)
        #expect(try s.nextCounterValue("c") == 11)
        try s.raiseCounter("c", toAtLeast: 5)
        #expect(try s.nextCounterValue("c") == 12, "a raise never lowers")
        try s.raiseCounter("fresh", toAtLeast: -3)
        #expect(try s.nextCounterValue("fresh") == -2, "an absent counter takes the floor as given")
        try s.setCursor(.inbox, to: 7)
        #expect(try s.cursor(.inbox) == 7)
        #expect(try s.advanceCursor(.inbox, to: 9))
        // The cursors' SELECT and UPSERT and nothing else (BEGIN and COMMIT are cached by the migration).
        #expect(s.connection.cachedStatementCount - before == 2)
    }

    @Test func markSentReportsTheOtherRowsAndTakesTheNextCopy() throws {
        let s = try memoryStore(dedup: false)
        let a = try store(s, incoming("U", at: 1))
        let b = try store(s, incoming("U", in: bob, at: 2))
        let mine = try s.insertOutgoing(outgoing("hi", at: 3)).messageId
        let update = try s.markSent(messageId: mine, messageUId: "U", sentTime: 4)
        #expect(update.updated)
        #expect(update.otherRowsWithSameUId == [a, b])
        #expect(try s.countRows(withUId: "U") == 3)
        let copies = try s.connection.prepare("SELECT uidCopy FROM messages WHERE messageUId = 'U' ORDER BY messageId")
        var out: [Int64] = []
        while try copies.step() { out.append(copies.int64(0)) }
        #expect(out == [0, 1, 2])
        let lone = try s.insertOutgoing(outgoing("x", at: 5)).messageId
        #expect(try s.markSent(messageId: lone, messageUId: "V", sentTime: 6).otherRowsWithSameUId == [])
    }

    @Test func deletingCopyZeroPromotesTheLowestRemainingCopy() throws {
        let s = try memoryStore(dedup: false)
        let first = try store(s, incoming("X", at: 1))
        let second = try store(s, incoming("X", at: 2))
        let third = try store(s, incoming("X", at: 3))
        _ = try s.deleteMessages(ids: [first, second])
        #expect(try s.rows(withUId: "X").map(\.uidCopy) == [0])
        s.options.dedupByMessageUId = true
        let again = try s.storeReceived(incoming("X", at: 4))
        #expect(!again.isNew)
        #expect(again.messageId == third)
    }

    @Test func chatroomLookupReadsTheJoinedList() throws {
        let s = try memoryStore()
        #expect(try s.joinChatroom("r2", at: 5))
        #expect(try s.joinChatroom("r1", at: 6))
        #expect(try !s.joinChatroom("r2", at: 7), "a rejoin")
        #expect(try s.chatroom("r2")?.joinedTime == 7)
        #expect(try s.chatroom("nope") == nil)
        #expect(try s.setChatroomKVSync("r1", synced: true, syncTime: 9))
        #expect(try s.chatroom("r1")?.kvSynced == true)
        _ = try s.clearChatroomKV("r1")
        #expect(try s.chatroom("r1").map { ($0.kvSynced, $0.kvSyncTime) } ?? (true, 1) == (false, 0))
        #expect(try s.joinedChatrooms().map(\.roomId) == ["r1", "r2"])
        #expect(try !s.setChatroomKVSync("nope", synced: true, syncTime: 1))
    }
}
