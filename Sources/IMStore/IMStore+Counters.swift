// Named persistent counters (IMClient's clientUniqueId sequence). They live in the `cursors`
// table under a `counter:` prefix, which no `SyncCursor` name uses, so no schema change is needed.

extension IMStore {
    /// Increments the counter `name` and returns its new value (1 for the first call). The value
    /// survives app kills like any other row; one transaction (a savepoint inside `transaction(_:)`).
    /// Raises a counter to at least `floor` (never lowers it).
    public func raiseCounter(_ name: String, toAtLeast floor: Int64) throws {
        try write {
            try connection.with("""
                INSERT INTO cursors (name, value) VALUES (?1, ?2)
                ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)
                """) { s in
                try s.bind("counter:\(name)", at: 1)
                try s.bind(floor, at: 2)
                _ = try s.step()
            }
        }
    }

    public func nextCounterValue(_ name: String) throws -> Int64 {
        try write {
            let key = "counter:\(name)"
            return try connection.with("""
                INSERT INTO cursors (name, value) VALUES (?1, 1)
                ON CONFLICT (name) DO UPDATE SET value = value + 1
                RETURNING value
                """) { s in
                try s.bind(key, at: 1)
                _ = try s.step()
                return s.int64(0)
            }
        }
    }
}
