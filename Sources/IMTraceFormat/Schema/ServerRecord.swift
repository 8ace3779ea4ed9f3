import IMServer
import IMWire
import SimKernel

/// An input fed to the server core (`ServerInput`). Kinds 80–83 and 160–172 (API calls).
public enum ServerInputRecord: Hashable, Sendable {
    case connectionAccepted(ConnectionID)
    case bytes(ConnectionID, TraceBytes)
    case connectionClosed(ConnectionID, TransportCloseReason)
    case timerFired(ServerTimer)
    // Server API calls (RongCloud REST API)
    case createChatroom(roomId: String)
    case destroyChatroom(roomId: String)
    case keepAliveChatroom(roomId: String, enabled: Bool)
    case banChatroomUser(roomId: String, userId: String, durationMs: Int64)
    case muteChatroomUser(roomId: String, userId: String, durationMs: Int64)
    case setChatroomUserWhitelist(roomId: String, userIds: [String])
    case muteGroupUser(groupId: String, userId: String, muted: Bool)
    case addGroupMembers(groupId: String, userIds: [String])
    case removeGroupMembers(groupId: String, userIds: [String])
    case blockUser(userId: String, blocked: Bool)
    case sendSystemMessage(toUserId: String, objectName: String, content: TraceContent)
    case broadcast(objectName: String, content: TraceContent)
    case setChatroomMessageWhitelist(objectNames: [String])

    public var kind: UInt16 { inputKind.rawValue }

    public var inputKind: ServerInput.TraceKind {
        switch self {
        case .connectionAccepted: .connectionAccepted
        case .bytes: .bytes
        case .connectionClosed: .connectionClosed
        case .timerFired: .timerFired
        case .createChatroom: .createChatroom
        case .destroyChatroom: .destroyChatroom
        case .keepAliveChatroom: .keepAliveChatroom
        case .banChatroomUser: .banChatroomUser
        case .muteChatroomUser: .muteChatroomUser
        case .setChatroomUserWhitelist: .setChatroomUserWhitelist
        case .muteGroupUser: .muteGroupUser
        case .addGroupMembers: .addGroupMembers
        case .removeGroupMembers: .removeGroupMembers
        case .blockUser: .blockUser
        case .sendSystemMessage: .sendSystemMessage
        case .broadcast: .broadcast
        case .setChatroomMessageWhitelist: .setChatroomMessageWhitelist
        }
    }

    public var isAPICall: Bool { inputKind.isAPICall }

    /// `bytes`' fields (the recorder writes them without building the record).
    @inline(__always) static func encodeBytes(_ c: ConnectionID, _ b: TraceBytes, into e: inout RecordEncoder) {
        e.connection(c.raw); e.payload(b)
    }

    public init(_ input: ServerInput, keepContent keep: Bool) {
        switch input {
        case .connectionAccepted(let c): self = .connectionAccepted(c)
        case .bytes(let c, let b): self = .bytes(c, .of(b, keep: keep))
        case .connectionClosed(let c, let r): self = .connectionClosed(c, r)
        case .timerFired(let t): self = .timerFired(t)
        case .api(let call):
            func text(_ b: [UInt8]) -> TraceContent {
                keep ? .text(String(decoding: b, as: UTF8.self)) : .digest(length: b.count, hash: TraceContent.hash32(b))
            }
            switch call {
            case .createChatroom(let r): self = .createChatroom(roomId: r)
            case .destroyChatroom(let r): self = .destroyChatroom(roomId: r)
            case .keepAliveChatroom(let r, let e): self = .keepAliveChatroom(roomId: r, enabled: e)
            case .banChatroomUser(let r, let u, let d): self = .banChatroomUser(roomId: r, userId: u, durationMs: d)
            case .muteChatroomUser(let r, let u, let d): self = .muteChatroomUser(roomId: r, userId: u, durationMs: d)
            case .setChatroomUserWhitelist(let r, let u): self = .setChatroomUserWhitelist(roomId: r, userIds: u)
            case .muteGroupUser(let g, let u, let m): self = .muteGroupUser(groupId: g, userId: u, muted: m)
            case .addGroupMembers(let g, let u): self = .addGroupMembers(groupId: g, userIds: u)
            case .removeGroupMembers(let g, let u): self = .removeGroupMembers(groupId: g, userIds: u)
            case .blockUser(let u, let b): self = .blockUser(userId: u, blocked: b)
            case .sendSystemMessage(let u, let t, let c): self = .sendSystemMessage(toUserId: u, objectName: t, content: text(c))
            case .broadcast(let t, let c): self = .broadcast(objectName: t, content: text(c))
            case .setChatroomMessageWhitelist(let t): self = .setChatroomMessageWhitelist(objectNames: t)
            }
        }
    }

