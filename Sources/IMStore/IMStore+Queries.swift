import IMWire

// Read-only queries. Every one orders explicitly; none depends on SQLite's scan order.

extension IMStore {
    /// Most messages a history page returns (im-semantics §3).
    public static let historyPageLimit = 20

    /// The row with this messageId.
    public func message(id: Int64) throws -> StoredMessage? {
        try read {
            try connection.with("""
                SELECT +messageId, +messageUId, +conversationType, +targetId, +senderUserId, +direction, +objectName,
                       +content, +extra, +sentTime, +receivedTime, +sentStatus, +receivedStatus, +flags, +clientUniqueId
                FROM messages WHERE messageId = ?1
                """) { s in
                try s.bind(id, at: 1)
                return try s.step() ? try MessageRow.decode(s) : nil
            }
        }
    }

    /// Every row carrying `messageUId` (more than one only with dedup off), ascending messageId.
    public func messages(withUId messageUId: String) throws -> [StoredMessage] {
        try read {
            try connection.with(IndexedSQL.messagesWithUId) { s in
                try s.bind(messageUId, at: 1)
                return try MessageRow.decodeAll(s)
            }
        }
    }

    /// Local history: up to `count` (at most 20) messages of the conversation older than the
    /// message `before`, newest first. `before == -1` starts at the newest message; pass the last
    /// (oldest) messageId of a page to get the next.
    ///
    /// Order is server order — (sentTime, messageUId, messageId) descending — so a message that
    /// arrives late (a pull filling a gap, an own message whose PUBACK came after a received one)
    /// still shows in its place; the messageId is only the cursor. `count <= 0` returns nothing.
    /// `above`: only rows with a greater messageId (a room whose removal is owed shows only the
    /// rows stored after its quit, `quitChatroom(_:upTo:)`).
    public func history(in conversation: ConversationKey, before messageId: Int64 = -1, count: Int = 20,
                        above floor: Int64 = 0) throws -> [StoredMessage] {
        try read {
            let limit = min(count, Self.historyPageLimit)
            guard limit > 0 else { return [] }
            // The cursor row's sort key (a vanished cursor row pages from the newest message).
            var key: (Int64, String, Int64) = (Int64.max, "", Int64.max)
            if messageId != -1 {
                try connection.with("SELECT sentTime, COALESCE(messageUId, '') FROM messages WHERE messageId = ?1") { s in
                    try s.bind(messageId, at: 1)
                    if try s.step() { key = (s.int64(0), s.string(1), messageId) }
                }
            }
            func page(_ s: Statement) throws -> [StoredMessage] {
                try s.bind(conversation, at: 1)
                try s.bind(key.0, at: 3)
                try s.bind(limit, at: 4)
                try s.bind(key.1, at: 5)
                try s.bind(key.2, at: 6)
                if floor > 0 { try s.bind(floor, at: 7) }
                return try MessageRow.decodeAll(s)
            }
            // The floor in its own statement: the everyday page keeps its text and plan.
            guard floor > 0 else {
                return try connection.with("""
                    SELECT +messageId, +messageUId, +conversationType, +targetId, +senderUserId, +direction, +objectName,
                           +content, +extra, +sentTime, +receivedTime, +sentStatus, +receivedStatus, +flags, +clientUniqueId
                    FROM messages
                    WHERE conversationType = ?1 AND targetId = ?2
                      AND (sentTime, COALESCE(messageUId, ''), messageId) < (?3, ?5, ?6)
                    ORDER BY sentTime DESC, COALESCE(messageUId, '') DESC, messageId DESC LIMIT ?4
                    """, page)
            }
            return try connection.with("""
                SELECT +messageId, +messageUId, +conversationType, +targetId, +senderUserId, +direction, +objectName,
                       +content, +extra, +sentTime, +receivedTime, +sentStatus, +receivedStatus, +flags, +clientUniqueId
                FROM messages
                WHERE conversationType = ?1 AND targetId = ?2
                  AND (sentTime, COALESCE(messageUId, ''), messageId) < (?3, ?5, ?6) AND messageId > ?7
                ORDER BY sentTime DESC, COALESCE(messageUId, '') DESC, messageId DESC LIMIT ?4
                """, page)
        }
    }

    /// Every message of the store grouped by conversation, each list oldest first in history
    /// order (the reverse of what `history(in:)` pages return, concatenated), optionally without
    /// chatroom messages. One table scan for the whole store, sorted here rather than by SQLite
    /// (its sorter cost ~4× the scan). The ledger reads the leaner `ledgerConversations()`.
    public func allMessagesInHistoryOrder(excludingChatrooms: Bool = false) throws -> [ConversationKey: [StoredMessage]] {
        let rows: [ConversationKey: [StoredMessage]] = try read {
            try connection.with("""
                SELECT +messageId, +messageUId, +conversationType, +targetId, +senderUserId, +direction, +objectName,
                       +content, +extra, +sentTime, +receivedTime, +sentStatus, +receivedStatus, +flags, +clientUniqueId
                FROM messages WHERE conversationType <> ?1
                """) { s in
                try s.bind(excludingChatrooms ? Int(ConversationType.chatroom.rawValue) : -1, at: 1)
                var out: [ConversationKey: [StoredMessage]] = [:]
                while try s.step() {
                    let m = try MessageRow.decode(s)
                    out[m.conversation, default: []].append(m)
                }
                return out
            }
        }
        // Each list sorts on its own.
        return rows.mapValues { $0.sorted(by: precedesInHistory) }
    }

