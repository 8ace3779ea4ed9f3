import IMWire

/// Facts the server reports for traces, oracles and ledgers. They describe what the server did;
/// the server never reads them back.
public enum ServerEvent: Sendable, Hashable {
    case sessionOpened(ConnectionID, userId: String, deviceId: String, platform: Platform, sessionId: String)
    case connectRejected(ConnectionID, status: ConnackStatus)
    case sessionClosed(ConnectionID, userId: String, deviceId: String, reason: SessionCloseReason)
    /// `victim`'s session was replaced by a newer login of the same user on `byDeviceId`.
    case kicked(victim: ConnectionID, userId: String, victimDeviceId: String, byDeviceId: String)
    /// A message was accepted: it has its messageUId and dataTime now. Boxed: inline, it made
    /// every server event and effect 136 bytes.
    indirect case messageAccepted(AcceptedMessage)
    case messageRejected(ConnectionID, userId: String, conversation: ConversationKey, clientUniqueId: Int64, code: Int32)
    /// A repeat of (sender, clientUniqueId): answered with the original messageUId (idempotent accept).
    case duplicateSendAbsorbed(messageUId: String, userId: String, clientUniqueId: Int64)
    /// A message was written to a recipient's connection (the start of its delivery path).
    case fannedOut(messageUId: String, userId: String, deviceId: String, ConnectionID, via: DeliveryPath)
    /// A pull (inbox, chatroom or history) answered with these messages.
    case pulled(ConnectionID, userId: String, deviceId: String, topic: String, messageUIds: [String], syncTime: Int64, finished: Bool)
    /// Kept in a user's offline inbox (recipient not online).
    case offlineStored(messageUId: String, userId: String)
    case pushed(messageUId: String, userId: String)
    /// The server decided that `userId` (or the whole room when nil) will not get this message.
    case dropped(messageUId: String?, conversation: ConversationKey, userId: String?, reason: DropReason)
    case chatroomJoined(roomId: String, userId: String, deviceId: String)
    case chatroomLeft(roomId: String, userId: String, reason: ChatroomLeaveReason)
    case chatroomDestroyed(roomId: String, reason: String)
    case chatroomKVChanged(roomId: String, key: String, userId: String, deleted: Bool)
    case recalled(messageUId: String, byUserId: String)
    /// The server lost its volatile state (crash) and is starting again.
    case restarted(keptPersistentState: Bool)

    // Added by IMServer (Docs/server.md §10).
    /// A connection sent bytes or a frame the server cannot accept (framing/protobuf error, a frame
    /// out of place); the connection is closed next (`sessionClosed(.protocolError)`).
    case protocolError(ConnectionID, description: String)
    /// A reconnect (CONNECT flag 0x04) was refused with CONNACK status 23 because another device of
    /// the same platform class holds the session and the app set reconnectKickEnable (im-semantics §5).
    case reconnectRefused(ConnectionID, userId: String, deviceId: String, activeDeviceId: String)
    /// A QUERY was answered with a non-zero status (join 23410, KV 23424, history 22406, …).
    case queryRejected(ConnectionID, userId: String, topic: String, targetId: String, code: Int32)
    /// A chatroom came into existence (first join, server API, or the directory after a restart).
    case chatroomCreated(roomId: String, byUserId: String?)
    /// A body this core built lacks a required field (a bug here): it was sent as built and the
    /// peer will refuse it (`ProtoBody.encodeBuilt`).
    case incompleteBody(IncompleteBody)
}

