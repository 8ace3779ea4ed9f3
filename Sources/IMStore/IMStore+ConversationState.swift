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

    /// Latest (messageId, sentTime) among the conversation's messages.
    func latestMessage(in key: ConversationKey) throws -> (id: Int64, time: Int64)? {
        try connection.with(IndexedSQL.latestMessage) { s in
            try s.bind(key, at: 1)
            return try s.step() ? (s.int64(0), s.int64(1)) : nil
        }
    }

    /// Whether an unread, counted, received message with sentTime ≥ `from` mentions the user.
    /// The bound walks `messages_by_conversation_time` from there instead of the whole
    /// conversation (`Int64.min`: every row).
    func hasUnreadMention(in key: ConversationKey, from: Int64 = .min) throws -> Bool {
        try connection.with(IndexedSQL.hasUnreadMention) { s in
            try s.bind(key, at: 1)
            try s.bind(from, at: 3)
            _ = try s.step()
            return s.bool(0)
        }
    }

    /// Received, counted, unread rows with sentTime ≥ `from` actually in the table.
    func countUnreadRows(in key: ConversationKey, from: Int64) throws -> Int {
        try connection.with(IndexedSQL.countUnreadRows) { s in
            try s.bind(key, at: 1)
            try s.bind(from, at: 3)
            _ = try s.step()
            return s.int(0)
        }
    }

    /// Recomputes latest message and mention after rows changed or vanished, applies an unread
    /// change (`.delta` clamps at 0, `.recount` counts the rows after the read mark), and reports the difference.
    func refreshConversation(_ key: ConversationKey, unread: UnreadUpdate) throws -> ConversationChange? {
        guard let before = try loadConversation(key) else { return nil }
        let latest = try latestMessage(in: key)
        let mention: Bool
        let unreadAfter: Int
        switch unread {
        case .delta(let d):
            mention = try hasUnreadMention(in: key)
            unreadAfter = max(0, before.unreadCount + d)
        case .recount(let readUpTo):
            // Rows at or before `readUpTo` are all read, so only later ones can count; reading
            // everything leaves none (the scans would find nothing).
            if readUpTo == .max {
                (mention, unreadAfter) = (false, 0)
            } else {
                mention = try hasUnreadMention(in: key, from: readUpTo + 1)
                unreadAfter = try countUnreadRows(in: key, from: readUpTo + 1)
            }
        }
        return try storeConversationState(key, before: before, latest: latest, unreadCount: unreadAfter, mention: mention)
    }

    /// `refreshConversation(key, unread: .delta(0))` after `markSent` moved outgoing row
    /// `messageId` to `sentTime`, when the rows are the store's own (`conversationRowsDerived`):
    /// the stored row then already holds the latest message and the mention flag its messages
    /// give, and an outgoing row's status and time change neither the mention (received rows
    /// only) nor any other row's place. So the mention is the stored one, and the latest is
    /// the stored one or this row unless this row was the latest and moved back (then it is
    /// read from the rows as before). Same UPDATE, same values: the same row and pages.
    func refreshAfterSent(_ key: ConversationKey, messageId: Int64, sentTime: Int64) throws -> ConversationChange? {
        guard let before = try loadConversation(key) else { return nil }
        let latest: (id: Int64, time: Int64)?
        if let id = before.latestMessageId, id != messageId || sentTime >= before.latestTime {
            // (time, messageId) order, as `messages_by_conversation_time` and bumpConversation.
            let sentIsLater = sentTime > before.latestTime || (sentTime == before.latestTime && messageId >= id)
            latest = sentIsLater ? (messageId, sentTime) : (id, before.latestTime)
        } else {
            latest = try latestMessage(in: key)
        }
        let mention = before.hasUnreadMentioned
        let unreadAfter = max(0, before.unreadCount)
        return try storeConversationState(key, before: before, latest: latest, unreadCount: unreadAfter, mention: mention)
    }

    /// Both refresh forms' write (one statement text, one preparation) and the change it makes
    /// to `before`.
    private func storeConversationState(
        _ key: ConversationKey, before: StoredConversation, latest: (id: Int64, time: Int64)?, unreadCount: Int, mention: Bool
    ) throws -> ConversationChange {
        try connection.with(Self.updateConversationState) { s in
            try s.bind(key, at: 1)
            try s.bind(latest?.id, at: 3)
            try s.bind(latest?.time ?? 0, at: 4)
            try s.bind(unreadCount, at: 5)
            try s.bind(mention, at: 6)
            try s.run()
        }
        return ConversationChange(
            key: key, created: false,
            latestChanged: latest?.id != before.latestMessageId || (latest?.time ?? 0) != before.latestTime,
            latestMessageId: latest?.id,
            unreadDelta: unreadCount - before.unreadCount, unreadCount: unreadCount,
            hasUnreadMentioned: mention, mentionChanged: mention != before.hasUnreadMentioned)
    }

    static let updateConversationState: StaticString = """
        UPDATE conversations SET latestMessageId = ?3, latestTime = ?4, unreadCount = ?5, hasUnreadMentioned = ?6
        WHERE conversationType = ?1 AND targetId = ?2
        """

    enum UnreadUpdate {
        case delta(Int)
        /// Count the unread rows again; every received row with sentTime ≤ `readUpTo` is read.
        case recount(readUpTo: Int64)
    }
}
