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

    /// The unread count and mention flag `clearUnread(in:upTo:)` would leave, without writing:
    /// the received, counted, unread rows after `sentTime` (its recount). The SDK shows this for
    /// a conversation whose clear a storage fault left owed (`ClientCore.conversation(_:)`).
    public func unreadAfterClear(in conversation: ConversationKey, upTo sentTime: Int64) throws -> (unreadCount: Int, hasUnreadMentioned: Bool) {
        // Reading everything leaves none (as the recount).
        guard sentTime != .max else { return (0, false) }
        return try read {
            (try countUnreadRows(in: conversation, from: sentTime + 1), try hasUnreadMention(in: conversation, from: sentTime + 1))
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
