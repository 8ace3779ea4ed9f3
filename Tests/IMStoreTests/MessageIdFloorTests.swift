import CSQLite
import Foundation
import IMSimTestSupport
import IMWire
import Testing
@testable import IMStore

/// Schema version 2 (issue 28): messageIds without `AUTOINCREMENT` (one page less per insert
/// transaction) must be exactly the ids `AUTOINCREMENT` gave, or every digest would move.
@Suite struct MessageIdFloorTests {
    /// The version-1 table and its insert, as the store ran them before version 2.
    private static let v1Insert = """
        INSERT INTO messages (messageUId, conversationType, targetId, senderUserId, direction, objectName,
            content, sentTime, receivedTime, sentStatus, uidCopy)
        VALUES (?1, 1, ?2, ?2, 2, 'RC:TxtMsg', 'x', ?3, ?3, 30, ?4)
        ON CONFLICT DO NOTHING
        """

    /// A reference database on the version-1 schema (AUTOINCREMENT).
    private func v1Reference() throws -> SQLiteConnection {
        let c = try SQLiteConnection(location: .memory)
        try c.execute(Schema.version1)
        try c.execute("PRAGMA user_version = 1")
        return c
    }

    /// The reference's answer to one received message with dedup on or off: the new id, or nil.
    private func v1Store(_ c: SQLiteConnection, uid: String, target: String, time: Int64, dedup: Bool) throws -> Int64? {
        func insert(_ copy: Int64) throws -> Int64? {
            let st = try c.prepare(Self.v1Insert)
            try st.bind(uid, at: 1)
            try st.bind(target, at: 2)
            try st.bind(time, at: 3)
            try st.bind(copy, at: 4)
            return try st.run() == 1 ? c.lastInsertRowid : nil
        }
        if let id = try insert(0) { return id }
        guard !dedup else { return nil }
        let next = try c.prepare("SELECT COALESCE(MAX(uidCopy) + 1, 0) FROM messages WHERE messageUId = ?1")
        try next.bind(uid, at: 1)
        _ = try next.step()
        return try insert(next.int64(0))
    }

    /// Inserts (new and duplicate messageUIds, dedup on and off), deletes of the newest and of
    /// older rows, and clears, in a pinned pseudo-random order: the store (version 2) hands out
    /// the same messageIds as a version-1 database doing the same.
    @Test(arguments: [false, true]) func idsEqualAutoincrementsIds(dedup: Bool) throws {
        let s = try memoryStore(dedup: dedup)
        let ref = try v1Reference()
        var rng: UInt64 = dedup ? 11 : 12
        func next(_ n: UInt64) -> UInt64 {
            rng = rng &+ 0x9E37_79B9_7F4A_7C15
            var z = rng
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return (z ^ (z >> 31)) % n
        }
        var stored: [Int64] = []
        var refusedOrCopies = 0, deletes = 0
        for step in 0..<400 {
            let op = next(10)
            if op < 7 {
                let uid = "U\(next(60))"                 // repeats: refused inserts (dedup) or copies
                let target = "t\(next(3))"
                let time = Int64(1_000 + step)
                let got = try s.storeReceived(incoming(uid, in: ConversationKey(.privateChat, target), at: time))
                let want = try v1Store(ref, uid: uid, target: target, time: time, dedup: dedup)
                if got.isNew {
                    #expect(got.messageId == want, "step \(step): store gave \(got.messageId), AUTOINCREMENT \(String(describing: want))")
                    stored.append(got.messageId)
                } else {
                    #expect(want == nil, "step \(step): the reference stored \(String(describing: want))")
                }
                if try !got.isNew || s.countRows(withUId: uid) > 1 { refusedOrCopies += 1 }
            } else if !stored.isEmpty {
                // Delete the newest row (the case AUTOINCREMENT exists for) or any row.
                let id = op == 9 ? stored.max()! : stored[Int(next(UInt64(stored.count)))]
                _ = try s.deleteMessages(ids: [id])
                // The store promotes the lowest remaining copy of a deleted copy 0; so does the
                // version-1 store, so the reference does too.
                let row = try ref.prepare("SELECT messageUId, uidCopy FROM messages WHERE messageId = \(id)")
                _ = try row.step()
                let (uid, copy) = (row.string(0), row.int64(1))
                try ref.execute("DELETE FROM messages WHERE messageId = \(id)")
                if copy == 0 {
                    try ref.execute("""
                        UPDATE messages SET uidCopy = 0 WHERE messageId =
                            (SELECT messageId FROM messages WHERE messageUId = '\(uid)' ORDER BY uidCopy LIMIT 1)
                        """)
                }
                stored.removeAll { $0 == id }
                deletes += 1
            }
        }
        #expect(refusedOrCopies > 20 && deletes > 20, "the sequence exercised refusals \(refusedOrCopies) and deletes \(deletes)")
        let refMax = try ref.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'messages'")
        _ = try refMax.step()
        let floorNow = try scalar(s, "SELECT MAX(IFNULL((SELECT MAX(messageId) FROM messages), 0), value) FROM message_id_floor")
        #expect(floorNow == refMax.int64(0))
    }

    /// A version-1 database (AUTOINCREMENT, its newest row deleted) migrates to version 2 with its
    /// rows and ids, and the next id is past the deleted one.
    @Test func aVersion1DatabaseMigratesKeepingItsIds() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("v1.db").path
        do {
            let c = try SQLiteConnection(location: .file(path))
            try c.execute(Schema.version1)
            try c.execute("PRAGMA user_version = 1")
            for i in 1...5 {
                let st = try c.prepare(Self.v1Insert)
                try st.bind("U\(i)", at: 1)
                try st.bind("alice", at: 2)
                try st.bind(Int64(i), at: 3)
                try st.bind(Int64(0), at: 4)
                _ = try st.run()
            }
            try c.execute("DELETE FROM messages WHERE messageId IN (2, 5)")
            c.close()
        }
        let s = try IMStore.file(path)
        #expect(try s.schemaVersion() == 2)
        #expect(try s.allMessageUIds(in: alice).sorted() == ["U1", "U3", "U4"])
        let ids = try s.connection.prepare("SELECT messageId FROM messages ORDER BY messageId")
        var got: [Int64] = []
        while try ids.step() { got.append(ids.int64(0)) }
        #expect(got == [1, 3, 4])
        #expect(try scalar(s, "SELECT value FROM message_id_floor") == 5)
        #expect(try store(s, incoming("N", at: 10)) == 6, "id 5 was deleted, never handed out again")
        #expect(try scalar(s, "SELECT COUNT(*) FROM sqlite_master WHERE sql LIKE '%AUTOINCREMENT%'") == 0)
        let check = try s.connection.prepare("PRAGMA integrity_check")
        _ = try check.step()
        #expect(check.string(0) == "ok")
    }
}
