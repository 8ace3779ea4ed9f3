// Named persistent counters (IMClient's clientUniqueId sequence). They live in the `cursors`
// table under a `counter:` prefix, which no `SyncCursor` name uses, so no schema change is needed.
//
// Both operations read the row and write it with the cursors' own two statements (`cursorValue`,
// `storeCursorValue`) rather than an UPSERT of their own: each distinct statement costs every
// connection ~40–50k instructions to prepare (issue 30, Docs/store.md "Statement preparation"),
// and the row written is the same (an existing row is rewritten as before, also when unchanged).

extension IMStore {
    /// Raises a counter to at least `floor` (never lowers it). One transaction (a savepoint
    /// inside `transaction(_:)`).
    public func raiseCounter(_ name: String, toAtLeast floor: Int64) throws {
        try write {
            let key = "counter:\(name)"
            let value = try cursorValue(named: key).map { max($0, floor) } ?? floor
            try storeCursorValue(named: key, value)
        }
    }

    /// Increments the counter `name` and returns its new value (1 for the first call). The value
    /// survives app kills like any other row; one transaction (a savepoint inside `transaction(_:)`).
    public func nextCounterValue(_ name: String) throws -> Int64 {
        try write {
            let key = "counter:\(name)"
            let value = (try cursorValue(named: key) ?? 0) + 1
            try storeCursorValue(named: key, value)
            return value
        }
    }
}
