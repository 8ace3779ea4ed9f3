import IMWire

// Read receipts and unread (im-semantics §7).

extension IMStore {
    /// A private read receipt (`RC:ReadNtf`) for `conversation` up to `sentTime`: every outgoing
    /// message there with sentTime ≤ `sentTime` that is SENT or RECEIVED becomes READ.
    ///
    /// Receipts form a high-water mark per conversation: a receipt at or below the mark (stale,
    /// repeated, reordered) changes nothing. The mark is kept on the conversation row. One transaction.
    public func applyReadReceipt(in conversation: ConversationKey, upTo sentTime: Int64) throws -> ReadReceiptResult {
        try write {
            let mark = try loadConversation(conversation)?.readReceiptTime ?? 0
            guard sentTime > mark else {
                return ReadReceiptResult(markedReadMessageIds: [], highWaterMark: mark, advanced: false)
            }
            let marked = try connection.with(IndexedSQL.markOutgoingRead) { s in
                try s.bind(conversation, at: 1)
                try s.bind(sentTime, at: 3)
                return try collectIds(s)
            }
            // The mark lives on the conversation row (none: the conversation was removed, so the
            // mark restarts with it).
            try connection.with("""
                UPDATE conversations SET readReceiptTime = ?3 WHERE conversationType = ?1 AND targetId = ?2
                """) { s in
                try s.bind(conversation, at: 1)
                try s.bind(sentTime, at: 3)
                try s.run()
            }
            return ReadReceiptResult(markedReadMessageIds: marked, highWaterMark: sentTime, advanced: true)
        }
    }

    /// The user read the conversation up to `sentTime` (the sentTime of the last message read;
    /// `Int64.max` = everything): received messages with sentTime ≤ it get the READ bit, and the
    /// unread count and mention flag are **recounted** from the rows (this also heals drift left
    /// by earlier arithmetic, e.g. bug B14). Used for multi-device read sync too. One transaction.
    public func clearUnread(in conversation: ConversationKey, upTo sentTime: Int64 = .max) throws -> ClearUnreadResult {
        try write {
            let marked = try connection.with(IndexedSQL.markReceivedRead) { s in
                try s.bind(conversation, at: 1)
                try s.bind(sentTime, at: 3)
                return try collectIds(s)
            }
            let change = try refreshConversation(conversation, unread: .recount(readUpTo: sentTime))
            return ClearUnreadResult(markedReadMessageIds: marked, conversation: change)
        }
    }

    /// `clearUnread(in:upTo:)` for the rows the app could have read when it asked: received rows
    /// with sentTime ≤ `sentTime` and messageId ≤ `throughMessageId` get the READ bit (messageIds
    /// are AUTOINCREMENT: a row stored later has a larger one). The retry of a clear a storage
    /// fault left owed: a message stored meanwhile stays unread, as it would had the clear
    /// committed at once. The count and mention flag are recounted from every unread row.
    public func clearUnread(in conversation: ConversationKey, upTo sentTime: Int64, throughMessageId bound: Int64) throws -> ClearUnreadResult {
        try write {
            let marked = try connection.with("""
                UPDATE messages INDEXED BY messages_by_conversation_time SET receivedStatus = receivedStatus | 1
                WHERE conversationType = ?1 AND targetId = ?2 AND direction = 2
                  AND sentTime <= ?3 AND messageId <= ?4 AND (receivedStatus & 1) = 0
                RETURNING messageId
                """) { s in
                try s.bind(conversation, at: 1)
                try s.bind(sentTime, at: 3)
                try s.bind(bound, at: 4)
                return try collectIds(s)
            }
            let change = try refreshConversation(conversation, unread: .recount(readUpTo: .min))
            return ClearUnreadResult(markedReadMessageIds: marked, conversation: change)
        }
    }

    /// The received, counted, unread rows of a conversation, oldest first: what the SDK weighs
    /// against a clear a storage fault left owed (`ClientCore.conversation(_:)`).
    public func unreadRows(in conversation: ConversationKey) throws -> [UnreadRow] {
        try read {
            try connection.with("""
                SELECT messageId, sentTime, (flags & 6) = 6 FROM messages INDEXED BY messages_by_conversation_time
                WHERE conversationType = ?1 AND targetId = ?2 AND direction = 2
                  AND (flags & 2) <> 0 AND (receivedStatus & 1) = 0
                ORDER BY sentTime, messageId
                """) { s in
                try s.bind(conversation, at: 1)
                var rows: [UnreadRow] = []
                while try s.step() { rows.append(UnreadRow(messageId: s.int64(0), sentTime: s.int64(1), mentionsUser: s.bool(2))) }
                return rows
            }
        }
    }

    /// Sum of `unreadCount` over all conversations (chatrooms included if the client counts them).
    public func totalUnreadCount() throws -> Int {
        try read {
            try connection.with("SELECT COALESCE(SUM(unreadCount), 0) FROM conversations") { s in
                _ = try s.step()
                return s.int(0)
            }
        }
    }
}

/// Collects a single integer column, sorted ascending (RETURNING order is unspecified).
func collectIds(_ s: Statement) throws -> [Int64] {
    var ids: [Int64] = []
    while try s.step() { ids.append(s.int64(0)) }
    ids.sort()
    return ids
}

/// A received, counted, unread row (`IMStore.unreadRows(in:)`).
public struct UnreadRow: Sendable, Equatable {
    public var messageId: Int64
    public var sentTime: Int64
    public var mentionsUser: Bool
}
