import IMSimTestSupport
import CSQLite
import Foundation
import IMWire
import Testing
@testable import IMStore

@Suite struct SQLiteConnectionTests {
    @Test func bindAndReadRoundTripTypedValues() throws {
        let c = try SQLiteConnection(location: .memory)
        try c.execute("CREATE TABLE t (i INTEGER, s TEXT, n TEXT)")
        let ins = try c.prepare("INSERT INTO t (i, s, n) VALUES (?1, ?2, ?3)")
        let values: [(Int64, String, String?)] = [
            (.min, "", nil), (.max, "héllo 🌏 世界", "x"), (0, "with\u{0}nul", ""), (-1, String(repeating: "a", count: 5000), nil),
        ]
        for (i, s, n) in values {
            try ins.bind(i, at: 1)
            try ins.bind(s, at: 2)
            try ins.bind(n, at: 3)
            try ins.run()
            ins.reset()
        }
        let sel = try c.prepare("SELECT i, s, n, n IS NULL, s IS NULL FROM t ORDER BY rowid")
        var got: [(Int64, String, String?)] = []
        while try sel.step() {
            #expect(sel.bool(3) == sel.isNull(2))
            #expect(sel.bool(4) == false, "an empty Swift string must bind as '' and never as NULL")
            got.append((sel.int64(0), sel.string(1), sel.optionalString(2)))
        }
        #expect(got.map(\.0) == values.map(\.0))
        #expect(got.map(\.1) == values.map(\.1))
        #expect(got.map(\.2) == values.map(\.2))
    }

    /// The cache's keys are literal addresses placed by `WordHash`, not SipHash: equal
    /// addresses hash equal under one seed, and each literal keeps its own statement.
    @Test func statementKeysAreLiteralAddresses() throws {
        let sql: StaticString = "SELECT 2"
        let a = StatementKey(address: UnsafeRawPointer(sql.utf8Start))
        #expect(a == StatementKey(address: UnsafeRawPointer(sql.utf8Start)))
        #expect(a._rawHashValue(seed: 7) == WordHash.mix(UInt64(UInt(bitPattern: a.address)), seed: 7))
        #expect(a._rawHashValue(seed: 7) != a._rawHashValue(seed: 8))
        let c = try SQLiteConnection(location: .memory)
        let one = try c.cached("SELECT 1")
        let two = try c.cached(sql)
        #expect(one !== two)
        #expect(try c.cached(sql) === two)
        #expect(try c.with(sql) { s in try s.step(); return s.int(0) } == 2)
        #expect(c.cachedStatementCount == 2)
    }

    @Test func cachedStatementsArePreparedOnce() throws {
        let c = try SQLiteConnection(location: .memory)
        #expect(c.cachedStatementCount == 0)
        let a = try c.cached("SELECT 1")
        let b = try c.cached("SELECT 1")
        #expect(a === b)
        _ = try c.cached("SELECT 2")
        #expect(c.cachedStatementCount == 2)
        let v = try c.with("SELECT 40 + 2") { s -> Int64 in
            _ = try s.step()
            return s.int64(0)
        }
        #expect(v == 42)
        c.clearStatementCache()
        #expect(c.cachedStatementCount == 0)
    }