    /// Messages of the conversation with `sentTime` in `range` (inclusive), in server order:
    /// ascending (sentTime, messageId). `limit` caps the count (nil = all).
    public func messages(in conversation: ConversationKey, sentTime range: ClosedRange<Int64>, limit: Int? = nil) throws -> [StoredMessage] {
        try read {
            try connection.with("""
                SELECT +messageId, +messageUId, +conversationType, +targetId, +senderUserId, +direction, +objectName,
                       +content, +extra, +sentTime, +receivedTime, +sentStatus, +receivedStatus, +flags, +clientUniqueId
                FROM messages
                WHERE conversationType = ?1 AND targetId = ?2 AND sentTime BETWEEN ?3 AND ?4
                ORDER BY sentTime, messageId LIMIT ?5
                """) { s in
                try s.bind(conversation, at: 1)
                try s.bind(range.lowerBound, at: 3)
                try s.bind(range.upperBound, at: 4)
                try s.bind(limit.map { Int64(max(0, $0)) } ?? -1, at: 5)
                return try MessageRow.decodeAll(s)
            }
        }
    }

    /// Canonical dump of a conversation for ledgers and oracles: every row, ordered by
    /// (sentTime, messageUId, messageId) — NULL messageUIds (unsent) first within a millisecond.
    /// The order depends only on server-assigned values where they exist, so two devices'
    /// snapshots of the same conversation are comparable.
    public func snapshot(of conversation: ConversationKey) throws -> [StoredMessage] {
        try read {
            try connection.with("""
                SELECT +messageId, +messageUId, +conversationType, +targetId, +senderUserId, +direction, +objectName,
                       +content, +extra, +sentTime, +receivedTime, +sentStatus, +receivedStatus, +flags, +clientUniqueId
                FROM messages
                WHERE conversationType = ?1 AND targetId = ?2
                ORDER BY sentTime, messageUId, messageId
                """) { s in
                try s.bind(conversation, at: 1)
                return try MessageRow.decodeAll(s)
            }
        }
    }

    /// Every non-nil messageUId stored, one entry per row (duplicates repeat), sorted ascending.
    /// `conversation == nil`: the whole store.
    public func allMessageUIds(in conversation: ConversationKey? = nil) throws -> [String] {
        try read {
            func collect(_ s: Statement) throws -> [String] {
                var out: [String] = []
                while try s.step() { out.append(s.string(0)) }
                return out
            }
            guard let conversation else {
                return try connection.with("""
                    SELECT messageUId FROM messages WHERE messageUId IS NOT NULL ORDER BY messageUId, messageId
                    """) { try collect($0) }
            }
            return try connection.with("""
                SELECT messageUId FROM messages
                WHERE conversationType = ?1 AND targetId = ?2 AND messageUId IS NOT NULL
                ORDER BY messageUId, messageId
                """) { s in
                try s.bind(conversation, at: 1)
                return try collect(s)
            }
        }
    }

    /// Number of rows carrying `messageUId` (1 is right; more is a duplicate).
    public func countRows(withUId messageUId: String) throws -> Int {
        try read { try rows(withUId: messageUId).count }
    }

    /// messageUIds stored in more than one row, sorted by messageUId.
    public func duplicateMessageUIds() throws -> [DuplicateUId] {
        try read {
            try connection.with("""
                SELECT messageUId, COUNT(*) FROM messages WHERE messageUId IS NOT NULL
                GROUP BY messageUId HAVING COUNT(*) > 1 ORDER BY messageUId
                """) { s in
                var out: [DuplicateUId] = []
                while try s.step() { out.append(DuplicateUId(messageUId: s.string(0), rows: s.int(1))) }
                return out
            }
        }
    }

    /// Number of rows in the conversation (`above`: with a greater messageId only).
    public func messageCount(in conversation: ConversationKey, above floor: Int64) throws -> Int {
        try read {
            try connection.with("""
                SELECT COUNT(*) FROM messages WHERE conversationType = ?1 AND targetId = ?2 AND messageId > ?3
                """) { s in
                try s.bind(conversation, at: 1)
                try s.bind(floor, at: 3)
                _ = try s.step()
                return s.int(0)
            }
        }
    }

    /// Number of rows in the conversation.
    public func messageCount(in conversation: ConversationKey) throws -> Int {
        try read {
            try connection.with("SELECT COUNT(*) FROM messages WHERE conversationType = ?1 AND targetId = ?2") { s in
                try s.bind(conversation, at: 1)
                _ = try s.step()
                return s.int(0)
            }
        }
    }

    /// Number of rows in the whole store.
    public func totalMessageCount() throws -> Int {
        try read {
            try connection.with("SELECT COUNT(*) FROM messages") { s in
                _ = try s.step()
                return s.int(0)
            }
        }
    }
}
