import CSQLite
import CSimVFS
import IMWire

/// Where a store's database lives.
public enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// A private in-memory database (the simulator's default). It lives as long as its connection.
    case memory
    /// A database file (the real runtime): WAL journal, `synchronous=NORMAL`.
    case file(String)
    /// The database file of a simulated device (issue 28): the same WAL + `synchronous=NORMAL`
    /// as `.file`, on the `imsim-sim` VFS, where writes can be lost, torn or failed.
    case device(SimDisk)

    public var description: String {
        switch self {
        case .memory: ":memory:"
        case .file(let path): path
        case .device: "simulated device"
        }
    }

    /// Pages in the WAL before an automatic checkpoint on a simulated device (SQLite's default is
    /// 1000; a smaller WAL keeps a thousand simulated devices' memory down, and a checkpoint is
    /// where WAL + NORMAL syncs — see Docs/store.md).
    public static let deviceWALAutocheckpoint = 100
}

extension StoreLocation {
    /// A database in (real or simulated) files, with a journal.
    var isFileLike: Bool {
        switch self {
        case .memory: false
        case .file, .device: true
        }
    }
}

/// A thin, typed owner of one `sqlite3*` handle.
///
/// - Opened with `SQLITE_OPEN_NOMUTEX`: SQLite takes no locks of its own and starts no threads;
///   the connection must be used by one thread at a time (the simulator's only thread).
/// - Statements are prepared with `SQLITE_PREPARE_PERSISTENT` and cached, keyed by the address of
///   their `StaticString` SQL (no hashing of SQL text on the hot path).
/// - Every failure is a `StoreError` with the extended result code, SQLite's message and the SQL.
/// A cached statement's key, the address of its SQL literal, placed by `WordHash`: SipHash of a
/// pointer cost ~130 instructions a lookup, and every statement run looks one up.
struct StatementKey: Hashable {
    let address: UnsafeRawPointer

    func _rawHashValue(seed: Int) -> Int {
        WordHash.mix(UInt64(UInt(bitPattern: address)), seed: seed)
    }
}

public final class SQLiteConnection {
    /// Where the database lives.
    public let location: StoreLocation
    private var db: OpaquePointer?
    private var cache: [StatementKey: Statement] = [:]
    /// True while every conversation row is known to hold what its messages give (latest message,
    /// mention flag): the store's own operations keep that from an empty database. Raw SQL
    /// (`execute`, `prepare`), an image, or a database opened from a file clear it, since rows
    /// may then disagree, and the store's recomputation is what heals them. `IMStore.markSent`
    /// reads less while it holds (Docs/store.md, "markSent without the mention scan").
    public internal(set) var conversationRowsDerived = false
    /// > 0 inside `transactionNestingInline`.
    private var inlineNesting = 0

