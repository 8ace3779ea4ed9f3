// Sync cursors (im-semantics §4, §6). The client core decides when they move; the store keeps them.

extension IMStore {
    /// The cursor's value (server ms); 0 when never set.
    public func cursor(_ cursor: SyncCursor) throws -> Int64 {
        try read { try cursorValue(named: cursor.name) ?? 0 }
    }

    /// The stored value of the `cursors` row `name` (sync cursors and counters), nil when absent.
    func cursorValue(named name: String) throws -> Int64? {
        try connection.with("SELECT +value FROM cursors WHERE name = ?1") { s in
            try s.bind(name, at: 1)
            return try s.step() ? s.int64(0) : nil
        }
    }

    /// Sets the cursor unconditionally (also backwards — a bug model may need that).
    public func setCursor(_ cursor: SyncCursor, to value: Int64) throws {
        try write { try storeCursor(cursor, value) }
    }

    /// Moves the cursor to `value` only if that is forward (greater than the current value, 0 when
    /// unset). Returns whether it moved.
    @discardableResult
    public func advanceCursor(_ cursor: SyncCursor, to value: Int64) throws -> Bool {
        try write {
            guard value > (try self.cursor(cursor)) else { return false }
            try storeCursor(cursor, value)
            return true
        }
    }

    /// Removes a cursor (it reads as 0 again). Returns whether one was stored.
    @discardableResult
    public func removeCursor(_ cursor: SyncCursor) throws -> Bool {
        try write { try deleteCursor(cursor) }
    }

    func deleteCursor(_ cursor: SyncCursor) throws -> Bool {
        try connection.with("DELETE FROM cursors WHERE name = ?1") { s in
            try s.bind(cursor.name, at: 1)
            return try s.run() > 0
        }
    }

    private func storeCursor(_ cursor: SyncCursor, _ value: Int64) throws {
        try storeCursorValue(named: cursor.name, value)
    }

    /// Writes the `cursors` row `name` (inserted, or rewritten even when the value is unchanged).
    /// `INSERT OR REPLACE`, not an UPSERT: the table is just (name PRIMARY KEY, value NOT NULL),
    /// without triggers, foreign keys or other indexes, so both leave the same row and dirty the
    /// same page; REPLACE costs half as much to prepare (15k against 31k instructions), and every
    /// device store prepares it at every app start (the clientUniqueId floor).
    func storeCursorValue(named name: String, _ value: Int64) throws {
        try connection.with("""
            INSERT OR REPLACE INTO cursors (name, value) VALUES (?1, ?2)
            """) { s in
            try s.bind(name, at: 1)
            try s.bind(value, at: 2)
            try s.run()
        }
    }
}
