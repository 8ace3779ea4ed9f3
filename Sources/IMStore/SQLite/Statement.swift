import CSQLite

/// A prepared SQLite statement with typed binding and reading.
///
/// Parameters and columns are 1-based for `bind` (as in SQLite) and 0-based for reading (as in
/// SQLite). A statement obtained from `SQLiteConnection.cached(_:)` is reset by the connection's
/// `with…` helpers after use; one from `prepare(_:)` is finalized when released.
/// Not thread-safe: it belongs to its connection's single thread.
public final class Statement {
    /// The statement's SQL text, carried into every `StoreError` it raises.
    public let sql: String
    @usableFromInline let handle: OpaquePointer

    /// Bound text lives here (see `bind(_: String, at:)`): two buffers per parameter, the one
    /// SQLite holds a pointer into and the one the next bind writes; allocated on first use.
    private let textSlots: UnsafeMutablePointer<TextSlot>
    private let parameterCount: Int32

    private struct TextSlot {
        var buffers: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) = (nil, nil)
        var capacities = (0, 0)
        /// Which buffer the last successful text bind handed to SQLite.
        var sqliteHoldsFirst = false
    }

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
        parameterCount = sqlite3_bind_parameter_count(handle)
        textSlots = .allocate(capacity: Int(parameterCount))
        textSlots.initialize(repeating: TextSlot(), count: Int(parameterCount))
    }

    deinit {
        sqlite3_finalize(handle)
        for i in 0..<Int(parameterCount) {
            textSlots[i].buffers.0?.deallocate()
            textSlots[i].buffers.1?.deallocate()
        }
        textSlots.deallocate()
    }

    // MARK: Binding

    /// Binds an integer to parameter `index` (1-based).
    public func bind(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    public func bind(_ value: Int, at index: Int32) throws {
        try bind(Int64(value), at: index)
    }

    public func bind(_ value: Int32, at index: Int32) throws {
        try bind(Int64(value), at: index)
    }

    public func bind(_ value: Bool, at index: Int32) throws {
        try bind(Int64(value ? 1 : 0), at: index)
    }

    /// Binds an integer or NULL.
    public func bind(_ value: Int64?, at index: Int32) throws {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds UTF-8 text. An empty string binds `''`, never NULL.
    ///
    /// The bytes are copied into a buffer of the statement and bound `SQLITE_STATIC`: with
    /// `SQLITE_TRANSIENT` SQLite frees its last copy and mallocs and copies a new one at every
    /// bind (~190 instructions; a message insert binds five strings). The buffer written is never
    /// the one SQLite holds, so a refused bind (the statement running) leaves SQLite's value as it was.
    public func bind(_ value: String, at index: Int32) throws {
        var s = value
        guard index >= 1, index <= parameterCount else {
            return try check(sqlite3_bind_text(handle, index, "", 0, imsim_sqlite_transient()))   // SQLITE_RANGE
        }
        let slot = textSlots + Int(index - 1)
        let first = !slot.pointee.sqliteHoldsFirst
        let rc = s.withUTF8 { buf -> Int32 in
            let bytes = Self.buffer(slot, first: first, capacity: buf.count)
            if let base = buf.baseAddress, buf.count > 0 {
                bytes.copyMemory(from: base, byteCount: buf.count)
            }
            return sqlite3_bind_text(handle, index, bytes.assumingMemoryBound(to: CChar.self), Int32(buf.count), nil)
        }
        try check(rc)
        slot.pointee.sqliteHoldsFirst = first
    }

    /// One of the slot's buffers with room for `capacity` bytes (at least one, so that empty
    /// text has an address and binds `''`).
    private static func buffer(_ slot: UnsafeMutablePointer<TextSlot>, first: Bool, capacity: Int) -> UnsafeMutableRawPointer {
        let (bytes, held) = first
            ? (slot.pointee.buffers.0, slot.pointee.capacities.0) : (slot.pointee.buffers.1, slot.pointee.capacities.1)
        if let bytes, held >= capacity { return bytes }
        bytes?.deallocate()
        let size = max(32, capacity)
        let grown = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 1)
        if first {
            (slot.pointee.buffers.0, slot.pointee.capacities.0) = (grown, size)
        } else {
            (slot.pointee.buffers.1, slot.pointee.capacities.1) = (grown, size)
        }
        return grown
    }

    /// Binds text or NULL.
    public func bind(_ value: String?, at index: Int32) throws {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    public func bindNull(at index: Int32) throws {
        try check(sqlite3_bind_null(handle, index))
    }

    // MARK: Stepping

    /// Advances the statement: `true` when a row is available, `false` when done.
    @discardableResult
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw error(rc)
    }

    /// Resets the statement so it can run again (bindings are kept until rebound).
    public func reset() {
        sqlite3_reset(handle)
    }

    /// Steps to completion, discarding rows; returns the number of rows changed (`sqlite3_changes`).
    @discardableResult
    public func run() throws -> Int {
        while try step() {}
        return Int(sqlite3_changes(sqlite3_db_handle(handle)))
    }

    // MARK: Reading (0-based columns)

    public var columnCount: Int32 { sqlite3_column_count(handle) }

    public func columnName(_ column: Int32) -> String {
        String(cString: sqlite3_column_name(handle, column))
    }

    public func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    public func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    public func int(_ column: Int32) -> Int {
        Int(sqlite3_column_int64(handle, column))
    }

    public func bool(_ column: Int32) -> Bool {
        sqlite3_column_int64(handle, column) != 0
    }

    public func optionalInt64(_ column: Int32) -> Int64? {
        isNull(column) ? nil : int64(column)
    }

    /// Column text as a String (empty for NULL; use `optionalString` to tell them apart).
    public func string(_ column: Int32) -> String {
        guard let p = sqlite3_column_text(handle, column) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    public func optionalString(_ column: Int32) -> String? {
        isNull(column) ? nil : string(column)
    }

    /// Column text as its UTF-8 bytes, valid only inside `body` (empty for NULL): for reading
    /// a value without making a String of it.
    public func withText<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        // sqlite3_column_bytes after sqlite3_column_text: the length of the text just converted.
        let p = sqlite3_column_text(handle, column)
        let n = p == nil ? 0 : Int(sqlite3_column_bytes(handle, column))
        return try body(UnsafeBufferPointer(start: p, count: n))
    }

    // MARK: Errors

    @inline(__always)
    func check(_ rc: Int32) throws {
        if rc != SQLITE_OK { throw error(rc) }
    }

    func error(_ rc: Int32) -> StoreError {
        let db = sqlite3_db_handle(handle)
        let code = db.map { sqlite3_extended_errcode($0) } ?? rc
        let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        // errcode can lag behind for misuse errors that never reach the connection.
        return StoreError(code: (code & 0xff) == (rc & 0xff) ? code : rc, message: message, sql: sql)
    }
}
