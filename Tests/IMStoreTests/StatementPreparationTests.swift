import CSQLite
import Foundation
import IMSimTestSupport
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
        // The cursors' SELECT and REPLACE and nothing else (BEGIN and COMMIT are cached by the migration).
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

    // MARK: world9 — cheaper statements, same rows

    @Test func messagesInsertFollowsTheTableColumnOrder() throws {
        // `insertRow` lists VALUES in the table's column order instead of naming the columns.
        let s = try memoryStore()
        let info = try s.connection.prepare("SELECT name FROM pragma_table_info('messages') ORDER BY cid")
        var names: [String] = []
        while try info.step() { names.append(info.string(0)) }
        #expect(names == ["messageId", "messageUId", "uidCopy", "conversationType", "targetId", "senderUserId",
                          "direction", "objectName", "content", "extra", "sentTime", "receivedTime", "sentStatus",
                          "receivedStatus", "flags", "clientUniqueId"])
    }

    @Test func cheaperStatementsWriteWhatTheNamedOnesWrote() throws {
        // The store's positional INSERT and `INSERT OR REPLACE` cursors against the statements
        // they replace, run on a second database with the same values: same rows, same ids.
        let s = try memoryStore(dedup: false)
        let ref = try memoryStore(dedup: false)
        func refInsert(_ m: StoredMessage, copy: Int64) throws {
            let st = try ref.connection.prepare("""
                INSERT INTO messages (messageUId, conversationType, targetId, senderUserId, direction, objectName,
                    content, extra, sentTime, receivedTime, sentStatus, receivedStatus, flags, clientUniqueId, uidCopy)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
                ON CONFLICT DO NOTHING
                """)
            try st.bind(m.messageUId, at: 1)
            try st.bind(m.conversation, at: 2)
            try st.bind(m.senderUserId, at: 4)
            try st.bind(m.direction.rawValue, at: 5)
            try st.bind(m.objectName, at: 6)
            try st.bind(m.content, at: 7)
            try st.bind(m.extra, at: 8)
            try st.bind(m.sentTime, at: 9)
            try st.bind(m.receivedTime, at: 10)
            try st.bind(m.sentStatus.rawValue, at: 11)
            try st.bind(m.receivedStatus.rawValue, at: 12)
            try st.bind(m.flags.rawValue, at: 13)
            try st.bind(m.clientUniqueId, at: 14)
            try st.bind(copy, at: 15)
            _ = try st.run()
        }
        func refCursor(_ name: String, _ value: Int64) throws {
            let st = try ref.connection.prepare(
                "INSERT INTO cursors (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = excluded.value")
            try st.bind(name, at: 1)
            try st.bind(value, at: 2)
            _ = try st.run()
        }
        let out = try s.insertOutgoing(outgoing("hi", at: 5, cuid: 77))
        try refInsert(out.message, copy: 0)
        for (i, m) in [incoming("U1", at: 10), incoming("U1", in: bob, at: 11), incoming(nil, in: team, at: 12, mentioned: true),
                       incoming("U2", in: room, at: 13, persistent: .isPersisted, status: .read)].enumerated() {
            let id = try store(s, m)
            let stored = try #require(try s.message(id: id))
            // The second "U1" (dedup off) is tried as copy 0 first, as the store does: the refused
            // insert uses up an id too.
            if i == 1 { try refInsert(stored, copy: 0) }
            try refInsert(stored, copy: i == 1 ? 1 : 0)
        }
        try s.setCursor(.inbox, to: 40)
        try refCursor("inbox", 40)
        try s.setCursor(.inbox, to: 30)
        try refCursor("inbox", 30)
        try s.raiseCounter("cuid", toAtLeast: 9)
        try refCursor("counter:cuid", 9)
        try s.raiseCounter("cuid", toAtLeast: 3)
        try refCursor("counter:cuid", 9)
        func rows(_ x: IMStore, _ sql: String) throws -> [[String]] {
            let st = try x.connection.prepare(sql)
            var out: [[String]] = []
            while try st.step() {
                out.append((0..<sqlite3_column_count(st.handle)).map { st.isNull($0) ? "NULL" : st.string($0) })
            }
            return out
        }
        for sql in ["SELECT * FROM messages ORDER BY messageId", "SELECT * FROM cursors ORDER BY name",
                    "SELECT * FROM sqlite_sequence"] {
            #expect(try rows(s, sql) == rows(ref, sql), "\(sql)")
        }
        #expect(try rows(s, "SELECT count(*) FROM messages") == [["5"]])
    }

    @Test func markSentAndFailureLeaveReceivedRowsAlone() throws {
        // `sendState` reads the direction instead of filtering on it: a received row is still
        // not a send.
        let s = try memoryStore()
        let received = try store(s, incoming("R", at: 1))
        let update = try s.markSent(messageId: received, messageUId: "X", sentTime: 2)
        #expect(!update.updated)
        #expect(update.previousStatus == nil)
        #expect(try !s.markFailed(messageId: received).updated)
        #expect(try s.message(id: received)?.messageUId == "R")
        let mine = try s.insertOutgoing(outgoing("a", at: 3)).messageId
        #expect(try s.markFailed(messageId: mine).previousStatus == .sending)
        #expect(try s.markSent(messageId: mine, messageUId: "M", sentTime: 4).previousStatus == .failed)
    }

    @Test func deviceStoreOpensWithItsSettingsAndNoPragmaForLimits() throws {
        // Worker threads and the autocheckpoint are set through the C API (what the pragmas
        // run); the pragmas read back the same values after an open and after an app kill.
        let disk = SimDisk(seed: 11)
        var s = try IMStore(copyOf: IMStore.inMemory(), on: disk)
        for round in 0..<2 {
            #expect(try scalar(s, "PRAGMA threads") == 0, "round \(round)")
            #expect(try scalar(s, "PRAGMA wal_autocheckpoint") == Int64(StoreLocation.deviceWALAutocheckpoint))
            #expect(try scalar(s, "PRAGMA temp_store") == 2)
            #expect(try scalar(s, "PRAGMA synchronous") == 1)
            let mode = try s.connection.prepare("PRAGMA journal_mode")
            _ = try mode.step()
            #expect(mode.string(0) == "wal")
            s.crash()
            s = try IMStore(location: .device(disk))
        }
        #expect(try scalar(IMStore.inMemory(), "PRAGMA threads") == 0)
        s.close()
    }

    @Test func libraryKeepsNoMemoryStatisticsWhenADeviceComesFirst() throws {
        // Registering the device VFS initialises SQLite; the library's set-up must run before it
        // (a fresh process: in this one another suite may have initialised SQLite already).
        let out = try ImsimBinary.output(["store", "library-setup"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(out == "memory statistics off")
    }
}
