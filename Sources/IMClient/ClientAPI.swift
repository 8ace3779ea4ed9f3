import IMStore
import IMWire
import SimKernel

// The contract between the client SDK core and whatever drives it (the simulated world today, a
// SwiftNIO runtime tomorrow). The core is a sans-IO value: `handle(input, now:)` returns effects;
// it never reads a clock, opens a socket or spawns a task. The store is the one thing it touches
// directly (SQLite is synchronous and part of the real component).

/// Device wall-clock time in ms (what the SDK would read from the OS clock).
public struct DeviceTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    public static func < (a: Self, b: Self) -> Bool { a.milliseconds < b.milliseconds }
    public var description: String { "\(milliseconds)ms" }
}

/// Who this SDK instance is.
public struct DeviceIdentity: Hashable, Sendable {
    public var userId: String
    public var deviceId: String
    public var platform: Platform
    public var appKey: String
    public init(userId: String, deviceId: String, platform: Platform, appKey: String = "imsim-app") {
        self.userId = userId
        self.deviceId = deviceId
        self.platform = platform
        self.appKey = appKey
    }
}

/// Client-side timers. The driver schedules them on the device's monotonic clock.
public enum ClientTimer: Hashable, Sendable, CustomStringConvertible {
    case connackTimeout
    case heartbeat
    case pingTimeout
    case reconnect
    case backgroundClose
    case connectTimeLimit
    /// A request (PUBLISH qos 1 or QUERY) got no reply in 30 s.
    case requestTimeout(messageId: UInt16)
    case poll
    /// Store writes a storage fault left undone are tried again (`ClientCore+StoreRetry`).
    case storeRetry
    public var description: String {
        switch self {
        case .connackTimeout: "connackTimeout"
        case .heartbeat: "heartbeat"
        case .pingTimeout: "pingTimeout"
        case .reconnect: "reconnect"
        case .backgroundClose: "backgroundClose"
        case .connectTimeLimit: "connectTimeLimit"
        case .requestTimeout(let m): "requestTimeout(#\(m))"
        case .poll: "poll"
        case .storeRetry: "storeRetry"
        }
    }

    /// The world's timer table is looked up on every timer armed or cancelled (`WordHash`).
    public func _rawHashValue(seed: Int) -> Int {
        let word: UInt64 = switch self {
        case .connackTimeout: 1 << 32
        case .heartbeat: 2 << 32
        case .pingTimeout: 3 << 32
        case .reconnect: 4 << 32
        case .backgroundClose: 5 << 32
        case .connectTimeLimit: 6 << 32
        case .requestTimeout(let m): 7 << 32 | UInt64(m)
        case .poll: 8 << 32
        case .storeRetry: 9 << 32
        }
        return WordHash.mix(word, seed: seed)
    }
}

/// The SDK's public API, as calls. The cases larger than three words are boxed (`indirect`, here
/// and in `AppCallback` and `ClientNote`): an enum this size (inputs and effects were 58–74 bytes)
/// is copied whole through a value witness (~130 instructions) wherever it is switched over
/// outside its module; boxed, a copy is a retain.
public enum ClientAPICall: Hashable, Sendable {
    case connect(token: String, timeLimitSeconds: Int32)
    /// Disconnect, keep push; ends reconnection.
    case disconnect
    /// Log out, no push; ends reconnection.
    case logout
    /// Insert the row (SENDING) and send. `content` is the JSON body. The row is returned at once
    /// through `.messageInserted`.
    indirect case send(conversation: ConversationKey, objectName: String, content: String, pushText: String?, mentioned: Bool)
    case resend(messageId: Int64)
    case recall(messageId: Int64)
    /// Private read receipt (RC:ReadNtf) with the sentTime of the last message read.
    indirect case sendReadReceipt(conversation: ConversationKey, lastMessageSentTime: Int64)
    /// Clear unread up to a sentTime (and sync it to the user's other devices).
    indirect case clearUnread(conversation: ConversationKey, upToSentTime: Int64)
    case joinChatroom(roomId: String, messageCount: Int32)
    case joinExistChatroom(roomId: String, messageCount: Int32)
    case quitChatroom(roomId: String)
    indirect case setChatroomKV(roomId: String, key: String, value: String, autoDelete: Bool, force: Bool)
    indirect case removeChatroomKV(roomId: String, key: String, force: Bool)
    case getChatroomKV(roomId: String)
    /// Local history page (messageId cursor, -1 = newest, ≤ 20).
    indirect case getHistory(conversation: ConversationKey, beforeMessageId: Int64, count: Int32)
    /// Cloud history (qryPMsg/qryGMsg/qryCHMsg): the newest `count` (1…200) messages sent before
    /// `beforeTime` (server ms; 0 = now), HistoryMsgInput order 0.
    indirect case getRemoteHistory(conversation: ConversationKey, beforeTime: Int64, count: Int32)
    /// Cloud history the other way: the oldest `count` (1…200) messages sent after `afterTime`
    /// (server ms), HistoryMsgInput order 1 (im-semantics §6: "before/after a ms timestamp").
    indirect case getRemoteHistoryAfter(conversation: ConversationKey, afterTime: Int64, count: Int32)
}

