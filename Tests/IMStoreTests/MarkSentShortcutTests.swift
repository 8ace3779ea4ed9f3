import Foundation
import IMSimTestSupport
import Testing
import IMWire
@testable import IMStore

/// Session 35 (branch `store16`): while `conversationRowsDerived` holds, `markSent` takes the
/// stored mention flag and, unless its row was the latest and moved back, the stored latest
/// message instead of scanning the rows. The database must be byte-for-byte what the full
/// recomputation writes: checked against a twin store that always recomputes.
@Suite struct MarkSentShortcutTests {
    /// SplitMix64: deterministic operation sequences.
    struct Mix {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(n))
        }
    }

    /// One random operation on both stores; the results must be equal.
    static func step(_ r: inout Mix, _ fast: IMStore, _ full: IMStore, sending: inout [Int64], n: Int) throws {
        let keys = [alice, bob, team]
        let key = keys[r.next(keys.count)]
        let t = Int64(r.next(40))
        switch r.next(10) {
        case 0, 1, 2:
            let m = incoming(
                r.next(5) == 0 ? "dup\(r.next(3))" : "u\(n)", in: key, at: t,
                persistent: r.next(6) == 0 ? .isPersisted : .isCounted, mentioned: r.next(3) == 0,
                status: r.next(6) == 0 ? .read : .unread)
            #expect(try fast.storeReceived(m) == full.storeReceived(m))
        case 3, 4:
            let a = try fast.insertOutgoing(outgoing("o\(n)", in: key, at: t))
            #expect(a == (try full.insertOutgoing(outgoing("o\(n)", in: key, at: t))))
            sending.append(a.messageId)
        case 5, 6:
            guard !sending.isEmpty else { return }
            let id = sending.remove(at: r.next(sending.count))
            // Server time before, at or after the local one; sometimes a UId already stored.
            let sent = Int64(r.next(40))
            let uid = r.next(8) == 0 ? "u\(r.next(max(1, n)))" : "s\(n)"
            #expect(try fast.markSent(messageId: id, messageUId: uid, sentTime: sent)
                == full.markSent(messageId: id, messageUId: uid, sentTime: sent))
        case 7:
            #expect(try fast.clearUnread(in: key, upTo: t) == full.clearUnread(in: key, upTo: t))
        case 8:
            let id = Int64(1 + r.next(max(1, n)))
            if r.next(2) == 0 {
                #expect(try fast.recall(.messageId(id), notificationContent: "x")
                    == full.recall(.messageId(id), notificationContent: "x"))
            } else {
                #expect(try fast.deleteMessages(ids: [id]) == full.deleteMessages(ids: [id]))
            }
        default:
            guard !sending.isEmpty else { return }
            let id = sending[r.next(sending.count)]
            #expect(try fast.markFailed(messageId: id) == full.markFailed(messageId: id))
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func markSentWritesWhatTheFullRefreshWrites(seed: UInt64) throws {
        let fast = try memoryStore()
        let full = try memoryStore()
        full.connection.conversationRowsDerived = false
        #expect(fast.connection.conversationRowsDerived)
        var r = Mix(state: seed)
        var sending: [Int64] = []
        for n in 0..<300 {
            try Self.step(&r, fast, full, sending: &sending, n: n)
            for key in [alice, bob, team] {
                #expect(try fast.conversation(key) == full.conversation(key))
            }
        }
        #expect(fast.connection.conversationRowsDerived, "no operation above clears it")
        #expect(!full.connection.conversationRowsDerived)
        #expect(try fast.serializedImage() == full.serializedImage(), "same pages, byte for byte")
    }

    /// The cases by hand: the sent row was the latest and moves back, forward, stays; another
    /// row is the latest and the sent one passes it, ties it (messageId decides), or stays behind;
    /// an unread mention stays flagged.
    @Test func theLatestAndTheMentionAfterMarkSent() throws {
        let s = try memoryStore()
        let a = try store(s, incoming("A", at: 10, mentioned: true))
        let mine = try s.insertOutgoing(outgoing("m", at: 20)).messageId
        let other = try s.insertOutgoing(outgoing("o", at: 5)).messageId
        // The latest (mine at 20) moves back behind A: read from the rows.
        #expect(try s.markSent(messageId: mine, messageUId: "M", sentTime: 8).latestChanged)
        var c = try #require(try s.conversation(alice))
        #expect(c.latestMessageId == a && c.latestTime == 10 && c.hasUnreadMentioned && c.unreadCount == 1)
        // Another row ties A's time with a greater messageId: it becomes the latest.
        #expect(try s.markSent(messageId: other, messageUId: "O", sentTime: 10).latestChanged)
        c = try #require(try s.conversation(alice))
        #expect(c.latestMessageId == other && c.latestTime == 10 && c.hasUnreadMentioned)
        // A row behind the latest leaves it.
        let behind = try s.insertOutgoing(outgoing("b", at: 3)).messageId
        #expect(try !s.markSent(messageId: behind, messageUId: "B", sentTime: 4).latestChanged)
        #expect(try s.conversation(alice)?.latestMessageId == other)
        // The latest moves forward, then stays at the same time.
        let last = try s.insertOutgoing(outgoing("l", at: 30)).messageId
        #expect(try s.markSent(messageId: last, messageUId: "L", sentTime: 31).latestChanged)
        c = try #require(try s.conversation(alice))
        #expect(c.latestMessageId == last && c.latestTime == 31)
        #expect(s.connection.conversationRowsDerived)
        _ = try s.clearUnread(in: alice)
        let again = try s.insertOutgoing(outgoing("g", at: 40)).messageId
        #expect(try !s.markSent(messageId: again, messageUId: "G", sentTime: 40).latestChanged)
        #expect(try s.conversation(alice)?.hasUnreadMentioned == false)
    }

    /// A removed conversation keeps its messages; the row the next message re-creates can
    /// disagree with them, so the store stops trusting its rows and markSent heals as before.
    @Test func removeConversationEndsTheShortcut() throws {
        let s = try memoryStore()
        _ = try store(s, incoming("A", at: 10, mentioned: true))
        #expect(try s.removeConversation(alice))
        #expect(!s.connection.conversationRowsDerived)
        let mine = try s.insertOutgoing(outgoing("m", at: 5)).messageId
        #expect(try s.conversation(alice)?.hasUnreadMentioned == false, "re-created from the new row only")
        _ = try s.markSent(messageId: mine, messageUId: "M", sentTime: 6)
        let c = try #require(try s.conversation(alice))
        #expect(c.hasUnreadMentioned && c.latestTime == 10, "recomputed from the rows, as before")
    }

    @Test func whoClearsAndWhoKeepsTheFlag() throws {
        let s = try memoryStore()
        #expect(s.connection.conversationRowsDerived, "a new database")
        _ = try store(s, incoming("A", at: 1))
        _ = try s.ledgerConversations()
        #expect(try s.integrityProblems().isEmpty)
        #expect(s.connection.conversationRowsDerived, "the store's own reads keep it")
        let copy = try IMStore(copyOf: s)
        #expect(copy.connection.conversationRowsDerived, "a copy of a derived store")
        let reopened = try s.reopen()
        #expect(reopened.connection.conversationRowsDerived, "an in-memory reopen keeps the connection")
        let image = try IMStore(image: try reopened.serializedImage())
        #expect(!image.connection.conversationRowsDerived, "an image's rows are unknown")
        _ = try scalar(reopened, "SELECT 1")
        #expect(!reopened.connection.conversationRowsDerived, "raw SQL through prepare")
        let copyOfRaw = try IMStore(copyOf: reopened)
        #expect(!copyOfRaw.connection.conversationRowsDerived)
        try copy.connection.execute("PRAGMA cache_size = 16")
        #expect(!copy.connection.conversationRowsDerived, "raw SQL through execute")
        let recycled = try IMStore(recycling: try #require(copy.retireForReuse()))
        #expect(recycled.connection.conversationRowsDerived, "every table emptied")
    }

    @Test func aFileOpenedAgainIsNotTrusted() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("s.db").path
        let s = try IMStore.file(path)
        #expect(s.connection.conversationRowsDerived)
        let again = try s.reopen()
        #expect(!again.connection.conversationRowsDerived, "its rows came from a file")
        again.close()
    }

    /// A device store opened again after an app kill keeps the flag (WAL recovery keeps whole
    /// transactions, each of which left the rows agreeing): the random operations above, with a
    /// kill every few dozen, against a twin that always recomputes.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func anAppKillKeepsTheShortcut(seed: UInt64) throws {
        let disk = SimDisk(seed: seed)
        var fast = try IMStore(copyOf: IMStore.inMemory(), on: disk)
        let full = try memoryStore()
        full.connection.conversationRowsDerived = false
        var r = Mix(state: seed)
        var sending: [Int64] = []
        for n in 0..<240 {
            if n % 37 == 36 {
                fast = try fast.reopen()   // app kill, then the app starts again
                #expect(fast.connection.conversationRowsDerived, "after an app kill of a derived store")
            }
            try Self.step(&r, fast, full, sending: &sending, n: n)
            for key in [alice, bob, team] {
                #expect(try fast.conversation(key) == full.conversation(key))
            }
        }
        #expect(try fast.integrityProblems().isEmpty)
    }

    /// What ends the trust across an open: a power loss, a store that had stopped trusting, a
    /// clean close (only a kill hands the flag on).
    @Test func whatADeviceOpenTrusts() throws {
        let disk = SimDisk(seed: 4)
        var s = try IMStore(copyOf: IMStore.inMemory(), on: disk)
        #expect(s.connection.conversationRowsDerived, "a new device store")
        _ = try store(s, incoming("A", at: 1))
        s = try s.reopen()
        #expect(s.connection.conversationRowsDerived, "app kill")
        s.crash()
        disk.losePower(torn: false)
        s = try IMStore(location: .device(disk))
        #expect(!s.connection.conversationRowsDerived, "power loss")
        s = try s.reopen()
        #expect(!s.connection.conversationRowsDerived, "a kill of a store that did not trust its rows")

        let other = SimDisk(seed: 5)
        var t = try IMStore(copyOf: IMStore.inMemory(), on: other)
        _ = try store(t, incoming("B", at: 1))
        #expect(try t.removeConversation(alice))
        t = try t.reopen()
        #expect(!t.connection.conversationRowsDerived, "removeConversation before the kill")

        let third = SimDisk(seed: 6)
        let u = try IMStore(copyOf: IMStore.inMemory(), on: third)
        u.close()
        #expect(!(try IMStore(location: .device(third))).connection.conversationRowsDerived, "a clean close hands nothing on")
    }
}
