import IMWire
import SimKernel

/// Server model knobs. Defaults are the values of im-semantics.md; the simulated world maps the
/// scenario's `server` section onto this.
public struct ServerConfig: Sendable, Hashable {
    public var appKey = "imsim-app"
    public var offlineRetentionDays = 7
    /// Allow two messages of a conversation to get the same dataTime (to expose same-ms bugs).
    public var allowEqualDataTime = false
    public enum Delivery: String, Sendable, Hashable { case direct, notify }
    public var delivery: Delivery = .direct
    public var pullPageSize = 50
    public var multiDeviceSync = true
    /// A new device gets the messages of the current calendar day from 00:00 (server time zone),
    /// extended to this many calendar days (1–7; im-semantics §5) — not a rolling 24 h window.
    public var newDeviceHistoryDays = 1
    /// The server's time zone for calendar days: minutes east of UTC (RongCloud China: UTC+8).
    public var serverUtcOffsetMinutes = 480
    public var sessionIdleTimeout: SimDuration = .seconds(90)
    public var connectDeadline: SimDuration = .seconds(10)
    public var queryAckRetry: SimDuration = .seconds(5)
    public var rateLimitPerSecond = 5
    public var maxBodyBytes = 131_072
    public var recallWindowMs: Int64 = 120_000
    public var sensitiveWords: [String] = []
    /// user → users they block.
    public var blacklists: [String: [String]] = [:]
    /// user → the only users allowed to message them.
    public var whitelists: [String: [String]] = [:]
    public var persistAcrossCrash = true
    public var registry = MessageTypeRegistry()
    public var chatroom = ChatroomConfig()
    public var bugs: ServerBugs = []

    // Added by IMServer (Docs/server.md §10).
    /// `fromUserId` of server-API system messages (conversation `system:<systemSenderId>`).
    public var systemSenderId = "__system__"
    /// XOR payload obfuscation on every connection (wire-protocol §1.2), both directions.
    public var obfuscatedStreams = false
    /// Largest accepted client frame (all headers included).
    public var maxFrameSize = StreamDecoder.defaultMaxFrameSize
    /// Keep per-conversation cloud history for `qryPMsg` / `qryGMsg` / `qryCHMsg` (stored types only).
    public var cloudHistory = true
    /// The offline-expiry sweep runs at most this often (pulls filter expired entries exactly anyway).
    public var expirySweepInterval: SimDuration = .seconds(60)

    public init() {}
}

public struct ChatroomConfig: Sendable, Hashable {
    public var memberLimit = 0
    public var oneRoomPerUser = true
    public var historySize = 50
    public var quotaWindowMs: Int64 = 200
    public var quotaCapacity = 40
    public var quotaReservedHigh = 20
    public var lowPriorityTypes: [String] = []
    public var whitelistTypes: [String] = []
    public var dropNotifiesSender = false
    public enum KickVariant: String, Sendable, Hashable { case spec, faq }
    public var kickVariant: KickVariant = .spec
    public var offlineKickWindowMs: Int64 = 30_000
    public var offlineKickMessages = 31
    public var autoDestroyAfterMs: Int64 = 3_600_000
    /// The guide's other reading of auto-destroy: members leaving count as activity too (joins
    /// always do). Off by default (im-semantics §6).
    public var autoDestroyCountsLeaving = false
    public var kvMaxKeys = 100
    public var kvOpsPerSecond = 100

    // Added by IMServer (Docs/server.md §10).
    /// Message threshold of the FAQ kick variant (30; the spec variant uses `offlineKickMessages`).
    public var faqOfflineKickMessages = 30
    /// PUBACK status of a quota drop when `dropNotifiesSender` (the spec names none; 20604 = "too frequent").
    public var dropErrorCode: Int32 = 20604
    /// A KV set/delete fails with 23431 when the key was changed by a *different device* less than
    /// this many ms before (1 = the same server millisecond; 0 disables the rule).
    public var kvConflictWindowMs: Int64 = 1
    /// KV limits: key length (characters of `[A-Za-z0-9+=_-]`) and value length (Unicode scalars).
    public var kvMaxKeyLength = 128
    public var kvMaxValueLength = 4096
    public init() {}
}

/// Server-side bug switches (im-semantics §8), all off by default.
public struct ServerBugs: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// No idempotent accept by (sender, clientUniqueId).
    public static let b2 = ServerBugs(rawValue: 1 << 2)
    /// A late reconnect of a stale device kicks the device in active use.
    public static let b12 = ServerBugs(rawValue: 1 << 12)
    /// A member removed by the offline rule is rejoined silently by its SDK's `joinChrmR` (the
    /// protocol hazard: the rejoin pull returns at most 50, older messages are lost unannounced).
    public static let b9 = ServerBugs(rawValue: 1 << 9)
    /// Low-priority chatroom messages may take the reserved high slots.
    public static let b13 = ServerBugs(rawValue: 1 << 13)

    public init(_ switches: [BugSwitch]) {
        self = []
        for s in switches {
            switch s {
            case .B2: insert(.b2)
            case .B9: insert(.b9)
            case .B12: insert(.b12)
            case .B13: insert(.b13)
            default: break
            }
        }
    }
}

/// Who exists: users and their tokens, groups. The world builds it from the scenario.
public struct ServerDirectory: Sendable, Hashable {
    public enum TokenState: String, Sendable, Hashable { case valid, expired, revoked }
    /// token → (userId, state).
    public var tokens: [String: (userId: String, state: TokenState)] {
        get { _tokens.mapValues { ($0.userId, $0.state) } }
        set { _tokens = newValue.mapValues { TokenEntry(userId: $0.userId, state: $0.state) } }
    }
    struct TokenEntry: Sendable, Hashable { var userId: String; var state: TokenState }
    var _tokens: [String: TokenEntry] = [:]
    public var bannedUsers: Set<String> = []
    public var appBlocked = false
    /// groupId → member userIds.
    public var groups: [String: [String]] = [:]
    /// groupId → muted userIds.
    public var groupMutes: [String: Set<String>] = [:]
    /// Chatrooms that exist from the start (created and kept alive).
    public var chatrooms: [String] = []
    public var chatroomWhitelists: [String: [String]] = [:]

    public init() {}

    public mutating func addUser(_ userId: String, token: String, state: TokenState = .valid) {
        _tokens[token] = TokenEntry(userId: userId, state: state)
    }
    /// Signs and checks login tokens (`TokenSigner`); nil: only the fixed tokens above.
    public var signer: TokenSigner?
    /// Users who may log in with a signed token.
    public var accounts: Set<String> = []
}
