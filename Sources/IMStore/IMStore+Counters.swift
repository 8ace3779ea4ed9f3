// Named persistent counters (IMClient's clientUniqueId sequence). They live in the `cursors`
// table under a `counter:` prefix, which no `SyncCursor` name uses, so no schema change is needed.

extension IMStore {
    /// Increments the counter `name` and returns its new value (1 for the first call). The value
    /// survives app kills like any other row; one transaction (a savepoint inside `transaction(_:)`).
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
