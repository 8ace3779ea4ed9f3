import IMWire

/// Per-message flags as stored in `messages.flags`. The low bits are the wire's
/// `UpStreamMessage.sessionId` flags (1 persisted, 2 counted, 4 mentioned, 0x20 no notification),
/// so `MessageFlags(persistent:)` has the same raw value as `MessagePersistent` for stored types.
public struct MessageFlags: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let persisted = MessageFlags(rawValue: 1)
    public static let counted = MessageFlags(rawValue: 2)
    public static let mentioned = MessageFlags(rawValue: 4)
    /// A STATUS message (never stored by a correct client; representable for bug models).
    public static let status = MessageFlags(rawValue: 16)
    public static let noNotification = MessageFlags(rawValue: 0x20)

    /// Flags of a message type: `.isCounted` → [.persisted, .counted], `.isPersisted` → [.persisted].
    public init(persistent: MessagePersistent, mentioned: Bool = false) {
        self.init(rawValue: persistent.rawValue)
        if mentioned { insert(.mentioned) }
    }

    /// The `MessagePersistent` these flags describe.
    public var persistent: MessagePersistent {
        if contains(.status) { return .status }
        if contains(.counted) { return .isCounted }
        if contains(.persisted) { return .isPersisted }
        return .none
    }
}

/// One row of the local message store (im-semantics §3).
public struct StoredMessage: Sendable, Hashable, Codable {
    /// Local row id, increasing, never reused; 0 before insert.
    public var messageId: Int64
    /// Global id assigned by the server; nil for unsent (and STATUS) messages.
    public var messageUId: String?
    public var conversation: ConversationKey
    public var senderUserId: String
    public var direction: MessageDirection
    public var objectName: String
    /// JSON content.
    public var content: String
    public var extra: String?
    /// Server ms timestamp (local ms only while unsent, or if the server gave none).
    public var sentTime: Int64
    /// Local ms time of receipt (of insertion for own messages).
    public var receivedTime: Int64
    public var sentStatus: SentStatus
    public var receivedStatus: ReceivedStatus
    public var flags: MessageFlags
    public var clientUniqueId: Int64?

    public init(
        messageId: Int64, messageUId: String?, conversation: ConversationKey, senderUserId: String,
        direction: MessageDirection, objectName: String, content: String, extra: String?,
        sentTime: Int64, receivedTime: Int64, sentStatus: SentStatus, receivedStatus: ReceivedStatus,
        flags: MessageFlags, clientUniqueId: Int64?
    ) {
        self.messageId = messageId
        self.messageUId = messageUId
        self.conversation = conversation
        self.senderUserId = senderUserId
        self.direction = direction
        self.objectName = objectName
        self.content = content
        self.extra = extra
        self.sentTime = sentTime
        self.receivedTime = receivedTime
        self.sentStatus = sentStatus
        self.receivedStatus = receivedStatus
        self.flags = flags
        self.clientUniqueId = clientUniqueId
    }

    /// Received, counted and not yet read: what `unreadCount` counts.
    public var isUnreadCounted: Bool {
        direction == .receive && flags.contains(.counted) && !receivedStatus.contains(.read)
    }

    /// A recall notification that replaced the original content.
    public var isRecalled: Bool { objectName == IMStore.recallNotificationObjectName }
}

/// A message to store as received: a direct delivery, a pulled message or a sync echo of one's
/// own message sent from another device (`direction == .send`).
public struct ReceivedMessage: Sendable, Hashable, Codable {
    public var conversation: ConversationKey
    public var messageUId: String?
    public var senderUserId: String
    public var direction: MessageDirection
    public var objectName: String
    public var content: String
    public var extra: String?
    /// Server time (`dataTime`).
    public var sentTime: Int64
    /// Local time of receipt.
    public var receivedTime: Int64
    public var sentStatus: SentStatus
    public var receivedStatus: ReceivedStatus
    public var flags: MessageFlags
    public var clientUniqueId: Int64?

    public init(
        conversation: ConversationKey, messageUId: String?, senderUserId: String,
        direction: MessageDirection = .receive, objectName: String, content: String, extra: String? = nil,
        sentTime: Int64, receivedTime: Int64, sentStatus: SentStatus = .sent,
        receivedStatus: ReceivedStatus = .unread, flags: MessageFlags = MessageFlags(persistent: .isCounted),
        clientUniqueId: Int64? = nil
    ) {
        self.conversation = conversation
        self.messageUId = messageUId
        self.senderUserId = senderUserId
        self.direction = direction
        self.objectName = objectName
        self.content = content
        self.extra = extra
        self.sentTime = sentTime
        self.receivedTime = receivedTime
        self.sentStatus = sentStatus
        self.receivedStatus = receivedStatus
        self.flags = flags
        self.clientUniqueId = clientUniqueId
    }

    /// Adds one to the conversation's unread count when stored.
    public var countsAsUnread: Bool {
        direction == .receive && flags.contains(.counted) && !receivedStatus.contains(.read)
    }

    /// The sentTime the store records: the server's, or `receivedTime` when the server gave none (0).
    public var storedSentTime: Int64 { sentTime != 0 ? sentTime : receivedTime }

    /// The row this message becomes when stored as `messageId` (e.g. to notify the app without
    /// reading it back).
    public func stored(messageId: Int64) -> StoredMessage {
        StoredMessage(
            messageId: messageId, messageUId: messageUId, conversation: conversation, senderUserId: senderUserId,
            direction: direction, objectName: objectName, content: content, extra: extra, sentTime: storedSentTime,
            receivedTime: receivedTime, sentStatus: sentStatus, receivedStatus: receivedStatus, flags: flags,
            clientUniqueId: clientUniqueId)
    }
}

/// A message the user sends: inserted as SENDING before it goes on the wire.
public struct OutgoingMessage: Sendable, Hashable, Codable {
    public var conversation: ConversationKey
    public var senderUserId: String
    public var objectName: String
    public var content: String
    public var extra: String?
    public var flags: MessageFlags
    public var clientUniqueId: Int64?
    /// Device-local ms time of the send; `sentTime` until the server's PUBACK replaces it.
    public var localTime: Int64

    public init(
        conversation: ConversationKey, senderUserId: String, objectName: String, content: String,
        extra: String? = nil, flags: MessageFlags = MessageFlags(persistent: .isCounted),
        clientUniqueId: Int64? = nil, localTime: Int64
    ) {
        self.conversation = conversation
        self.senderUserId = senderUserId
        self.objectName = objectName
        self.content = content
        self.extra = extra
        self.flags = flags
        self.clientUniqueId = clientUniqueId
        self.localTime = localTime
    }
}

/// Names one stored message, or every row carrying a messageUId.
public enum MessageReference: Sendable, Hashable, Codable {
    case messageId(Int64)
    case messageUId(String)
}
