import IMWire
import SimKernel

// The contract between the server core and whatever drives it (the simulated world today, a
// SwiftNIO runtime tomorrow). The core is a sans-IO value: inputs in, effects out; it never reads a
// clock, opens a socket or spawns a task. `now` is server time in ms (epoch ms).

/// Server-side timers. The driver schedules them and feeds `.timerFired` back. The two-String
/// cases are boxed, as `ServerAPICall`'s large ones (rare; they made every `ServerInput` large).
public enum ServerTimer: Hashable, Sendable, CustomStringConvertible {
    /// A connection sent nothing for `sessionIdleTimeout`: consider it dead.
    case sessionIdle(ConnectionID)
    /// A QUERYACK with qos 1 was not confirmed (QUERYCON): re-send it.
    case queryAckRetry(ConnectionID, messageId: UInt16)
    /// CONNECT not received in time after accept.
    case connectDeadline(ConnectionID)
    /// Chatroom housekeeping: auto-destroy check.
    case chatroomAutoDestroy(roomId: String)
    /// Offline-inbox expiry sweep.
    case offlineExpiry
    /// A timed ban or mute ends.
    indirect case chatroomBanEnds(roomId: String, userId: String)
    indirect case chatroomMuteEnds(roomId: String, userId: String)

    public var description: String {
        switch self {
        case .sessionIdle(let c): "sessionIdle(\(c))"
        case .queryAckRetry(let c, let m): "queryAckRetry(\(c),#\(m))"
        case .connectDeadline(let c): "connectDeadline(\(c))"
        case .chatroomAutoDestroy(let r): "chatroomAutoDestroy(\(r))"
        case .offlineExpiry: "offlineExpiry"
        case .chatroomBanEnds(let r, let u): "chatroomBanEnds(\(r),\(u))"
        case .chatroomMuteEnds(let r, let u): "chatroomMuteEnds(\(r),\(u))"
        }
    }

    /// The world's timer table is looked up on every timer armed or cancelled; the per-connection
    /// cases, nearly all of them, hash as one word (`WordHash`), the rare room cases by their strings.
    public func _rawHashValue(seed: Int) -> Int {
        switch self {
        case .sessionIdle(let c): WordHash.mix(c.raw << 3 | 1, seed: seed)
        case .queryAckRetry(let c, let m): WordHash.mix((c.raw << 16 | UInt64(m)) << 3 | 2, seed: seed)
        case .connectDeadline(let c): WordHash.mix(c.raw << 3 | 3, seed: seed)
        case .offlineExpiry: WordHash.mix(4, seed: seed)
        case .chatroomAutoDestroy(let r): WordHash.mix(5, seed: r._rawHashValue(seed: seed))
        case .chatroomBanEnds(let r, let u): WordHash.mix(6, seed: r._rawHashValue(seed: seed) ^ u._rawHashValue(seed: ~seed))
        case .chatroomMuteEnds(let r, let u): WordHash.mix(7, seed: r._rawHashValue(seed: seed) ^ u._rawHashValue(seed: ~seed))
        }
    }
}

/// Calls of the server API (RongCloud's REST API), made by scenarios and tests. The cases larger
/// than three words are boxed (`indirect`): inline, they made every `ServerInput` 41 bytes, a size
/// Swift copies through a value witness wherever an input is switched over (rare calls, one
/// allocation each).
public enum ServerAPICall: Hashable, Sendable {
    case createChatroom(roomId: String)
    case destroyChatroom(roomId: String)
    case keepAliveChatroom(roomId: String, enabled: Bool)
    indirect case banChatroomUser(roomId: String, userId: String, durationMs: Int64)
    indirect case muteChatroomUser(roomId: String, userId: String, durationMs: Int64)
    case setChatroomUserWhitelist(roomId: String, userIds: [String])
    /// The app's chatroom message whitelist (replaces it): messages of these types are never
    /// dropped by a room's quota (im-semantics §6). Starts as `config.chatroom.whitelistTypes`.
    case setChatroomMessageWhitelist(objectNames: [String])
    indirect case muteGroupUser(groupId: String, userId: String, muted: Bool)
    case addGroupMembers(groupId: String, userIds: [String])
    case removeGroupMembers(groupId: String, userIds: [String])
    case blockUser(userId: String, blocked: Bool)
    /// A system-conversation message to one user (users cannot reply).
    indirect case sendSystemMessage(toUserId: String, objectName: String, content: [UInt8])
    /// A system message to every user.
    case broadcast(objectName: String, content: [UInt8])
}

/// What happened to the transport.
public enum ServerInput: Sendable {
    /// A client connected (TCP accepted); CONNECT is expected next.
    case connectionAccepted(ConnectionID)
    /// Bytes from a connection (stream framing; any split).
    case bytes(ConnectionID, [UInt8])
    /// The connection is gone (the peer closed, reset, or it died).
    case connectionClosed(ConnectionID, TransportCloseReason)
    case timerFired(ServerTimer)
    case api(ServerAPICall)
}

/// A compact description of an outgoing frame, so drivers can trace without re-decoding bytes.
public struct FrameSummary: Hashable, Sendable, CustomStringConvertible {
    public var type: FrameType
    public var messageId: UInt16
    public var dup: Bool
    /// Topic of PUBLISH/QUERY (interned by the trace writer), empty otherwise.
    public var topic: String
    public init(type: FrameType, messageId: UInt16 = 0, dup: Bool = false, topic: String = "") {
        self.type = type
        self.messageId = messageId
        self.dup = dup
        self.topic = topic
    }
    public var description: String {
        var s = "\(type)"
        if !topic.isEmpty { s += " \(topic)" }
        if messageId != 0 { s += " #\(messageId)" }
        if dup { s += " dup" }
        return s
    }
}

public enum ServerEffect: Sendable, Hashable {
    /// Write bytes (stream framing) to a connection; `frames` describes what they contain.
    case send(ConnectionID, [UInt8], frames: [FrameSummary])
    /// Close a connection (after sending anything queued before it).
    case close(ConnectionID)
    case setTimer(ServerTimer, after: SimDuration)
    case cancelTimer(ServerTimer)
    /// A fact for traces, oracles and the ledger (never affects the server itself).
    case event(ServerEvent)
}