/// A message the server accepted (assigned a messageUId and dataTime).
public struct AcceptedMessage: Sendable, Hashable {
    public var messageUId: String
    /// The conversation as the sender sees it (private: the peer's userId).
    public var conversation: ConversationKey
    public var senderUserId: String
    /// nil for server-API (system) messages.
    public var senderDeviceId: String?
    public var objectName: String
    /// Server ms; the message's sentTime everywhere.
    public var dataTime: Int64
    public var flags: MessageTypeFlags
    public var clientUniqueId: Int64
    /// Users who should receive it (private: the peer; group: the other members; chatroom: the
    /// members at accept time, minus the sender), sorted. The sender's other devices get sync
    /// echoes when multi-device sync is on.
    public var recipients: [String]
    public var contentLength: Int
    public var contentHash: UInt64
    /// Accepted (the sender is told "sent", with this messageUId) but dropped for everyone at
    /// once — sensitive word, chatroom quota: nobody receives it. One event, so no consumer
    /// pairs an accept with a later drop. (A trace writes it as its two records, `messageAccepted`
    /// then `dropped`, as trace format 1 always has.)
    public var droppedForEveryone: DropReason?

    public init(messageUId: String, conversation: ConversationKey, senderUserId: String, senderDeviceId: String?,
                objectName: String, dataTime: Int64, flags: MessageTypeFlags, clientUniqueId: Int64,
                recipients: [String], contentLength: Int, contentHash: UInt64, droppedForEveryone: DropReason? = nil) {
        self.messageUId = messageUId
        self.conversation = conversation
        self.senderUserId = senderUserId
        self.senderDeviceId = senderDeviceId
        self.objectName = objectName
        self.dataTime = dataTime
        self.flags = flags
        self.clientUniqueId = clientUniqueId
        self.recipients = recipients
        self.contentLength = contentLength
        self.contentHash = contentHash
        self.droppedForEveryone = droppedForEveryone
    }
}

public enum DeliveryPath: String, Sendable, Hashable, Codable {
    /// `s_msg` PUBLISH with the DownStreamMessage.
    case direct
    /// `s_ntf` telling the device to pull.
    case notify
    /// Sync echo of the sender's own message to its other device (dup bit).
    case syncEcho
    /// Chatroom `s_ntf` type 2.
    case chatroomNotify
}

public enum SessionCloseReason: String, Sendable, Hashable, Codable {
    case transportClosed, idleTimeout, kicked, blocked, serverRestart, protocolError
    // Added by IMServer.
    /// The same device connected again (its old connection was half-open): the old one is closed
    /// without a DISCONNECT.
    case replaced
    /// No CONNECT within `connectDeadline` after accept.
    case connectTimeout
    /// The client sent DISCONNECT.
    case clientDisconnect
}

public enum ChatroomLeaveReason: String, Sendable, Hashable, Codable {
    case quit
    /// Joined another room while one room per user is enforced.
    case switchedRoom
    /// Offline auto-kick (31 messages / 30 s rule).
    case offlineKick
    case banned
    case destroyed
    /// autoDelete KV etc. cleared on disconnect; membership ended with the session.
    case sessionEnded
}

/// Why a message did not (and will not) reach a user.
public enum DropReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// Chatroom 200 ms quota (spec §6).
    case chatroomQuota
    /// The room's newest-`historySize` ring moved past the message before this member pulled it
    /// (a storm faster than the member's round trips; the spec's numbers allow it).
    case chatroomRingOverflow
    /// The user was kicked from the room (offline kick, ban) before it was sent.
    case kickedFromRoom
    /// The user was not in the room when it was sent.
    case notInRoom
    /// STATUS messages are not kept for offline recipients.
    case statusToOffline
    /// The offline inbox entry expired (retention days).
    case offlineExpired
    /// Silently filtered by the sensitive-word filter.
    case sensitiveWord
    /// Recalled before delivery.
    case recalled
    /// The room was destroyed.
    case roomDestroyed
    /// A new device only gets the last `newDeviceHistoryDays` of history.
    case beforeDeviceHistoryWindow
    /// Added by IMServer: a type that is not offline-cached (`offline: false`, not STATUS) and the
    /// user had no online session.
    case onlineOnly
    /// A member's join pull (`chrmPull{0, N}`: the newest N, im-semantics §6) left out a message
    /// sent after this device joined: more than N arrived between the join and its pull.
    case chatroomJoinCount
}
