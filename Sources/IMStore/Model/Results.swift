import IMWire

// What each store operation changed. Every operation is one transaction; its result says what
// the client core must tell the app (new message, conversation list changed, unread badge…).

/// How an operation changed one conversation row.
public struct ConversationChange: Sendable, Hashable, Codable {
    public var key: ConversationKey
    /// The row was created by this operation.
    public var created: Bool
    /// The latest message (id or time) changed.
    public var latestChanged: Bool
    /// Latest message after the operation (nil = none left).
    public var latestMessageId: Int64?
    /// Change of `unreadCount` (negative when messages were read, recalled or deleted).
    public var unreadDelta: Int
    /// `unreadCount` after the operation.
    public var unreadCount: Int
    /// `hasUnreadMentioned` after the operation.
    public var hasUnreadMentioned: Bool
    /// `hasUnreadMentioned` flipped.
    public var mentionChanged: Bool

    /// Anything a conversation list would show changed.
    public var changed: Bool { created || latestChanged || unreadDelta != 0 || mentionChanged }
}

/// Result of storing one received message.
public struct ReceivedInsertResult: Sendable, Hashable, Codable {
    /// The new row, or — when the message was a duplicate — the existing row with its messageUId.
    public var messageId: Int64
    /// False when de-duplication found the messageUId already stored (nothing was written).
    public var isNew: Bool
    /// The conversation row was created, or its latest message, unread count or mention changed.
    public var conversationChanged: Bool
    public var latestChanged: Bool
    /// +1 for a new counted unread message, else 0. (The count itself: `conversation(_:)`.)
    public var unreadDelta: Int
}

/// Result of inserting an outgoing (SENDING) message.
public struct OutgoingInsertResult: Sendable, Hashable, Codable {
    public var messageId: Int64
    /// The row as stored — what the SDK hands back to the app at once.
    public var message: StoredMessage
    public var conversationChanged: Bool
    public var latestChanged: Bool
}

/// Result of a send-status change (SENT with messageUId and server time, FAILED, or back to
/// SENDING for a resend).
public struct SentStatusUpdate: Sendable, Hashable, Codable {
    /// False when the row does not exist or was not in a status that allows the change.
    public var updated: Bool
    /// Status before the call (nil: no such message).
    public var previousStatus: SentStatus?
    public var conversation: ConversationKey?
    /// The conversation's latest message changed (a new server time can reorder it).
    public var latestChanged: Bool
    /// Other rows that already carry the messageUId just assigned (a duplicate in the making;
    /// the store reports it, the oracle judges it). Ascending messageIds.
    public var otherRowsWithSameUId: [Int64]
}

/// Result of a recall.
public struct RecallResult: Sendable, Hashable, Codable {
    /// Rows whose content was replaced by the recall notification, ascending.
    public var recalledMessageIds: [Int64]
    /// Rows that were already recall notifications (a repeated recall command), ascending.
    public var alreadyRecalledMessageIds: [Int64]
    /// Per affected conversation, sorted by key.
    public var conversations: [ConversationChange]
}

/// Result of applying a private read receipt.
public struct ReadReceiptResult: Sendable, Hashable, Codable {
    /// Outgoing rows newly marked READ, ascending.
    public var markedReadMessageIds: [Int64]
    /// The conversation's receipt high-water mark after the call.
    public var highWaterMark: Int64
    /// The receipt moved the high-water mark forward (a stale receipt changes nothing).
    public var advanced: Bool
}

/// Result of clearing unread status up to a time.
public struct ClearUnreadResult: Sendable, Hashable, Codable {
    /// Received rows newly marked READ, ascending.
    public var markedReadMessageIds: [Int64]
    /// The conversation after the call (nil if it has no row).
    public var conversation: ConversationChange?
}

/// Result of deleting messages (by id or by time).
public struct DeleteResult: Sendable, Hashable, Codable {
    /// Deleted rows, ascending.
    public var deletedMessageIds: [Int64]
    /// Per affected conversation that has a row, sorted by key.
    public var conversations: [ConversationChange]
}

/// Result of quitting a chatroom.
public struct ChatroomQuitResult: Sendable, Hashable, Codable {
    /// The room was in `chatrooms`.
    public var wasJoined: Bool
    public var deletedMessageCount: Int
    public var removedKVCount: Int
    public var conversationRemoved: Bool
    public var cursorRemoved: Bool
}

/// A messageUId stored in more than one row.
public struct DuplicateUId: Sendable, Hashable, Codable {
    public var messageUId: String
    public var rows: Int
}
