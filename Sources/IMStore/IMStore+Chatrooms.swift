import IMWire

// Chatroom state on the client (im-semantics §6): joined rooms, their KV cache and sync state.
// Local chatroom messages are deleted on quit.

extension IMStore {
    /// Records a join (or rejoin) at local time `localTime`. A rejoin keeps the KV cache and sync
    /// state (whether a join resets them is the client core's decision). Returns true when the
    /// room was not joined before.
    @discardableResult
    public func joinChatroom(_ roomId: String, at localTime: Int64) throws -> Bool {
        try write {
            let existed = try loadChatroom(roomId) != nil
            try connection.with("""
                INSERT INTO chatrooms (roomId, joinedTime) VALUES (?1, ?2)
                ON CONFLICT (roomId) DO UPDATE SET joinedTime = excluded.joinedTime
                """) { s in
                try s.bind(roomId, at: 1)
                try s.bind(localTime, at: 2)
                try s.run()
            }
            return !existed
        }
    }

    /// The room's local state, if joined.
    public func chatroom(_ roomId: String) throws -> ChatroomState? {
        try read { try loadChatroom(roomId) }
    }

    /// Every joined room, by roomId.
    public func joinedChatrooms() throws -> [ChatroomState] {
        try read { try loadChatrooms() }
    }

    private func loadChatrooms() throws -> [ChatroomState] {
        try connection.with("SELECT +roomId, +joinedTime, +kvSynced, +kvSyncTime FROM chatrooms ORDER BY roomId") { s in
            var out: [ChatroomState] = []
            while try s.step() { out.append(Self.decodeChatroom(s)) }
            return out
        }
    }

    /// Records the KV sync state of a joined room. Returns false if the room is not joined.
    @discardableResult
    public func setChatroomKVSync(_ roomId: String, synced: Bool, syncTime: Int64) throws -> Bool {
        try write { try storeKVSync(roomId, synced: synced, syncTime: syncTime) }
    }

    /// One statement for setting and clearing the sync state (the constants are bound).
    private func storeKVSync(_ roomId: String, synced: Bool, syncTime: Int64) throws -> Bool {
        try connection.with("UPDATE chatrooms SET kvSynced = ?2, kvSyncTime = ?3 WHERE roomId = ?1") { s in
            try s.bind(roomId, at: 1)
            try s.bind(synced, at: 2)
            try s.bind(syncTime, at: 3)
            return try s.run() > 0
        }
    }

    /// Inserts or replaces cached attributes of a room (by key). Returns the number written.
    @discardableResult
    public func upsertChatroomKV(_ roomId: String, _ entries: [ChatroomKVEntry]) throws -> Int {
        try write {
            var n = 0
            for e in entries {
                n += try connection.with("""
                    INSERT INTO chatroom_kv (roomId, key, value, userId, autoDelete, updateTime)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                    ON CONFLICT (roomId, key) DO UPDATE SET value = excluded.value, userId = excluded.userId,
                        autoDelete = excluded.autoDelete, updateTime = excluded.updateTime
                    """) { s in
                    try s.bind(roomId, at: 1)
                    try s.bind(e.key, at: 2)
                    try s.bind(e.value, at: 3)
                    try s.bind(e.userId, at: 4)
                    try s.bind(e.autoDelete, at: 5)
                    try s.bind(e.updateTime, at: 6)
                    return try s.run()
                }
            }
            return n
        }
    }

    /// Removes cached attributes by key. Returns the keys that were present, sorted.
    @discardableResult
    public func removeChatroomKV(_ roomId: String, keys: [String]) throws -> [String] {
        try write {
            var removed: [String] = []
            for key in Set(keys).sorted() {
                let n = try connection.with("DELETE FROM chatroom_kv WHERE roomId = ?1 AND key = ?2") { s in
                    try s.bind(roomId, at: 1)
                    try s.bind(key, at: 2)
                    return try s.run()
                }
                if n > 0 { removed.append(key) }
            }
            return removed
        }
    }

    /// The room's cached attributes, sorted by key.
    public func chatroomKV(_ roomId: String) throws -> [ChatroomKVEntry] {
        try read {
            try connection.with("""
                SELECT +key, +value, +userId, +autoDelete, +updateTime FROM chatroom_kv WHERE roomId = ?1 ORDER BY key
                """) { s in
                try s.bind(roomId, at: 1)
                var out: [ChatroomKVEntry] = []
                while try s.step() {
                    out.append(ChatroomKVEntry(
                        key: s.string(0), value: s.string(1), userId: s.string(2), autoDelete: s.bool(3), updateTime: s.int64(4)))
                }
                return out
            }
        }
    }

    /// Drops the room's KV cache and marks it not synced (e.g. on disconnect, the fix of B7),
    /// keeping membership and messages. Returns the number of entries removed.
    @discardableResult
    public func clearChatroomKV(_ roomId: String) throws -> Int {
        try write {
            _ = try storeKVSync(roomId, synced: false, syncTime: 0)
            return try deleteKV(roomId)
        }
    }

