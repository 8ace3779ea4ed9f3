import IMWire

// Deleting messages: by id, and clear history by time (im-semantics §7).

extension IMStore {
    /// Deletes messages of the conversation with sentTime ≤ `recordTime` (inclusive); `0` deletes
    /// all. (Rejecting a recordTime ahead of the server clock, 25103, is the server's job.) The
    /// conversation row stays; its latest message, unread count and mention are updated, and it is
    /// reported even when nothing was deleted. One transaction.
    public func clearHistory(in conversation: ConversationKey, upTo recordTime: Int64) throws -> DeleteResult {
        try write {
            let deleted: [DeletedRow]
            if recordTime == 0 {
                deleted = try connection.with(IndexedSQL.deleteConversationRows) { s in
                    try s.bind(conversation, at: 1)
                    return try DeletedRow.collect(s)
                }
            } else {
                deleted = try connection.with(IndexedSQL.deleteConversationRowsUpTo) { s in
                    try s.bind(conversation, at: 1)
                    try s.bind(recordTime, at: 3)
                    return try DeletedRow.collect(s)
                }
            }
            return try finishDelete(deleted, reporting: conversation)
        }
    }

    /// Deletes the messages with these ids (missing ids are ignored) and updates every affected
    /// conversation. One transaction.
    public func deleteMessages(ids: [Int64]) throws -> DeleteResult {
        try write {
            var deleted: [DeletedRow] = []
            for id in Set(ids).sorted() {
                deleted += try connection.with("""
                    DELETE FROM messages WHERE messageId = ?1
                    RETURNING messageId, conversationType, targetId, direction, flags, receivedStatus, messageUId, uidCopy
                    """) { s in
                    try s.bind(id, at: 1)
                    return try DeletedRow.collect(s)
                }
            }
            return try finishDelete(deleted)
        }
    }

    /// `reporting`: a conversation to report even if no row of it was deleted.
    func finishDelete(_ deleted: [DeletedRow], reporting: ConversationKey? = nil) throws -> DeleteResult {
        try promoteUIdCopies(deleted)
        var unreadDeltas: [ConversationKey: Int] = [:]
        if let reporting { unreadDeltas[reporting] = 0 }
        for row in deleted {
            unreadDeltas[row.conversation, default: 0] -= row.wasUnreadCounted ? 1 : 0
        }
        var changes: [ConversationChange] = []
        for key in unreadDeltas.keys.sorted() {
            if let change = try refreshConversation(key, unread: .delta(unreadDeltas[key]!)) { changes.append(change) }
        }
        return DeleteResult(deletedMessageIds: deleted.map(\.messageId).sorted(), conversations: changes)
    }
}

extension IMStore {
    /// Keeps "a stored messageUId has a copy 0" true after its copy 0 was deleted, so the unique
    /// index keeps detecting duplicates: the lowest remaining copy becomes copy 0.
    func promoteUIdCopies(_ deleted: [DeletedRow]) throws {
        let uids = Set(deleted.compactMap { $0.uidCopy == 0 ? $0.messageUId : nil }).sorted()
        for uid in uids {
            // The remaining copies (usually none) from `rows(withUId:)`, then a plain update of the
            // lowest: two cheap statements instead of an UPDATE with two subqueries (~95k
            // instructions to prepare per connection); the same row is written, and nothing when
            // a copy 0 remains.
            let rows = try rows(withUId: uid)
            guard !rows.contains(where: { $0.uidCopy == 0 }),
                  let lowest = rows.min(by: { $0.uidCopy < $1.uidCopy }) else { continue }
            try connection.with("UPDATE messages SET uidCopy = 0 WHERE messageId = ?1") { s in
                try s.bind(lowest.messageId, at: 1)
                try s.run()
            }
        }
    }
}

/// What a DELETE … RETURNING reports about each removed row.
struct DeletedRow {
    var messageId: Int64
    var conversation: ConversationKey
    var wasUnreadCounted: Bool
    var messageUId: String?
    var uidCopy: Int64

    static func collect(_ s: Statement) throws -> [DeletedRow] {
        var rows: [DeletedRow] = []
        while try s.step() {
            let direction = s.int64(3), flags = s.int64(4), received = s.int64(5)
            rows.append(DeletedRow(
                messageId: s.int64(0),
                conversation: ConversationKey(try conversationType(s, 1), s.string(2)),
                wasUnreadCounted: direction == 2 && (flags & 2) != 0 && (received & 1) == 0,
                messageUId: s.optionalString(6), uidCopy: s.int64(7)))
        }
        return rows
    }
}
