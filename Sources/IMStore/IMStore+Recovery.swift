import IMWire

// Lookups the client uses to reconcile its own messages after a storage fault (issue 28).

extension IMStore {
    /// The oldest own row with this clientUniqueId that is still unsent (SENDING or FAILED, no
    /// messageUId): a row whose PUBACK or SENT update was lost with the process or a fault. A
    /// full scan (no index on clientUniqueId): only own copies that match no row of the running
    /// process come here, which happens after a restart or a storage fault.
    public func unsentOwnMessageId(clientUniqueId: Int64) throws -> Int64? {
        try read {
            try connection.with("""
                SELECT messageId FROM messages
                WHERE clientUniqueId = ?1 AND direction = 1 AND sentStatus IN (10, 20) AND messageUId IS NULL
                ORDER BY messageId LIMIT 1
                """) { s in
                try s.bind(clientUniqueId, at: 1)
                return try s.step() ? s.int64(0) : nil
            }
        }
    }
}
