// Shared vocabulary of the IM system (spec: im-semantics.md §1, §3, §5; wire-protocol.md §3).
// Client, server, store and world all speak these words; the numbers are contract.

/// Conversation type = wire `ChannelType` number.
///
/// A struct, not an enum: the official SDKs know more types than the model simulates (12 = RTC
/// room, im-semantics §1), and a received message of such a type is kept and passed on as its
/// number. `allCases` lists the types the wire schema names (1–8).
public struct ConversationType: RawRepresentable, Sendable, Hashable, Comparable, Codable, CaseIterable, CustomStringConvertible {
    public let rawValue: Int32

    /// Any positive channel number (0 and negatives are not types).
    public init?(rawValue: Int32) {
        guard rawValue > 0 else { return nil }
        self.rawValue = rawValue
    }

    private init(_ raw: Int32) { rawValue = raw }

    public static let privateChat = ConversationType(1)      // PERSON
    public static let discussion = ConversationType(2)       // PERSONS (legacy)
    public static let group = ConversationType(3)            // GROUP
    public static let chatroom = ConversationType(4)         // TEMPGROUP
    public static let customerService = ConversationType(5)  // CUSTOMERSERVICE
    public static let system = ConversationType(6)           // NOTIFY
    public static let mc = ConversationType(7)               // MC
    public static let mp = ConversationType(8)               // MP

    public static let allCases: [ConversationType] = [.privateChat, .discussion, .group, .chatroom,
                                                      .customerService, .system, .mc, .mp]

    /// False for a number the wire schema does not name (e.g. 12): carried, never simulated.
    public var isNamed: Bool { (1...8).contains(rawValue) }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// `private`, `group`… and `type12` for a number the schema does not name.
    public var description: String {
        switch rawValue {
        case 1: "private"
        case 2: "discussion"
        case 3: "group"
        case 4: "chatroom"
        case 5: "customerService"
        case 6: "system"
        case 7: "mc"
        case 8: "mp"
        default: "type\(rawValue)"
        }
    }

    /// Parses the names used in scenario files and CLI filters (`private`, `group`, `chatroom`…,
    /// `type12`).
    public init?(name: String) {
        if let t = Self.allCases.first(where: { $0.description == name }) {
            self = t
        } else if name.hasPrefix("type"), let n = Int32(name.dropFirst(4)), n > 0, "type\(n)" == name {
            self.init(n)
        } else {
            return nil
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let n = try c.decode(Int32.self)
        guard n > 0 else { throw DecodingError.dataCorruptedError(in: c, debugDescription: "conversation type \(n) is not positive") }
        self.init(n)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
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
    public var description: String {
        // Concatenated, not interpolated: interpolating a value goes through the runtime's
        // dynamic casts (~1k instructions; the digest and the stores describe keys per message).
        type.description + ":" + targetId
    }
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
/// iOS and Android are both of the mobile class (one mobile session), but behave differently
/// where the docs say so: the 2-minute background close is iOS's (im-semantics §5). `mobile` is
/// the older generic name and behaves as iOS.
public enum Platform: String, Sendable, Hashable, Codable, CaseIterable {
    case mobile
    case desktop
    case web
    case ios
    case android

    /// The mobile class of the one-mobile-session rule.
    public var isMobile: Bool { self == .mobile || self == .ios || self == .android }

    /// The SDK closes the connection a while after the app goes to the background (iOS).
    public var closesInBackground: Bool { self == .mobile || self == .ios }
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
