import CSQLite
import Foundation
import Testing
@testable import IMStore

/// Issue 30 (branch prep12): the `INDEXED BY` hints name the index SQLite picks anyway, so the
/// hinted statement compiles to the very program the plain one does (Docs/store.md, "Statement
/// preparation").
@Suite struct IndexHintTests {
    static func text(_ sql: StaticString) -> String {
        sql.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    }

    /// The statement as it was before its hint.
    static func withoutHint(_ sql: String) -> String {
        sql.replacingOccurrences(of: #" INDEXED BY [a-z_]+"#, with: "", options: .regularExpression)
    }

    static func rows(_ s: IMStore, _ sql: String) throws -> [[String]] {
        let st = try s.connection.prepare(sql)
        var out: [[String]] = []
        while try st.step() {
            out.append((0..<st.columnCount).map { st.isNull($0) ? "NULL" : st.string($0) })
        }
        return out
    }

    /// A store with rows in a few conversations, some with messageUIds, so nothing is trivially empty.
    static func populated() throws -> IMStore {
        let s = try memoryStore()
        for i in 0..<30 {
            _ = try store(s, incoming("U\(i)", in: i % 2 == 0 ? alice : bob, at: Int64(i)))
        }
        _ = try s.insertOutgoing(outgoing("hi", at: 40))
        return s
    }

    @Test(arguments: IMStore.IndexedSQL.all.map(text))
    func hintedStatementCompilesToTheSameProgram(_ sql: String) throws {
        let s = try Self.populated()
        let plain = Self.withoutHint(sql)
        #expect(plain != sql, "every listed statement has a hint")
        let hinted = try Self.rows(s, "EXPLAIN " + sql)
        #expect(!hinted.isEmpty)
        #expect(hinted == (try Self.rows(s, "EXPLAIN " + plain)))
        // The query plan text, as `EXPLAIN QUERY PLAN` reports it (id, parent, notused, detail).
        let plan = try Self.rows(s, "EXPLAIN QUERY PLAN " + sql)
        #expect(plan.contains { $0[3].contains("USING") })
        #expect(plan == (try Self.rows(s, "EXPLAIN QUERY PLAN " + plain)))
    }

    @Test func aHintNamingAMissingIndexIsAnErrorAtPrepare() throws {
        let s = try memoryStore()
        #expect(throws: StoreError.self) {
            _ = try s.connection.prepare("SELECT messageId FROM messages INDEXED BY no_such_index WHERE messageUId = ?1")
        }
    }

    @Test func hintedStatementsAnswerAsBefore() throws {
        let s = try Self.populated()
        #expect(try s.rows(withUId: "U3").map(\.uidCopy) == [0])
        #expect(try s.messages(withUId: "U4").map(\.sentTime) == [4])
        #expect(try s.latestMessage(in: alice)?.time == 40)
        let cleared = try s.clearUnread(in: bob, upTo: 9)
        #expect(cleared.markedReadMessageIds.count == 5)
        #expect(try s.countUnreadRows(in: bob, from: .min) == 10)
        let deleted = try s.clearHistory(in: bob, upTo: 19)
        #expect(deleted.deletedMessageIds.count == 10)
    }
}
