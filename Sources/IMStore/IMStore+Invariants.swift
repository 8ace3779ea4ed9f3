import IMWire

// Queries the simulator's oracles use to check the store against its own definitions.

extension IMStore {
    /// Received, counted, unread, not-recalled messages of a conversation: what its unread count
    /// must equal (im-semantics §7).
    public func countUnreadCandidates(in conversation: ConversationKey) throws -> Int {
        try read {
            try connection.with("""
                SELECT COUNT(*) FROM messages
                WHERE conversationType = ?1 AND targetId = ?2 AND direction = 2
                  AND (flags & 2) <> 0 AND (receivedStatus & 1) = 0 AND objectName <> ?3
                """) { s in
                try s.bind(conversation, at: 1)
                try s.bind(Self.recallNotificationObjectName, at: 3)
                _ = try s.step()
                return s.int(0)
            }
        }
    }
}

extension IMStore {
    /// `PRAGMA integrity_check`: `[]` when the database is sound, else SQLite's findings.
    public func integrityProblems() throws -> [String] {
        try checkOpen()
        let s = try connection.prepareRead("PRAGMA integrity_check")
        var lines: [String] = []
        while try s.step() { lines.append(s.string(0)) }
        return lines == ["ok"] ? [] : lines
    }
}