    @Test func transactionCommitsOrRollsBackAsAWhole() throws {
        let c = try SQLiteConnection(location: .memory)
        try c.execute("CREATE TABLE t (v INTEGER NOT NULL)")
        try c.transaction { try c.execute("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)") }
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try c.transaction {
                try c.execute("INSERT INTO t VALUES (3)")
                throw Boom()
            }
        }
        #expect(!c.isInTransaction)
        let count = try c.with("SELECT COUNT(*), SUM(v) FROM t") { s -> [Int64] in
            _ = try s.step()
            return [s.int64(0), s.int64(1)]
        }
        #expect(count == [2, 3])
    }

    @Test func nestedTransactionIsASavepoint() throws {
        let c = try SQLiteConnection(location: .memory)
        try c.execute("CREATE TABLE t (v INTEGER NOT NULL)")
        struct Inner: Error {}
        try c.transaction {
            try c.execute("INSERT INTO t VALUES (1)")
            #expect(throws: Inner.self) {
                try c.transaction {
                    try c.execute("INSERT INTO t VALUES (2)")
                    throw Inner()
                }
            }
            #expect(c.isInTransaction, "the inner failure must not end the outer transaction")
            try c.transaction { try c.execute("INSERT INTO t VALUES (3)") }
        }
        let rows = try c.with("SELECT group_concat(v) FROM (SELECT v FROM t ORDER BY v)") { s -> String in
            _ = try s.step()
            return s.string(0)
        }
        #expect(rows == "1,3")
    }

    @Test func constraintViolationIsAStoreErrorWithCodeMessageAndSQL() throws {
        let s = try memoryStore()
        let error = #expect(throws: StoreError.self) {
            try s.connection.execute("""
                INSERT INTO messages (conversationType, targetId, senderUserId, direction, objectName, content,
                    sentTime, receivedTime, sentStatus) VALUES (1, 'alice', 'alice', 7, 'RC:TxtMsg', '{}', 1, 1, 30)
                """)
        }
        #expect(error?.code == sqliteConstraintCheck)
        #expect(error?.primaryCode == SQLITE_CONSTRAINT)
        #expect(error?.isConstraintViolation == true)
        #expect(error?.message.contains("CHECK constraint failed") == true)
        #expect(error?.sql?.contains("INSERT INTO messages") == true)
        #expect(error?.imErrorCode == .databaseError)
        #expect(error?.imErrorCode.rawValue == 33002)
    }

    @Test func constraintViolationThroughTheStoreAPIRollsTheOperationBack() throws {
        let s = try memoryStore()
        // An empty targetId violates CHECK (targetId <> ''): the insert fails, nothing is half-written.
        let error = #expect(throws: StoreError.self) {
            try s.storeReceived(incoming("U1", in: ConversationKey(.privateChat, ""), at: 10))
        }
        #expect(error?.code == sqliteConstraintCheck)
        #expect(try s.totalMessageCount() == 0)
        #expect(try s.conversationList(types: ConversationType.allCases).isEmpty)
        #expect(!s.connection.isInTransaction)
        // The store still works afterwards.
        #expect(try s.storeReceived(incoming("U1", at: 10)).isNew)
    }

    @Test func syntaxErrorCarriesTheSQL() throws {
        let c = try SQLiteConnection(location: .memory)
        let error = #expect(throws: StoreError.self) { try c.prepare("SELEKT 1") }
        #expect(error?.primaryCode == SQLITE_ERROR)
        #expect(error?.sql == "SELEKT 1")
        #expect(error?.description.contains("syntax error") == true)
    }

    @Test func openingADirectoryFailsWithCantOpen() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let error = #expect(throws: StoreError.self) { try IMStore.file(dir.path) }
        #expect(error?.primaryCode == SQLITE_CANTOPEN)
        #expect(error?.message.contains(dir.path) == true)
        #expect(error?.imErrorCode == .databaseError)
    }

    @Test func openingACorruptFileFailsWithNotADatabase() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("garbage.db").path
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: StoreError.self) { try IMStore.file(path) }
        #expect(error?.primaryCode == SQLITE_NOTADB)
    }

    @Test func aClosedStoreThrowsMisuse() throws {
        let s = try memoryStore()
        s.close()
        let error = #expect(throws: StoreError.self) { try s.storeReceived(incoming("U1", at: 1)) }
        #expect(error?.code == SQLITE_MISUSE)
        #expect(throws: StoreError.self) { try s.conversationList() }
    }

    @Test func badStoredValueIsReportedWithItsColumn() throws {
        let s = try memoryStore()
        let id = try store(s, incoming("U1", at: 5))
        try s.connection.execute("UPDATE messages SET receivedStatus = 4294967296 WHERE messageId = \(id)")
        let error = #expect(throws: StoreError.self) { try s.message(id: id) }
        #expect(error?.code == SQLITE_MISMATCH)
        #expect(error?.message.contains("receivedStatus") == true)
    }
}
