// Shared vocabulary of the IM system (spec: im-semantics.md §1, §3, §5; wire-protocol.md §3).
// Client, server, store and world all speak these words; the numbers are contract.

/// Conversation type = wire `ChannelType` number.
public enum ConversationType: Int32, Sendable, Hashable, Comparable, Codable, CaseIterable, CustomStringConvertible {
    case privateChat = 1      // PERSON
    case discussion = 2       // PERSONS (legacy)
    case group = 3            // GROUP
    case chatroom = 4         // TEMPGROUP
    case customerService = 5  // CUSTOMERSERVICE
    case system = 6           // NOTIFY
    case mc = 7               // MC
    case mp = 8               // MP

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    public var description: String {
        switch self {
        case .privateChat: "private"
        case .discussion: "discussion"
        case .group: "group"
        case .chatroom: "chatroom"
        case .customerService: "customerService"
        case .system: "system"
        case .mc: "mc"
        case .mp: "mp"
        }
    }

    /// Parses the names used in scenario files and CLI filters (`private`, `group`, `chatroom`…).
    public init?(name: String) {
        guard let t = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = t
    }
}

/// A conversation: (type, targetId). targetId = peer userId, group id or chatroom id.
public struct ConversationKey: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var type: ConversationType
    public var targetId: String

    public init(_ type: ConversationType, _ targetId: String) {
        self.type = type
        self.targetId = targetId
    }

    public static func < (a: Self, b: Self) -> Bool { (a.type, a.targetId) < (b.type, b.targetId) }

    /// `private:bob`, `group:g1`, `chatroom:room1`.
    public var description: String { "\(type):\(targetId)" }
}

/// im-semantics §3.
public enum MessageDirection: Int32, Sendable, Hashable, Codable {
    case send = 1
    case receive = 2
}

/// im-semantics §3 `sentStatus`.
public enum SentStatus: Int32, Sendable, Hashable, Codable, CustomStringConvertible {
    case sending = 10
    case failed = 20
    case sent = 30
    case received = 40
    case read = 50
    case destroyed = 60
    case canceled = 70

    public var description: String {
        switch self {
        case .sending: "SENDING"
        case .failed: "FAILED"
        case .sent: "SENT"
        case .received: "RECEIVED"
        case .read: "READ"
        case .destroyed: "DESTROYED"
        case .canceled: "CANCELED"
        }
    }
}

/// im-semantics §3 `receivedStatus` bit flags (UNREAD = no bits).
public struct ReceivedStatus: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let unread: ReceivedStatus = []
    public static let read = ReceivedStatus(rawValue: 1)
    public static let listened = ReceivedStatus(rawValue: 2)
    public static let downloaded = ReceivedStatus(rawValue: 4)
    public static let retrieved = ReceivedStatus(rawValue: 8)
    public static let multipleReceive = ReceivedStatus(rawValue: 16)
}

/// Per-type persistence flags, `MessagePersistent` of im-semantics §2.
public enum MessagePersistent: Int32, Sendable, Hashable, Codable {
    case none = 0          // not stored, not counted, still delivered offline (commands, e.g. recall)
    case isPersisted = 1   // stored
    case isCounted = 3     // stored and counted (normal visible messages)
    case status = 16       // not stored, not counted, dropped for offline recipients, no messageUId

    public var isStored: Bool { self == .isPersisted || self == .isCounted }
    public var isCounted: Bool { self == .isCounted }
}

/// im-semantics §5 connection status values, as reported to the app.
public enum ConnectionStatus: Int32, Sendable, Hashable, Codable, CustomStringConvertible {
    case connected = 0
    case networkUnavailable = 1
    case kickedOfflineByOtherClient = 6
    case connecting = 10
    case unconnected = 11
    case signOut = 12
    case timeout = 14
    case tokenIncorrect = 15
    case disconnException = 16

    public var description: String {
        switch self {
        case .connected: "CONNECTED"
        case .networkUnavailable: "NETWORK_UNAVAILABLE"
        case .kickedOfflineByOtherClient: "KICKED_OFFLINE_BY_OTHER_CLIENT"
        case .connecting: "CONNECTING"
        case .unconnected: "UNCONNECTED"
        case .signOut: "SIGN_OUT"
        case .timeout: "TIMEOUT"
        case .tokenIncorrect: "TOKEN_INCORRECT"
        case .disconnException: "DISCONN_EXCEPTION"
        }
    }
}

/// Device platform; the server allows one session per platform class per user by default.
public enum Platform: String, Sendable, Hashable, Codable, CaseIterable {
    case mobile
    case desktop
    case web
}

/// Error codes surfaced to the app (im-semantics §2, §5, §6, §7). Raw values are contract.
public enum IMErrorCode: Int32, Sendable, Hashable, Codable, CaseIterable {
    // Rejected sends / routing
    case rejectedByBlacklist = 405
    case notInWhitelist = 407
    case rateLimited = 20604
    case notInGroup = 22406
    case mutedInGroup = 22408
    // Chatroom
    case notInChatroom = 23406
    case mutedInChatroom = 23408
    case kickedAndBannedFromChatroom = 23409
    case chatroomNotExist = 23410
    case chatroomMemberLimit = 23411
    case kvKeyLimit = 23423
    case kvNotOwner = 23424
    case kvRateLimit = 23425
    case kvKeyMissing = 23427
    case kvConflict = 23431
    // Clear history in the future (clock skew)
    case clearHistoryTimeInFuture = 25103
    // Temporary connection errors (retried)
    case socketClosed = 30011
    case pingTimeout = 30013
    case messageTooLarge = 30016
    case connectAckTimeout = 31000
    case serverUnavailable = 31003
    case connectionRefused = 32061
    case requestTimeout = 30003
    // Fatal connection errors (no retry)
    case tokenIncorrect = 31004
    case appBlocked = 31008
    case userBlocked = 31009
    case kicked = 31010
    case tokenExpired = 31020
    case otherDeviceLoggedIn = 31023
    case notInitialized = 33001
    case databaseError = 33002
    case invalidParameter = 33003
    // Local
    case chatroomKVNotSynced = 34004
    case connectTimeLimit = 34006
    case unregisteredMessageType = 34021

    /// Connect errors after which the SDK never retries (im-semantics §5).
    public var isFatalConnectError: Bool {
        switch self {
        case .tokenIncorrect, .appBlocked, .userBlocked, .kicked, .tokenExpired, .otherDeviceLoggedIn,
             .notInitialized, .databaseError, .invalidParameter:
            true
        default:
            false
        }
    }
}

/// CONNACK status byte on the wire (im-semantics §5).
public enum ConnackStatus: UInt8, Sendable, Hashable, Codable {
    case accepted = 0
    case badProtocolVersion = 1
    case identifierRejected = 2
    case serverUnavailable = 3
    case tokenIncorrect = 4
    case notAuthorized = 5
    case redirect = 6
    case appBlocked = 8
    case userBlocked = 9
    case tokenExpired = 10
}

/// DISCONNECT status byte on the wire.
public enum DisconnectStatus: UInt8, Sendable, Hashable, Codable {
    case kickedByOtherDevice = 1
    case blocked = 2
}