    func encode(into e: inout RecordEncoder) {
        switch self {
        case .connectionAccepted(let c): e.connection(c.raw)
        case .bytes(let c, let b): Self.encodeBytes(c, b, into: &e)
        case .connectionClosed(let c, let r): e.connection(c.raw); e.string(r.rawValue)
        case .timerFired(let t): e.serverTimer(t)
        case .createChatroom(let r), .destroyChatroom(let r): e.string(r)
        case .keepAliveChatroom(let r, let en): e.string(r); e.bool(en)
        case .banChatroomUser(let r, let u, let d), .muteChatroomUser(let r, let u, let d): e.string(r); e.string(u); e.varint(d)
        case .setChatroomUserWhitelist(let r, let u): e.string(r); e.strings(u)
        case .muteGroupUser(let g, let u, let m): e.string(g); e.string(u); e.bool(m)
        case .addGroupMembers(let g, let u), .removeGroupMembers(let g, let u): e.string(g); e.strings(u)
        case .blockUser(let u, let b): e.string(u); e.bool(b)
        case .sendSystemMessage(let u, let t, let c): e.string(u); e.string(t); e.content(c)
        case .broadcast(let t, let c): e.string(t); e.content(c)
        case .setChatroomMessageWhitelist(let t): e.strings(t)
        }
    }

    static func decode(kind: ServerInput.TraceKind, _ d: inout RecordDecoder) throws(RecordDecodeError) -> ServerInputRecord {
        switch kind {
        case .connectionAccepted: return .connectionAccepted(try d.connection())
        case .bytes: return .bytes(try d.connection(), try d.payload())
        case .connectionClosed: return .connectionClosed(try d.connection(), try d.rawEnum(TransportCloseReason.self, "close reason"))
        case .timerFired: return .timerFired(try d.serverTimer())
        case .createChatroom: return .createChatroom(roomId: try d.string())
        case .destroyChatroom: return .destroyChatroom(roomId: try d.string())
        case .keepAliveChatroom: return .keepAliveChatroom(roomId: try d.string(), enabled: try d.bool())
        case .banChatroomUser: return .banChatroomUser(roomId: try d.string(), userId: try d.string(), durationMs: try d.varint())
        case .muteChatroomUser: return .muteChatroomUser(roomId: try d.string(), userId: try d.string(), durationMs: try d.varint())
        case .setChatroomUserWhitelist: return .setChatroomUserWhitelist(roomId: try d.string(), userIds: try d.strings())
        case .muteGroupUser: return .muteGroupUser(groupId: try d.string(), userId: try d.string(), muted: try d.bool())
        case .addGroupMembers: return .addGroupMembers(groupId: try d.string(), userIds: try d.strings())
        case .removeGroupMembers: return .removeGroupMembers(groupId: try d.string(), userIds: try d.strings())
        case .blockUser: return .blockUser(userId: try d.string(), blocked: try d.bool())
        case .sendSystemMessage: return .sendSystemMessage(toUserId: try d.string(), objectName: try d.string(), content: try d.content())
        case .broadcast: return .broadcast(objectName: try d.string(), content: try d.content())
        case .setChatroomMessageWhitelist: return .setChatroomMessageWhitelist(objectNames: try d.strings())
        }
    }
}