public enum TransportEvent: Hashable, Sendable {
    case opened
    case bytes([UInt8])
    case closed(TransportCloseReason)
}

public enum AppLifecycle: Hashable, Sendable {
    case foreground
    case background
}

public enum ClientInput: Sendable {
    case api(ClientAPICall)
    case transport(TransportEvent)
    case timerFired(ClientTimer)
    case lifecycle(AppLifecycle)
    case networkChanged(available: Bool)
}

/// A compact description of an outgoing frame, so drivers can trace without re-decoding bytes.
public struct OutgoingFrame: Hashable, Sendable, CustomStringConvertible {
    public var type: FrameType
    public var messageId: UInt16
    public var topic: String
    public init(type: FrameType, messageId: UInt16 = 0, topic: String = "") {
        self.type = type
        self.messageId = messageId
        self.topic = topic
    }
    public var description: String {
        var s = "\(type)"
        if !topic.isEmpty { s += " \(topic)" }
        if messageId != 0 { s += " #\(messageId)" }
        return s
    }
}

public enum ClientEffect: Sendable {
    /// Open a new transport connection to the server (the previous one, if any, is already closed).
    case openConnection
    /// Write bytes (stream framing) on the current connection.
    case send([UInt8], frames: [OutgoingFrame])
    /// Close the current connection.
    case closeConnection
    /// (Re)arm a timer; replaces any pending timer with the same id.
    case setTimer(ClientTimer, after: SimDuration)
    case cancelTimer(ClientTimer)
    /// A callback to the app: the ledger of what the user saw.
    case callback(AppCallback)
    /// A fact for traces and oracles (state transitions, store changes, drops, cursor moves).
    case note(ClientNote)
}

public enum AppCallback: Sendable {
    case connectionStatus(ConnectionStatus)
    case dbOpened(code: Int32)
    case connected(userId: String)
    case connectError(code: Int32)
    // The message-bearing cases are boxed: a `StoredMessage` inline made every callback, and
    // every effect, 178 bytes, copied whole wherever an effect list is read. So are the other
    // cases larger than three words (see `ClientAPICall`).
    /// The row `send` inserted (status SENDING), returned at once.
    indirect case messageInserted(StoredMessage)
    /// success (`error == nil`, messageUId + server sentTime) or error(code, messageId).
    indirect case sendResult(messageId: Int64, messageUId: String?, sentTime: Int64, error: Int32?)
    indirect case received(StoredMessage, left: Int, offline: Bool, hasPackage: Bool)
    indirect case recalled(messageId: Int64, conversation: ConversationKey)
    /// The sender's result of `recall(messageId:)` (added by IMClient: the recipient side is
    /// `recalled`). On success the row now holds the RC:RcNtf notification.
    case recallResult(messageId: Int64, error: Int32?)
    indirect case readReceipt(conversation: ConversationKey, lastMessageSentTime: Int64)
    /// Unread cleared by this user's other device (RC:SRSMsg).
    indirect case syncReadStatus(conversation: ConversationKey, upToSentTime: Int64)
    case chatroomJoined(roomId: String)
    case chatroomJoinFailed(roomId: String, code: Int32)
    case chatroomQuit(roomId: String)
    case chatroomKicked(roomId: String)
    case chatroomDestroyed(roomId: String)
    case chatroomKVSynced(roomId: String)
    case chatroomKVUpdated(roomId: String, entries: [ChatroomKVEntry])
    case chatroomKVRemoved(roomId: String, keys: [String])
    indirect case chatroomKVResult(roomId: String, key: String, error: Int32?)
    indirect case chatroomKV(roomId: String, entries: [ChatroomKVEntry], error: Int32?)
    indirect case history(conversation: ConversationKey, messages: [StoredMessage])
    indirect case remoteHistory(conversation: ConversationKey, messages: [StoredMessage], error: Int32?)
}

