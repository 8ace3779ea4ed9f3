import CSQLite
import Testing
@testable import IMStore

/// SQLite's memory comes from IMSim's size-class allocator (`Sources/CSimVFS/sqlite_malloc.c`,
/// Docs/store.md "SQLite's allocator"): what SQLite asks of an allocator holds, and stores work
/// the same through it.
@Suite struct SQLiteAllocatorTests {
    @Test func allocatorKeepsSQLitesContract() throws {
        _ = try memoryStore()   // the library is set up by the first connection
        // Small requests: 16-byte classes; the size reported is the class's capacity.
        let p = try #require(sqlite3_malloc64(1))
        #expect(sqlite3_msize(p) == 16, "the size-class allocator is SQLite's allocator")
        let bytes = p.assumingMemoryBound(to: UInt8.self)
        bytes[0] = 0xA5
        // Growing through every class and past 1 KiB keeps the content.
        var q = p
        for n: UInt64 in [17, 100, 1_000, 1_024, 1_025, 5_000, 70_000, 3_000, 40] {
            q = try #require(sqlite3_realloc64(q, n))
            #expect(sqlite3_msize(q) >= n)
            #expect(q.assumingMemoryBound(to: UInt8.self)[0] == 0xA5, "realloc to \(n) kept the content")
            q.assumingMemoryBound(to: UInt8.self)[Int(n) - 1] = 0x5A
        }
        sqlite3_free(q)
        // Freed blocks are reused (same class, same thread).
        let a = try #require(sqlite3_malloc64(48))
        sqlite3_free(a)
        let b = try #require(sqlite3_malloc64(40))
        #expect(a == b)
        sqlite3_free(b)
        #expect(sqlite3_msize(nil) == 0)
    }

    @Test func storesLargeAndManyValuesThroughIt() throws {
        // Big content (malloc path), sorter and group_concat growth (realloc), many statements.
        let s = try memoryStore()
        let big = String(repeating: "x", count: 300_000)
        let id = try s.storeReceived(incoming("BIG", at: 1, text: big)).messageId
        #expect(try s.message(id: id)?.content.count == big.count + 14)
        for i in 0..<2_000 { try store(s, incoming("U\(i)", in: i % 2 == 0 ? alice : team, at: Int64(10 + i))) }
        let st = try s.connection.prepare(
            "SELECT length(group_concat(messageUId, ',')) FROM (SELECT messageUId FROM messages ORDER BY content DESC)")
        _ = try st.step()
        #expect(st.int(0) > 2_000 * 2)
        #expect(try scalar(s, "SELECT count(*) FROM messages") == 2_001)
        let check = try s.connection.prepare("PRAGMA integrity_check")
        _ = try check.step()
        #expect(check.string(0) == "ok")
    }
}
