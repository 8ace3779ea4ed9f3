import IMWire

/// Notification setting of a conversation (im-semantics §3).
public enum ConversationNotificationStatus: Int32, Sendable, Hashable, Codable {
    case doNotDisturb = 0
    case notify = 1
}

/// One row of the local conversation list (im-semantics §3): built locally from messages.
public struct StoredConversation: Sendable, Hashable, Codable {
    public var key: ConversationKey
    /// The message with the greatest (sentTime, messageId); nil when the conversation has none.
    public var latestMessageId: Int64?
    /// `sentTime` of the latest message (0 when none).
    public var latestTime: Int64
    /// Received, counted, unread messages, as maintained by the store's arithmetic.
    public var unreadCount: Int
    public var hasUnreadMentioned: Bool
    public var isTop: Bool
    public var draft: String?
    public var notificationStatus: ConversationNotificationStatus
    /// High-water mark of private read receipts applied to this conversation (server ms).
    public var readReceiptTime: Int64

    public init(
        key: ConversationKey, latestMessageId: Int64? = nil, latestTime: Int64 = 0, unreadCount: Int = 0,
        hasUnreadMentioned: Bool = false, isTop: Bool = false, draft: String? = nil,
        notificationStatus: ConversationNotificationStatus = .notify, readReceiptTime: Int64 = 0
    ) {
        self.key = key
        self.latestMessageId = latestMessageId
        self.latestTime = latestTime
        self.unreadCount = unreadCount
        self.hasUnreadMentioned = hasUnreadMentioned
        self.isTop = isTop
        self.draft = draft
        self.notificationStatus = notificationStatus
        self.readReceiptTime = readReceiptTime
    }
}