    /// Quit: deletes the room's local messages, conversation row, KV cache, pull cursor and
    /// membership. One transaction.
    ///
    /// `upTo`: only the room's messages with messageId ≤ `upTo` go — a removal retried after a
    /// storage fault (the client core told its app the room was quit at once) spares the rows
    /// stored since, which the app was told of (its own send to the room after the quit).
    /// messageIds only grow (`AUTOINCREMENT`), so every row stored after the bound was read is
    /// above it. While any row remains the conversation row stays, its latest message recomputed.
    @discardableResult
    public func quitChatroom(_ roomId: String, upTo: Int64 = .max) throws -> ChatroomQuitResult {
        try write {
            let key = ConversationKey(.chatroom, roomId)
            let deleted: [DeletedRow]
            var conversation = 0
            if upTo == .max {
                deleted = try connection.with(IndexedSQL.deleteConversationRows) { s in
                    try s.bind(key, at: 1)
                    return try DeletedRow.collect(s)
                }
                try promoteUIdCopies(deleted)
            } else {
                deleted = try connection.with("""
                    DELETE FROM messages INDEXED BY messages_by_conversation
                    WHERE conversationType = ?1 AND targetId = ?2 AND messageId <= ?3
                    RETURNING messageId, conversationType, targetId, direction, flags, receivedStatus, messageUId, uidCopy
                    """) { s in
                    try s.bind(key, at: 1)
                    try s.bind(upTo, at: 3)
                    return try DeletedRow.collect(s)
                }
                if try newestRowId(in: key) != nil {
                    _ = try finishDelete(deleted, reporting: key)
                    conversation = -1
                } else {
                    try promoteUIdCopies(deleted)
                }
            }
            if conversation == 0 {
                conversation = try connection.with("DELETE FROM conversations WHERE conversationType = ?1 AND targetId = ?2") { s in
                    try s.bind(key, at: 1)
                    return try s.run()
                }
            }
            let kv = try deleteKV(roomId)
            let cursor = try deleteCursor(.chatroom(roomId))
            let joined = try connection.with("DELETE FROM chatrooms WHERE roomId = ?1") { s in
                try s.bind(roomId, at: 1)
                return try s.run()
            }
            return ChatroomQuitResult(
                wasJoined: joined > 0, deletedMessageCount: deleted.count, removedKVCount: kv,
                conversationRemoved: conversation > 0, cursorRemoved: cursor)
        }
    }

    /// The greatest messageId stored in the conversation (nil: none) — the bound of a room removal
    /// left owed (`quitChatroom(_:upTo:)`).
    public func newestMessageId(in key: ConversationKey) throws -> Int64? {
        try read { try newestRowId(in: key) }
    }

    private func newestRowId(in key: ConversationKey) throws -> Int64? {
        try connection.with("SELECT MAX(messageId) FROM messages WHERE conversationType = ?1 AND targetId = ?2") { s in
            try s.bind(key, at: 1)
            _ = try s.step()
            return s.optionalInt64(0)
        }
    }

    /// The conversation as `quitChatroom(_:upTo:)` would leave it (nil: no row would remain): its
    /// latest message among the rows above `upTo`. The unread count and mention flag are the
    /// stored ones (a room's messages never count unread).
    public func conversationAfterQuit(_ key: ConversationKey, upTo: Int64) throws -> StoredConversation? {
        try read {
            guard var c = try loadConversation(key) else { return nil }
            let latest: (Int64, Int64)? = try connection.with("""
                SELECT messageId, sentTime FROM messages
                WHERE conversationType = ?1 AND targetId = ?2 AND messageId > ?3
                ORDER BY sentTime DESC, messageId DESC LIMIT 1
                """) { s in
                try s.bind(key, at: 1)
                try s.bind(upTo, at: 3)
                return try s.step() ? (s.int64(0), s.int64(1)) : nil
            }
            guard let latest else { return nil }
            (c.latestMessageId, c.latestTime) = latest
            return c
        }
    }

    private func deleteKV(_ roomId: String) throws -> Int {
        try connection.with("DELETE FROM chatroom_kv WHERE roomId = ?1") { s in
            try s.bind(roomId, at: 1)
            return try s.run()
        }
    }

    /// Read from the list of joined rooms (a device is in a few): every client start prepares
    /// that statement already, and a second one costs each connection ~30k instructions.
    private func loadChatroom(_ roomId: String) throws -> ChatroomState? {
        try loadChatrooms().first { $0.roomId == roomId }
    }

    private static func decodeChatroom(_ s: Statement) -> ChatroomState {
        ChatroomState(roomId: s.string(0), joinedTime: s.int64(1), kvSynced: s.bool(2), kvSyncTime: s.int64(3))
    }
}
