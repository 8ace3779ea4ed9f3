import CSQLite
import IMWire

/// The client's local message store (im-semantics §3, §4, §6, §7) over a real SQLite database.
///
/// One method per operation the client core needs; each runs as **one transaction** (a savepoint
/// when called inside `transaction(_:)`) and returns what it changed. The store keeps no data in
/// Swift memory — only the connection and its prepared statements — so handing the same object to
/// a new client core after a simulated app kill is equivalent to reopening the database
/// (see `Docs/store.md`). Never reads SQLite's clock or random; a query returning several rows
/// has an `ORDER BY` or its rows are sorted in Swift (the ledger's). Not thread-safe (`SQLITE_OPEN_NOMUTEX`): one thread at a time.
public final class IMStore {
    /// Behaviour switches. The defaults are the correct behaviour; the simulator flips them to
    /// reproduce production bugs.
    public struct Options: Sendable, Hashable, Codable {
        /// A received message whose messageUId is already stored is not inserted again
        /// (`isNew == false`). Off: duplicates become new rows — the public client has no general
        /// messageUId dedup, and bugs B1/B3 need duplicates to be storable.
        public var dedupByMessageUId: Bool
        /// Recalling an unread counted message decrements the unread count. Off: bug B14 (badge drift).
        public var recallDecrementsUnread: Bool

        public init(dedupByMessageUId: Bool = true, recallDecrementsUnread: Bool = true) {
            self.dedupByMessageUId = dedupByMessageUId
            self.recallDecrementsUnread = recallDecrementsUnread
        }
    }

    /// `objectName` of the notification that replaces a recalled message.
    public static let recallNotificationObjectName = "RC:RcNtf"

    /// Behaviour switches; may be changed between operations.
    public var options: Options
    /// The underlying connection (for tests, diagnostics and `transaction(_:)` composition).
    public let connection: SQLiteConnection
    /// False after `close()` or after `reopen()` handed the database to a new store object.
    public private(set) var isOpen = true

    /// Opens (creating and migrating as needed) a store at `location`.
    public init(location: StoreLocation = .memory, options: Options = Options()) throws {
        self.options = options
        self.connection = try SQLiteConnection(location: location)
        // Version 0: the schema was just created, so the database is empty (an opened file's
        // rows are not known to follow the store's rules) — or a device opened again after an
        // app kill of a derived store (`crash()`: what it wrote stays, and WAL recovery keeps
        // whole transactions, each of which left the rows agreeing). A power loss ends that.
        let found = try Schema.migrate(connection)
        var derived = found == 0
        if case .device(let disk) = location {
            derived = derived || (found == Schema.currentVersion && disk.conversationRowsDerived)
            disk.conversationRowsDerived = false
        }
        connection.conversationRowsDerived = derived
    }

    /// A store on a private in-memory database (the simulator's default).
    public static func inMemory(options: Options = Options()) throws -> IMStore {
        try IMStore(location: .memory, options: options)
    }

    /// A store on a database file (WAL, `synchronous=NORMAL`).
    public static func file(_ path: String, options: Options = Options()) throws -> IMStore {
        try IMStore(location: .file(path), options: options)
    }

    /// A new in-memory store whose database starts as a copy of `template`'s (SQLite's backup
    /// API; migrated if older). With a freshly migrated template this is a new store, without
    /// running the schema script again: the world creates a thousand stores this way.
    public init(copyOf template: IMStore, options: Options = Options()) throws {
        try template.checkOpen()
        self.options = options
        self.connection = try SQLiteConnection(location: .memory)
        try connection.copyContents(of: template.connection)
        let found = try Schema.migrate(connection)
        connection.conversationRowsDerived = Self.copyIsDerived(
            template: template.connection.conversationRowsDerived, found: found)
    }

    /// A new store on a simulated device whose database starts as a copy of `template`'s (as
    /// `init(copyOf:options:)`), checkpointed and synced: the state of a freshly installed app.
    public init(copyOf template: IMStore, on disk: SimDisk, options: Options = Options()) throws {
        try template.checkOpen()
        self.options = options
        self.connection = try SQLiteConnection(location: .device(disk))
        try connection.copyContents(of: template.connection)
        let derived = template.connection.conversationRowsDerived
        try connection.execute("PRAGMA journal_mode = WAL")
        let found = try Schema.migrate(connection)
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.conversationRowsDerived = Self.copyIsDerived(template: derived, found: found)
        disk.conversationRowsDerived = false
    }

    /// Whether a migrated copy's rows are the store's own: a new database, or a derived template
    /// that needed no migration (a migration is SQL on rows the store did not write).
    private static func copyIsDerived(template derived: Bool, found: Int) -> Bool {
        found == 0 || (derived && found == Schema.currentVersion)
    }

