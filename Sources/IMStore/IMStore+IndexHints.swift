// Statements over `messages` that name the index SQLite's planner picks for them anyway.

extension IMStore {
    /// Every simulated device prepares these once per connection (issue 30). Without a hint the
    /// planner weighs the rowid and all three `messages` indexes (and the partial index's WHERE)
    /// for each; `INDEXED BY` leaves it one candidate: 3.5–7.7k fewer instructions per
    /// preparation (Docs/performance.md, `prep12`). The program SQLite builds is the same, opcode
    /// for opcode, as without the hint (`IndexHintTests` compares `EXPLAIN` of both), so results
    /// and running cost are unchanged. An `INDEXED BY` naming a missing index is an error when
    /// the statement is prepared; the schema is fixed (Schema.swift), so that cannot happen
    /// unnoticed. Rowid lookups (`messageId = ?`) take SQLite's shortcut already: `NOT INDEXED`
    /// costs ~2k more there, so they have no hint.
    enum IndexedSQL {
        /// Latest (messageId, sentTime) of a conversation.
        static let latestMessage: StaticString = """
            SELECT +messageId, +sentTime FROM messages INDEXED BY messages_by_conversation_time
            WHERE conversationType = ?1 AND targetId = ?2
            ORDER BY sentTime DESC, messageId DESC LIMIT 1
            """
        /// An unread, counted, received message with sentTime ≥ ?3 that mentions the user.
        static let hasUnreadMention: StaticString = """
            SELECT EXISTS (SELECT 1 FROM messages INDEXED BY messages_by_conversation_time
                WHERE conversationType = ?1 AND targetId = ?2 AND sentTime >= ?3 AND direction = 2
                  AND (flags & 6) = 6 AND (receivedStatus & 1) = 0)
            """
        /// Received, counted, unread rows with sentTime ≥ ?3.
        static let countUnreadRows: StaticString = """
            SELECT COUNT(*) FROM messages INDEXED BY messages_by_conversation_time
            WHERE conversationType = ?1 AND targetId = ?2 AND sentTime >= ?3 AND direction = 2
              AND (flags & 2) <> 0 AND (receivedStatus & 1) = 0
            """
        /// A read receipt: outgoing SENT/RECEIVED rows up to ?3 become READ.
        static let markOutgoingRead: StaticString = """
            UPDATE messages INDEXED BY messages_by_conversation_time SET sentStatus = 50
            WHERE conversationType = ?1 AND targetId = ?2 AND direction = 1
              AND sentStatus IN (30, 40) AND sentTime <= ?3
            RETURNING messageId
            """
        /// The user read up to ?3: received rows get the READ bit.
        static let markReceivedRead: StaticString = """
            UPDATE messages INDEXED BY messages_by_conversation_time SET receivedStatus = receivedStatus | 1
            WHERE conversationType = ?1 AND targetId = ?2 AND direction = 2
              AND sentTime <= ?3 AND (receivedStatus & 1) = 0
            RETURNING messageId
            """
        /// Every row of a conversation (clear history from the start, chatroom quit).
        static let deleteConversationRows: StaticString = """
            DELETE FROM messages INDEXED BY messages_by_conversation WHERE conversationType = ?1 AND targetId = ?2
            RETURNING messageId, conversationType, targetId, direction, flags, receivedStatus, messageUId, uidCopy
            """
        /// The conversation's rows with sentTime ≤ ?3.
        static let deleteConversationRowsUpTo: StaticString = """
            DELETE FROM messages INDEXED BY messages_by_conversation_time
            WHERE conversationType = ?1 AND targetId = ?2 AND sentTime <= ?3
            RETURNING messageId, conversationType, targetId, direction, flags, receivedStatus, messageUId, uidCopy
            """
        /// (messageId, uidCopy) of the rows holding a messageUId.
        static let rowsWithUId: StaticString = """
            SELECT +messageId, +uidCopy FROM messages INDEXED BY messages_by_uid WHERE messageUId = ?1 ORDER BY messageId
            """
        /// The rows holding a messageUId, whole.
        static let messagesWithUId: StaticString = """
            SELECT +messageId, +messageUId, +conversationType, +targetId, +senderUserId, +direction, +objectName,
                   +content, +extra, +sentTime, +receivedTime, +sentStatus, +receivedStatus, +flags, +clientUniqueId
            FROM messages INDEXED BY messages_by_uid WHERE messageUId = ?1 ORDER BY messageId
            """

        static let all: [StaticString] = [
            latestMessage, hasUnreadMention, countUnreadRows, markOutgoingRead, markReceivedRead,
            deleteConversationRows, deleteConversationRowsUpTo, rowsWithUId, messagesWithUId,
        ]
    }
}