    /// Opens (creating if needed) a database. File databases get `journal_mode=WAL` and
    /// `synchronous=NORMAL`.
    public init(location: StoreLocation) throws {
        _ = Self.libraryConfigured
        self.location = location
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let rc: Int32
        if case .device(let disk) = location {
            disk.seedSQLitePRNG()
            rc = sqlite3_open_v2(disk.path, &handle, flags, SimDisk.vfsName)
        } else {
            rc = sqlite3_open_v2(location.description, &handle, flags, nil)
        }
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(handle)
            throw StoreError(code: rc, message: "cannot open \(location): \(message)")
        }
        db = handle
        sqlite3_extended_result_codes(handle, 1)
        // No helper threads for sorting, whatever the library's build default. The C calls are
        // what `PRAGMA threads` / `PRAGMA wal_autocheckpoint` run, without preparing a statement
        // at every open (an app kill on a device store opens it again).
        sqlite3_limit(handle, SQLITE_LIMIT_WORKER_THREADS, 0)
        if case .device = location {
            // Temp files (sorts, statement journals) stay in memory, never on the device.
            try execute("PRAGMA temp_store = MEMORY")
            sqlite3_wal_autocheckpoint(handle, Int32(StoreLocation.deviceWALAutocheckpoint))
        }
        if location.isFileLike {
            // journal_mode answers with a row; a corrupt or foreign file fails here (SQLITE_NOTADB).
            let mode = try prepare("PRAGMA journal_mode=WAL")
            _ = try mode.step()
            let got = mode.string(0)
            guard got == "wal" else {
                throw StoreError(code: SQLITE_ERROR, message: "cannot switch \(location) to WAL (journal_mode is \(got))")
            }
            try execute("PRAGMA synchronous=NORMAL")
        }
    }

    deinit { close() }

    /// Process-wide library setup, once, before the first connection: SQLite's size-class
    /// allocator, memory statistics off (they serialise every SQLite allocation on a global
    /// mutex — ~5% of a simulated world's run; nothing reads them). Thread-safe (`static let`),
    /// no effect on results. Anything that may initialise SQLite first (registering the
    /// `imsim-sim` VFS does) must touch this before, or both settings are refused (SQLITE_MISUSE)
    /// and silently not made.
    static let libraryConfigured: Bool = {
        // SQLite's small allocations from size-class free lists (Docs/store.md, "SQLite's allocator").
        _ = imsim_sqlite_use_size_class_malloc()
        _ = imsim_sqlite_disable_memstatus()
        return sqlite3_initialize() == SQLITE_OK
    }()

    /// Finalizes cached statements and closes the handle. Later calls throw `StoreError` (MISUSE).
    public func close() {
        cache.removeAll()
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    public var isOpen: Bool { db != nil }

    func handle() throws -> OpaquePointer {
        guard let db else { throw StoreError.closed("connection to \(location)") }
        return db
    }

    // MARK: Statements

    /// Prepares an uncached statement (for one-off or dynamically built SQL). Raw SQL may write
    /// anything: clears `conversationRowsDerived`.
    public func prepare(_ sql: String) throws -> Statement {
        conversationRowsDerived = false
        return try prepare(sql, flags: 0)
    }

    /// `prepare(_:)` for the store's own read-only one-off statements (they keep
    /// `conversationRowsDerived`).
    func prepareRead(_ sql: String) throws -> Statement {
        try prepare(sql, flags: 0)
    }

    private func prepare(_ sql: String, flags: UInt32) throws -> Statement {
        let db = try handle()
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, flags, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw StoreError(code: sqlite3_extended_errcode(db), message: String(cString: sqlite3_errmsg(db)), sql: sql)
        }
        return Statement(handle: stmt, sql: sql)
    }

    /// The cached prepared statement for `sql` (prepared once, `SQLITE_PREPARE_PERSISTENT`).
    public func cached(_ sql: StaticString) throws -> Statement {
        precondition(sql.hasPointerRepresentation, "SQL must be a string literal")
        let key = StatementKey(address: UnsafeRawPointer(sql.utf8Start))
        if let s = cache[key] { return s }
        let text = sql.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        let s = try prepare(text, flags: UInt32(SQLITE_PREPARE_PERSISTENT))
        cache[key] = s
        return s
    }

    /// Number of statements in the cache (diagnostics and tests).
    public var cachedStatementCount: Int { cache.count }

    /// Runs `body` with the cached statement for `sql`, then resets it.
    @inline(__always) @discardableResult
    public func with<T>(_ sql: StaticString, _ body: (Statement) throws -> T) throws -> T {
        let s = try cached(sql)
        defer { s.reset() }
        return try body(s)
    }

    /// Runs a cached statement that takes no parameters and returns no rows.
    public func run(_ sql: StaticString) throws {
        let s = try cached(sql)
        defer { s.reset() }
        _ = try s.step()
    }

    /// Executes one or more SQL statements that take no parameters (schema scripts, pragmas).
    public func execute(_ sql: String) throws {
        conversationRowsDerived = false
        let db = try handle()
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let message = err.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(db))
            sqlite3_free(err)
            throw StoreError(code: sqlite3_extended_errcode(db), message: message, sql: sql)
        }
    }

    /// `PRAGMA user_version`: the schema version the migrations record.
    public func userVersion() throws -> Int {
        try with("PRAGMA user_version") { s in
            _ = try s.step()
            return s.int(0)
        }
    }

    /// Rowid of the last successful INSERT on this connection.
    public var lastInsertRowid: Int64 {
        db.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// Rows changed by the last INSERT/UPDATE/DELETE.
    public var changes: Int {
        db.map { Int(sqlite3_changes($0)) } ?? 0
    }

    // MARK: Transactions

    /// True while a transaction is open (SQLite is not in autocommit mode).
    public var isInTransaction: Bool {
        guard let db else { return false }
        return sqlite3_get_autocommit(db) == 0
    }

    /// Runs `body` in one transaction: `BEGIN IMMEDIATE` … `COMMIT`, or `ROLLBACK` if it throws.
    ///
    /// Inside an open transaction it nests as a savepoint, so an inner failure undoes only the
    /// inner work. IMMEDIATE takes the write lock up front: a second process on the same file gets
    /// `SQLITE_BUSY` at BEGIN, never halfway through.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction { return inlineNesting > 0 ? try body() : try savepoint(body) }
        try run("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            if isInTransaction { try? run("ROLLBACK") }
            throw error
        }
    }

    /// `transaction(_:)` whose nested transactions run inline, without savepoints. Only for bodies
    /// that let every error escape: an error then rolls back the whole transaction, so a nested
    /// savepoint's partial rollback could never be seen (saves a SAVEPOINT and a RELEASE per
    /// nested store operation). Inside an open transaction it is a plain nested `transaction`.
    public func transactionNestingInline<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction { return try transaction(body) }
        inlineNesting += 1
        defer { inlineNesting -= 1 }
        return try transaction(body)
    }

    private func savepoint<T>(_ body: () throws -> T) throws -> T {
        try run("SAVEPOINT imsim_nested")
        do {
            let result = try body()
            try run("RELEASE imsim_nested")
            return result
        } catch {
            try? run("ROLLBACK TO imsim_nested")
            try? run("RELEASE imsim_nested")
            throw error
        }
    }

    /// Rolls back an open transaction, if any (used when a store is handed to a new client core).
    public func rollbackIfNeeded() {
        if isInTransaction { try? run("ROLLBACK") }
    }

    /// Drops every cached statement (they are re-prepared on next use).
    public func clearStatementCache() {
        cache.removeAll()
    }

    // MARK: Copying

    /// Replaces the `main` database with a page-for-page copy of `source`'s (SQLite's online
    /// backup API). The copy stays an ordinary database of this connection's kind.
    public func copyContents(of source: SQLiteConnection) throws {
        let db = try handle()
        let src = try source.handle()
        cache.removeAll()
        guard let backup = sqlite3_backup_init(db, "main", src, "main") else {
            throw StoreError(code: sqlite3_extended_errcode(db), message: "cannot start a copy: \(String(cString: sqlite3_errmsg(db)))")
        }
        conversationRowsDerived = false
        let rc = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE, finish == SQLITE_OK else {
            throw StoreError(code: rc == SQLITE_DONE ? finish : rc, message: "cannot copy the database: \(String(cString: sqlite3_errmsg(db)))")
        }
        // Page for page the source's rows: as derived as the source's.
        conversationRowsDerived = source.conversationRowsDerived
    }

    // MARK: Serialization (in-memory snapshots)

    /// A byte image of the `main` database (`sqlite3_serialize`): what an in-memory database
    /// would be if written to a file. Not allowed inside a transaction.
    public func serialize() throws -> [UInt8] {
        let db = try handle()
        guard !isInTransaction else {
            throw StoreError(code: SQLITE_MISUSE, message: "cannot serialize inside a transaction")
        }
        var size: sqlite3_int64 = 0
        guard let p = sqlite3_serialize(db, "main", &size, 0) else {
            throw StoreError(code: SQLITE_NOMEM, message: "sqlite3_serialize returned no image")
        }
        defer { sqlite3_free(p) }
        return Array(UnsafeBufferPointer(start: p, count: Int(size)))
    }

    /// Replaces the `main` database of this in-memory connection with `image`
    /// (`sqlite3_deserialize`, resizable, freed by SQLite). A bad image is reported by the first
    /// statement that reads it (`SQLITE_NOTADB` or `SQLITE_CORRUPT`).
    public func deserialize(_ image: [UInt8]) throws {
        let db = try handle()
        guard case .memory = location else {
            throw StoreError(code: SQLITE_MISUSE, message: "deserialize is for in-memory databases only")
        }
        cache.removeAll()
        conversationRowsDerived = false
        let n = max(image.count, 1)
        guard let buf = sqlite3_malloc64(sqlite3_uint64(n))?.assumingMemoryBound(to: UInt8.self) else {
            throw StoreError(code: SQLITE_NOMEM, message: "cannot allocate \(n) bytes for the image")
        }
        image.withUnsafeBufferPointer { src in
            if let base = src.baseAddress { buf.update(from: base, count: src.count) }
        }
        let flags = UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE)
        let rc = sqlite3_deserialize(db, "main", buf, sqlite3_int64(image.count), sqlite3_int64(n), flags)
        if rc != SQLITE_OK {
            // On failure SQLite has already freed the buffer (FREEONCLOSE).
            throw StoreError(code: sqlite3_extended_errcode(db), message: "cannot load image: \(String(cString: sqlite3_errmsg(db)))")
        }
    }
}

/// Facts about the linked SQLite library.
public enum SQLiteInfo {
    /// `sqlite3_libversion()`, e.g. "3.40.1".
    public static var version: String { String(cString: sqlite3_libversion()) }
    /// Whether SQLite counts its memory (`sqlite3_memory_used()` stays 0 when the statistics are
    /// off, as `SQLiteConnection` sets them before the library initialises). Ask while a
    /// connection is open.
    public static var memoryStatisticsOn: Bool { sqlite3_memory_used() > 0 }
}