/// Facts for traces and oracles; never read back by the core. Cases larger than three words are
/// boxed (see `ClientAPICall`).
public enum ClientNote: Sendable {
    /// Connection state machine transition (one line in the short log).
    indirect case state(from: String, to: String, reason: String)
    /// A received message was written to the store (`isNew` false = dedup hit or update).
    indirect case stored(messageId: Int64, messageUId: String?, conversation: ConversationKey, sentTime: Int64,
                direction: MessageDirection, isNew: Bool)
    /// A received message was not stored or notified, and why (e.g. "s_msg during pull",
    /// "dataTime ≤ inbox cursor", "older than room cursor", "status").
    indirect case skipped(messageUId: String?, conversation: ConversationKey, reason: String)
    case cursor(name: String, value: Int64)
    /// The next reconnect attempt is scheduled after `delay` (index in the schedule).
    case reconnectScheduled(attempt: Int, delay: SimDuration)
    /// A request timed out.
    case requestTimedOut(messageId: UInt16, what: String)
    /// Chatroom membership as the client sees it.
    case chatroomState(roomId: String, joined: Bool)
    /// A store change other than storing a received message (added by IMClient): send status,
    /// recall, read state, chatroom quit. `what` is one readable line.
    indirect case changed(conversation: ConversationKey?, messageIds: [Int64], what: String)
    /// Inbox sync machine transition (added by IMClient).
    indirect case syncState(from: SyncState, to: SyncState, reason: String)
    /// A store operation failed (the core goes on; a real SDK would report 33002).
    indirect case storeError(operation: String, message: String)
    /// An input the core did not act on, and why (e.g. "connect while connected", a late PUBACK,
    /// an undecodable frame body).
    indirect case ignored(input: String, reason: String)
    /// A body this core built lacks a required field (a bug here): it was sent as built and the
    /// peer will refuse it (`ProtoBody.encodeBuilt`).
    indirect case incompleteBody(IncompleteBody)
}