/// An effect the server core returned, except events (`ServerEffect`). Kinds 84–87.
public enum ServerEffectRecord: Hashable, Sendable {
    case send(ConnectionID, TraceBytes, frames: [FrameSummary])
    case close(ConnectionID)
    case setTimer(ServerTimer, after: SimDuration)
    case cancelTimer(ServerTimer)

    public var kind: UInt16 { effectKind.rawValue }

    public var effectKind: ServerEffect.TraceKind {
        switch self {
        case .send: .send
        case .close: .close
        case .setTimer: .setTimer
        case .cancelTimer: .cancelTimer
        }
    }

    func encode(into e: inout RecordEncoder) {
        switch self {
        case .send(let c, let b, let f): Self.encodeSend(c, b, f, into: &e)
        case .close(let c): e.connection(c.raw)
        case .setTimer(let t, let after): Self.encodeSetTimer(t, after, into: &e)
        case .cancelTimer(let t): e.serverTimer(t)
        }
    }

    /// The record kind the recorder writes `effect` as when it writes it straight from the
    /// effect (`encodeDirect`): sends, timers, fan-outs and pulls; 0 for the rest.
    static func directKind(of effect: ServerEffect) -> UInt16 {
        switch effect {
        case .send: ServerEffect.TraceKind.send.rawValue
        case .setTimer: ServerEffect.TraceKind.setTimer.rawValue
        case .cancelTimer: ServerEffect.TraceKind.cancelTimer.rawValue
        case .event(.fannedOut): ServerEvent.TraceKind.fannedOut.rawValue
        case .event(.pulled): ServerEvent.TraceKind.pulled.rawValue
        case .close, .event: 0
        }
    }

    /// The body of a `directKind` effect, as its record type writes it (RecorderTests).
    static func encodeDirect(_ effect: ServerEffect, keepContent keep: Bool, epoch: Int64, into e: inout RecordEncoder) {
        switch effect {
        case .send(let c, let bytes, let frames): encodeSend(c, .of(bytes, keep: keep), frames, into: &e)
        case .setTimer(let t, let after): encodeSetTimer(t, after, into: &e)
        case .cancelTimer(let t): e.serverTimer(t)
        case .event(.fannedOut(let uid, let u, let dev, let c, let via)): ServerEventRecord.encodeFannedOut(uid, u, dev, c, via, into: &e)
        case .event(.pulled(let c, let u, let dev, let t, let uids, let st, let f)):
            ServerEventRecord.encodePulled(c, u, dev, t, uids, st, f, into: &e, epoch: epoch)
        case .close, .event: preconditionFailure("not a direct kind")
        }
    }

    // The fields of the frequent records, shared with the recorder's direct path.
    @inline(__always) static func encodeSend(_ c: ConnectionID, _ b: TraceBytes, _ f: [FrameSummary], into e: inout RecordEncoder) {
        e.connection(c.raw); e.payload(b); e.serverFrames(f)
    }
    @inline(__always) static func encodeSetTimer(_ t: ServerTimer, _ after: SimDuration, into e: inout RecordEncoder) {
        e.serverTimer(t); e.duration(after)
    }

    static func decode(kind: ServerEffect.TraceKind, _ d: inout RecordDecoder) throws(RecordDecodeError) -> ServerEffectRecord {
        switch kind {
        case .send: return .send(try d.connection(), try d.payload(), frames: try d.serverFrames())
        case .close: return .close(try d.connection())
        case .setTimer: return .setTimer(try d.serverTimer(), after: try d.duration())
        case .cancelTimer: return .cancelTimer(try d.serverTimer())
        }
    }
}
