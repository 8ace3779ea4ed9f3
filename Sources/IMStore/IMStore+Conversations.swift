import IMWire

// The conversation list (im-semantics §3) and the per-conversation settings.

extension IMStore {
    /// One conversation row.
    public func conversation(_ key: ConversationKey) throws -> StoredConversation? {
        try read { try loadConversation(key) }
    }

    /// The conversation list: pinned first, then latest message time newest first; ties broken by
    /// latest messageId (newer first), then type and targetId — fully deterministic.
    /// `types == nil` lists every type except chatrooms (which the SDK's list leaves out).
    public func conversationList(types: [ConversationType]? = nil) throws -> [StoredConversation] {
        try read {
            try connection.with("""
                SELECT +conversationType, +targetId, +latestMessageId, +latestTime, +unreadCount,
                       +hasUnreadMentioned, +isTop, +draft, +notificationStatus, +readReceiptTime
                FROM conversations
                ORDER BY isTop DESC, latestTime DESC, COALESCE(latestMessageId, 0) DESC, conversationType, targetId
                """) { s in
                var out: [StoredConversation] = []
                while try s.step() {
                    let c = try ConversationRow.decode(s)
                    let wanted = types.map { $0.contains(c.key.type) } ?? (c.key.type != .chatroom)
                    if wanted { out.append(c) }
                }
                return out
            }
        }
    }

    /// Pins or unpins a conversation (creating its row if needed). Returns whether it changed.
    @discardableResult
    public func setTop(_ key: ConversationKey, _ isTop: Bool) throws -> Bool {
        try setting(key) {
            try connection.with("""
                INSERT INTO conversations (conversationType, targetId, isTop) VALUES (?1, ?2, ?3)
                ON CONFLICT (conversationType, targetId) DO UPDATE SET isTop = excluded.isTop
                WHERE isTop <> excluded.isTop
                """) { s in
                try s.bind(key, at: 1)
                try s.bind(isTop, at: 3)
                return try s.run()
            }
        }
    }

    /// Sets or clears (nil) the draft (creating the row if needed). Returns whether it changed.
    @discardableResult
    public func setDraft(_ key: ConversationKey, _ draft: String?) throws -> Bool {
        try setting(key) {
            try connection.with("""
                INSERT INTO conversations (conversationType, targetId, draft) VALUES (?1, ?2, ?3)
                ON CONFLICT (conversationType, targetId) DO UPDATE SET draft = excluded.draft
                WHERE draft IS NOT excluded.draft
                """) { s in
                try s.bind(key, at: 1)
                try s.bind(draft, at: 3)
                return try s.run()
            }
        }
    }

    /// Sets the notification status (creating the row if needed). Returns whether it changed.
    @discardableResult
    public func setNotificationStatus(_ key: ConversationKey, _ status: ConversationNotificationStatus) throws -> Bool {
        try setting(key) {
            try connection.with("""
                INSERT INTO conversations (conversationType, targetId, notificationStatus) VALUES (?1, ?2, ?3)
                ON CONFLICT (conversationType, targetId) DO UPDATE SET notificationStatus = excluded.notificationStatus
                WHERE notificationStatus <> excluded.notificationStatus
                """) { s in
                try s.bind(key, at: 1)
                try s.bind(status.rawValue, at: 3)
                return try s.run()
            }
        }
    }

    /// Removes the conversation from the list; its messages stay (the next message re-creates
    /// the row). Returns whether a row was removed.
    @discardableResult
    public func removeConversation(_ key: ConversationKey) throws -> Bool {
        try write {
            let removed = try connection.with("DELETE FROM conversations WHERE conversationType = ?1 AND targetId = ?2") { s in
                try s.bind(key, at: 1)
                return try s.run() > 0
            }
            // Its messages stay: a row the next message (or a setting) re-creates can disagree
            // with them (latest, mention) until a refresh recomputes it.
            if removed { connection.conversationRowsDerived = false }
            return removed
        }
    }

    /// An upsert that creates a row always "changes" it; one that only rewrites equal values does not.
    private func setting(_ key: ConversationKey, _ upsert: () throws -> Int) throws -> Bool {
        try write {
            let existed = try loadConversation(key) != nil
            let n = try upsert()
            return n > 0 || !existed
        }
    }
}