/// Client SDK knobs. Defaults are the values of im-semantics.md; the world maps the scenario's
/// `client` section onto this.
public struct ClientConfig: Sendable, Hashable {
    public var heartbeatInterval: SimDuration = .seconds(30)
    public var pingTimeout: SimDuration = .seconds(6)
    public var connackTimeout: SimDuration = .seconds(5)
    public var requestTimeout: SimDuration = .seconds(30)
    public var backgroundCloseAfter: SimDuration = .minutes(2)
    /// 0, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64 s, then the last value forever.
    public var reconnectSchedule: [SimDuration] = [
        .zero, .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8),
        .seconds(16), .seconds(32), .seconds(64),
    ]
    /// Periodic inbox pull (the web SDK's 180 s); nil = off.
    public var pollInterval: SimDuration?
    /// A reconnecting device that finds another device of the same platform online gives up (31023).
    public var reconnectKickEnable = false
    /// The web SDK checks the link with one PINGREQ before the first pull.
    public var pingBeforeFirstPull = false
    public var registry = MessageTypeRegistry()
    public var bugs: ClientBugs = []

    // Added by IMClient (Docs/client.md §Knobs).

    /// The store's messageUId dedup on receive. Off (default): the public client has no general
    /// messageUId dedup (im-semantics §4), so B1/B3 duplicates are stored and shown.
    public var messageUIdDedup = false
    /// XOR payload obfuscation of the stream framing (must match the server's setting).
    public var obfuscatedStream = false
    /// Largest frame the decoder accepts.
    public var maxFrameSize = StreamDecoder.defaultMaxFrameSize
    /// The SDK's default is one chatroom at a time: joining another quits the first.
    public var allowMultipleChatrooms = false
    /// `count` of the chrmPull sent for a chatroom `s_ntf` and after a rejoin (the server's cap).
    public var chatroomPullCount: Int32 = 50
    /// Largest `messageCount` of a join; larger values are clamped to it (im-semantics §6).
    public var chatroomJoinMaxCount: Int32 = 50
    /// At every start the clientUniqueId counter is raised to at least the device clock in ms
    /// (mod 2^31). A power loss can take back the counter's last increments (they were not
    /// synced); without a floor that survives it, the next sends reuse clientUniqueIds and the
    /// server's idempotent accept swallows them as repeats (issue 28). Off by default so that
    /// runs on `:memory:` stores keep their clientUniqueIds (and the golden digests); the world
    /// turns it on for `client.store: device`.
    public var clientUniqueIdClockFloor = false
    /// An own message's copy (sendbox pull, echo) that matches no unsent row of this process is
    /// reconciled with the store: an unsent row of an earlier process is completed, a row lost
    /// to a power loss is stored again from the copy (issue 28). Off by default (the golden
    /// digests); the world turns it on for `client.store: device`.
    public var restoreOwnRowsFromCopies = false
    /// The first pull after the store opened, and after a delivery could not be stored, asks
    /// from this many milliseconds below each cursor and keeps a message at or below the cursor
    /// unless its messageUId is already stored (0: off, the public client). A cursor moved by one
    /// delivery says nothing of messages delivered after it: a conversation's dataTime is bumped
    /// past the millisecond when it is busy, so a message accepted later in another conversation
    /// can have an earlier dataTime than the cursor. A power loss or a failed write can take that
    /// one back while keeping the cursor, and a pull after the cursor never returns it (issue 28,
    /// Docs/store.md: quickstart-storage --swarm seed 20 at the cursor's own millisecond,
    /// everyday-storage 1291 one millisecond below it). The window bounds the bump it covers.
    /// Off by default (the golden digests); the world turns it on for `client.store: device`.
    public var repullWindow: Int64 = 0
    /// The window the world gives device stores: a conversation would need a thousand messages
    /// in one millisecond to lead the server's clock by more.
    public static let deviceRepullWindow: Int64 = 1000
    /// While a store write is owed (a storage fault failed it), it is also tried again on a timer
    /// of this period, not only at the next input: a quiet app would otherwise keep it owed past
    /// the fault (and lose it to an app kill). Under 1 s, so that it commits before the world's
    /// first convergence check after the heal.
    public var storeRetryInterval: SimDuration = .milliseconds(500)

    public init() {}
}

/// Client-side bug switches (im-semantics §8), all off by default. Each is a small, named deviation
/// in the real code path; Docs/bugs.md says what each models.
public struct ClientBugs: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let b1 = ClientBugs(rawValue: 1 << 1)
    public static let b3 = ClientBugs(rawValue: 1 << 3)
    public static let b4 = ClientBugs(rawValue: 1 << 4)
    public static let b5 = ClientBugs(rawValue: 1 << 5)
    public static let b6 = ClientBugs(rawValue: 1 << 6)
    public static let b7 = ClientBugs(rawValue: 1 << 7)
    public static let b8 = ClientBugs(rawValue: 1 << 8)
    public static let b10 = ClientBugs(rawValue: 1 << 10)
    public static let b11 = ClientBugs(rawValue: 1 << 11)
    public static let b14 = ClientBugs(rawValue: 1 << 14)
    public static let b15 = ClientBugs(rawValue: 1 << 15)
    public static let b16 = ClientBugs(rawValue: 1 << 16)

    public init(_ switches: [BugSwitch]) {
        self = []
        for s in switches where s.side == .client {
            insert(ClientBugs(rawValue: 1 << UInt32(s.number)))
        }
    }
}