    /// App kill on a simulated device: the process dies mid-whatever. Nothing this store's
    /// connection would still do (roll back, checkpoint, delete the WAL on close) reaches the
    /// device; what it wrote stays. The store is retired; open the device again for the next run
    /// (SQLite then recovers the WAL). On other locations it is `close()`.
    public func crash() {
        guard isOpen else { return }
        isOpen = false
        if case .device(let disk) = connection.location {
            disk.conversationRowsDerived = connection.conversationRowsDerived
            disk.kill()
            disk.freezeDeletes(true)
            connection.close()
            disk.freezeDeletes(false)
        } else {
            connection.close()
        }
    }

    /// An in-memory store loaded from an image made by `serializedImage()` (migrated if older).
    public init(image: [UInt8], options: Options = Options()) throws {
        self.options = options
        self.connection = try SQLiteConnection(location: .memory)
        try connection.deserialize(image)
        try Schema.migrate(connection)
    }

    /// A store on an in-memory `connection` handed back by `retireForReuse()` (a sweep worker's
    /// last seed), emptied to a freshly migrated database's rows: every table and the
    /// AUTOINCREMENT sequence, so each query answers as on a fresh copy of the empty template
    /// (rowids, messageIds and all). Its prepared statements and parsed schema stay: a new seed
    /// does not prepare them again. Throws when the database is not at `Schema.currentVersion`.
    public init(recycling connection: SQLiteConnection, options: Options = Options()) throws {
        guard case .memory = connection.location else {
            throw StoreError(code: SQLITE_MISUSE, message: "only an in-memory store is recycled")
        }
        connection.rollbackIfNeeded()
        let version = try connection.userVersion()
        guard version == Schema.currentVersion else {
            throw StoreError(code: SQLITE_ERROR, message: "recycled database is at schema version \(version)")
        }
        try connection.transaction {
            for sql in Schema.emptyEveryTable { try connection.run(sql) }
        }
        connection.conversationRowsDerived = true
        self.connection = connection
        self.options = options
    }

    /// Retires this store (its calls throw from now on) and hands its connection over for
    /// `init(recycling:options:)`; nil, and nothing changes, unless it is open and in memory.
    public func retireForReuse() -> SQLiteConnection? {
        guard isOpen, case .memory = connection.location else { return nil }
        isOpen = false
        return connection
    }

    private init(adopting connection: SQLiteConnection, options: Options) {
        self.connection = connection
        self.options = options
    }

    /// Where the database lives.
    public var location: StoreLocation { connection.location }

    /// The schema version of the open database.
    public func schemaVersion() throws -> Int {
        try checkOpen()
        return try connection.userVersion()
    }

    /// Closes the database. Later calls throw `StoreError` (SQLITE_MISUSE).
    public func close() {
        if isOpen { connection.close() }
        isOpen = false
    }

    /// Simulated app restart: returns a new store object over the same database, as a new process
    /// would open it, and retires this one (its calls throw from now on).
    ///
    /// Any open transaction is rolled back (a killed process never committed it) and no prepared
    /// statement survives. A file database is closed and opened again; an in-memory database,
    /// which would vanish with its connection, is carried over in that connection.
    public func reopen() throws -> IMStore {
        try checkOpen()
        isOpen = false
        switch connection.location {
        case .memory:
            connection.rollbackIfNeeded()
            connection.clearStatementCache()
            return IMStore(adopting: connection, options: options)
        case .file(let path):
            connection.close()
            return try IMStore(location: .file(path), options: options)
        case .device(let disk):
            isOpen = true
            crash()
            return try IMStore(location: .device(disk), options: options)
        }
    }

    /// A byte image of the whole database (`sqlite3_serialize`), e.g. to fork or snapshot a
    /// device's state; load it with `init(image:)`.
    public func serializedImage() throws -> [UInt8] {
        try checkOpen()
        return try connection.serialize()
    }

    /// Runs several store operations as one transaction (each nests as a savepoint).
    public func transaction<T>(_ body: (IMStore) throws -> T) throws -> T {
        try checkOpen()
        return try connection.transaction { try body(self) }
    }

    /// `transaction(_:)` when `needed`, else `body` runs directly (for callers that know they
    /// will not touch the database: an empty transaction costs a BEGIN and a COMMIT).
    public func transaction<T>(if needed: Bool, _ body: (IMStore) throws -> T) throws -> T {
        needed ? try transaction(body) : try body(self)
    }

    /// Like `transaction(if:_:)`, but the operations inside run without savepoints of their own.
    /// Only for bodies that let every store error escape (any error rolls everything back).
    public func atomicTransaction<T>(if needed: Bool = true, _ body: (IMStore) throws -> T) throws -> T {
        guard needed else { return try body(self) }
        try checkOpen()
        return try connection.transactionNestingInline { try body(self) }
    }

    // MARK: Internals

    @inline(__always)
    func checkOpen() throws {
        if !isOpen { throw StoreError.closed("store") }
    }

    /// One operation = one transaction.
    @inline(__always)
    func write<T>(_ body: () throws -> T) throws -> T {
        try checkOpen()
        return try connection.transaction(body)
    }

    /// Reads need no explicit transaction: a single SELECT is atomic in SQLite.
    @inline(__always)
    func read<T>(_ body: () throws -> T) throws -> T {
        try checkOpen()
        return try body()
    }
}
