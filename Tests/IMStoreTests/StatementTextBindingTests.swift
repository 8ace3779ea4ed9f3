import CSQLite
import Testing
@testable import IMStore

/// Text is bound from the statement's own buffers (`SQLITE_STATIC`): what SQLite reads must be
/// the value of the last successful bind, whatever happened to the Swift string since.
@Suite struct StatementTextBindingTests {
    @Test func boundTextOutlivesTheStringAndSurvivesReset() throws {
        let c = try SQLiteConnection(location: .memory)
        let sel = try c.prepare("SELECT ?1, ?2, length(?2)")
        do {
            // A small (inline) string and a heap one, both gone after this scope.
            let small = String("ab" + "c")
            let large = String(repeating: "x", count: 300) + "é"
            try sel.bind(small, at: 1)
            try sel.bind(large, at: 2)
        }
        for _ in 0..<2 {   // reset keeps bindings: the second run reads the same buffers
            #expect(try sel.step())
            #expect(sel.string(0) == "abc")
            #expect(sel.string(1) == String(repeating: "x", count: 300) + "é")
            #expect(sel.int(2) == 301)
            sel.reset()
        }
    }

    @Test func rebindingGrowsAndShrinksWithoutStaleBytes() throws {
        let c = try SQLiteConnection(location: .memory)
        let sel = try c.prepare("SELECT ?1, ?1 IS NULL")
        for value in ["", "short", String(repeating: "long-", count: 200), "s", "", "ü🌏"] {
            try sel.bind(value, at: 1)
            #expect(try sel.step())
            #expect(sel.string(0) == value)
            #expect(sel.bool(1) == false, "empty text binds '' and never NULL")
            sel.reset()
        }
    }

    @Test func refusedBindsLeaveTheRunningStatementsValueAlone() throws {
        let c = try SQLiteConnection(location: .memory)
        try c.execute("CREATE TABLE t (v TEXT)")
        try c.execute("INSERT INTO t VALUES ('a'), ('b')")
        let sel = try c.prepare("SELECT v, ?1 FROM t ORDER BY v")
        try sel.bind("first", at: 1)
        #expect(try sel.step())
        #expect(sel.string(1) == "first")
        // Running: SQLite refuses the bind (MISUSE) and keeps reading the old value.
        for size in [500, 5, 5000] {   // refused again and again, the buffer behind growing
            let misuse = #expect(throws: StoreError.self) { try sel.bind(String(repeating: "z", count: size), at: 1) }
            #expect(misuse?.code == SQLITE_MISUSE)
        }
        #expect(try sel.step())
        #expect(sel.string(1) == "first")
        sel.reset()
        // Out of range: refused without touching parameter 1.
        let range = #expect(throws: StoreError.self) { try sel.bind("nope", at: 2) }
        #expect(range?.code == SQLITE_RANGE)
        #expect(try sel.step())
        #expect(sel.string(1) == "first")
        sel.reset()
        try sel.bind("second", at: 1)
        #expect(try sel.step())
        #expect(sel.string(1) == "second")
    }

    @Test func insertedRowsKeepTheirTextAfterTheBuffersAreReused() throws {
        let c = try SQLiteConnection(location: .memory)
        try c.execute("CREATE TABLE t (v TEXT)")
        let ins = try c.prepare("INSERT INTO t VALUES (?1)")
        let values = (0..<50).map { String(repeating: "\($0 % 10)", count: $0 * 7) }
        for v in values {
            try ins.bind(v, at: 1)
            try ins.run()
            ins.reset()
        }
        let sel = try c.prepare("SELECT v FROM t ORDER BY rowid")
        var got: [String] = []
        while try sel.step() { got.append(sel.string(0)) }
        #expect(got == values)
    }
}
