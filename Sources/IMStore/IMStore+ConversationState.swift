import IMWire

// Conversation bookkeeping shared by the operations. A conversation's latest message is the one
// with the greatest (sentTime, messageId) — the same order as `messages_by_conversation_time`.

extension IMStore {
    /// Hot path of every insert: move the conversation's latest message forward and add to its
    /// unread count, creating the row if needed. Returns whether the latest message changed.
    ///
    /// Live messages are almost always the newest, so the first UPDATE (guarded by "newer than the
    /// current latest") usually does everything in one primary-key probe. Measured cheaper than a
    /// SELECT + UPDATE pair and than `INSERT … ON CONFLICT DO UPDATE … RETURNING`.
    func bumpConversation(
        _ key: ConversationKey, messageId: Int64, sentTime: Int64, unreadDelta: Int, mentioned: Bool
    ) throws -> Bool {
        let becameLatest = try connection.with("""
            UPDATE conversations SET latestMessageId = ?3, latestTime = ?4, unreadCount = unreadCount + ?5,
                hasUnreadMentioned = MAX(hasUnreadMentioned, ?6)
            WHERE conversationType = ?1 AND targetId = ?2
              AND (latestMessageId IS NULL OR latestTime < ?4 OR (latestTime = ?4 AND latestMessageId < ?3))
            """) { s in
            try s.bind(key, at: 1)
            try s.bind(messageId, at: 3)
            try s.bind(sentTime, at: 4)
            try s.bind(unreadDelta, at: 5)
            try s.bind(mentioned, at: 6)
            return try s.run() == 1
        }
        if becameLatest { return true }
        // No row yet, or an older message for an existing row. The INSERT comes first: it is the
        // common case (a new conversation), and a device that never gets an older message never
        // prepares the unread-only UPDATE (~50k instructions per connection). Same writes as
        // UPDATE-then-INSERT: the INSERT writes nothing when the row exists, the UPDATE nothing
        // when it does not.
        let created = try connection.with("""
            INSERT INTO conversations (conversationType, targetId, latestMessageId, latestTime, unreadCount, hasUnreadMentioned)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT DO NOTHING
            """) { s in
            try s.bind(key, at: 1)
            try s.bind(messageId, at: 3)
            try s.bind(sentTime, at: 4)
            try s.bind(max(0, unreadDelta), at: 5)
            try s.bind(mentioned, at: 6)
            return try s.run() == 1
        }
        if created { return true }
        if unreadDelta != 0 || mentioned {
            try connection.with("""
                UPDATE conversations SET unreadCount = MAX(0, unreadCount + ?3), hasUnreadMentioned = MAX(hasUnreadMentioned, ?4)
                WHERE conversationType = ?1 AND targetId = ?2
                """) { s in
                try s.bind(key, at: 1)
                try s.bind(unreadDelta, at: 3)
                try s.bind(mentioned, at: 4)
                try s.run()
            }
        }
        return false
    }

    /// The conversation row, if any.
    func loadConversation(_ key: ConversationKey) throws -> StoredConversation? {
        try connection.with("""
            SELECT +conversationType, +targetId, +latestMessageId, +latestTime, +unreadCount,
                   +hasUnreadMentioned, +isTop, +draft, +notificationStatus, +readReceiptTime
            FROM conversations WHERE conversationType = ?1 AND targetId = ?2
            """) { s in
            try s.bind(key, at: 1)
            return try s.step() ? try ConversationRow.decode(s) : nil
        }
    }

    /// Recomputes latest message and mention after rows changed or vanished, applies an unread
    /// change (`.delta` clamps at 0, `.recount` counts the rows), and reports the difference.
    ///
    /// `readUpTo`: every received row with sentTime ≤ it is known to be read (`clearUnread` has
    /// just marked them), so the mention and unread scans look only at newer rows — the same
    /// answer over the `messages_by_conversation_time` range instead of the whole conversation.
    ///
    /// One SELECT reads the row's before-values with the recomputed ones (each distinct statement
    /// costs every connection its preparation, issue 30), and the UPDATE runs only when a value
    /// differs: writing the same values would still dirty the page (a WAL frame on a device store).
    func refreshConversation(
        _ key: ConversationKey, unread: UnreadUpdate, readUpTo: Int64 = .min
    ) throws -> ConversationChange? {
        let recount: Bool
        switch unread {
        case .delta: recount = false
        case .recount: recount = true
        }
        guard let now = try connection.with("""
            SELECT +c.latestMessageId, +c.latestTime, +c.unreadCount, +c.hasUnreadMentioned, +m.messageId, +m.sentTime,
                EXISTS (SELECT 1 FROM messages WHERE conversationType = ?1 AND targetId = ?2 AND sentTime > ?3
                    AND direction = 2 AND (flags & 6) = 6 AND (receivedStatus & 1) = 0),
                CASE WHEN ?4 THEN (SELECT COUNT(*) FROM messages WHERE conversationType = ?1 AND targetId = ?2
                    AND sentTime > ?3 AND direction = 2 AND (flags & 2) <> 0 AND (receivedStatus & 1) = 0) END
            FROM conversations AS c LEFT JOIN messages AS m ON m.messageId = (SELECT messageId FROM messages
                WHERE conversationType = ?1 AND targetId = ?2 ORDER BY sentTime DESC, messageId DESC LIMIT 1)
            WHERE c.conversationType = ?1 AND c.targetId = ?2
            """, { s -> RefreshedValues? in
            try s.bind(key, at: 1)
            try s.bind(readUpTo, at: 3)
            try s.bind(recount, at: 4)
            guard try s.step() else { return nil }
            return RefreshedValues(
                latestMessageId: s.optionalInt64(0), latestTime: s.int64(1), unreadCount: s.int(2),
                hasUnreadMentioned: s.bool(3), newLatestId: s.optionalInt64(4),
                newLatestTime: s.isNull(4) ? 0 : s.int64(5), mention: s.bool(6), unreadRows: s.int(7))
        }) else { return nil }
        let unreadAfter: Int
        switch unread {
        case .delta(let d): unreadAfter = max(0, now.unreadCount + d)
        case .recount: unreadAfter = now.unreadRows
        }
        let latestChanged = now.newLatestId != now.latestMessageId || now.newLatestTime != now.latestTime
        let mentionChanged = now.mention != now.hasUnreadMentioned
        if latestChanged || mentionChanged || unreadAfter != now.unreadCount {
            try connection.with("""
                UPDATE conversations SET latestMessageId = ?3, latestTime = ?4, unreadCount = ?5, hasUnreadMentioned = ?6
                WHERE conversationType = ?1 AND targetId = ?2
                """) { s in
                try s.bind(key, at: 1)
                try s.bind(now.newLatestId, at: 3)
                try s.bind(now.newLatestTime, at: 4)
                try s.bind(unreadAfter, at: 5)
                try s.bind(now.mention, at: 6)
                try s.run()
            }
        }
        return ConversationChange(
            key: key, created: false, latestChanged: latestChanged, latestMessageId: now.newLatestId,
            unreadDelta: unreadAfter - now.unreadCount, unreadCount: unreadAfter,
            hasUnreadMentioned: now.mention, mentionChanged: mentionChanged)
    }

    private struct RefreshedValues {
        var latestMessageId: Int64?, latestTime: Int64, unreadCount: Int, hasUnreadMentioned: Bool
        var newLatestId: Int64?, newLatestTime: Int64, mention: Bool, unreadRows: Int
    }

    enum UnreadUpdate {
        case delta(Int)
        case recount
    }
}
