import IMClient
import IMWire
import SimKernel

/// An input fed to a device's client core (`ClientInput`), or the device clock it saw. Kinds
/// 20–25 and 31 (transport, timer, lifecycle, network, clock), 128–144 (API calls, one kind each).
public enum ClientInputRecord: Hashable, Sendable {
    // API calls
    /// The token is app data: digest unless `--keep-content`.
    case connect(token: TraceContent, timeLimitSeconds: Int32)
    case disconnect
    case logout
    /// Boxed (see `CallbackRecord.messageInserted`).
    indirect case send(conversation: ConversationKey, objectName: String, content: TraceContent, pushText: TraceContent?, mentioned: Bool)
    case resend(messageId: Int64)
    case recall(messageId: Int64)
    case sendReadReceipt(conversation: ConversationKey, lastMessageSentTime: Int64)
    case clearUnread(conversation: ConversationKey, upToSentTime: Int64)
    case joinChatroom(roomId: String, messageCount: Int32)
    case joinExistChatroom(roomId: String, messageCount: Int32)
    case quitChatroom(roomId: String)
    indirect case setChatroomKV(roomId: String, key: String, value: TraceContent, autoDelete: Bool, force: Bool)
    case removeChatroomKV(roomId: String, key: String, force: Bool)
    case getChatroomKV(roomId: String)
    case getHistory(conversation: ConversationKey, beforeMessageId: Int64, count: Int32)
    case getRemoteHistory(conversation: ConversationKey, beforeTime: Int64, count: Int32)
    case getRemoteHistoryAfter(conversation: ConversationKey, afterTime: Int64, count: Int32)
    // Transport, timers, app
    case transportOpened
    case transportBytes(TraceBytes)
    case transportClosed(TransportCloseReason)
    case timerFired(ClientTimer)
    case lifecycle(AppLifecycle)
    case networkChanged(available: Bool)
    /// The device's wall clock now reads `server ms + offsetMs` (written when it changes, before
    /// the input that sees it).
    case wallClock(offsetMs: Int64)

    public var kind: UInt16 { inputKind.rawValue }

    public var inputKind: ClientInput.TraceKind {
        switch self {
        case .connect: .connect
        case .disconnect: .disconnect
        case .logout: .logout
        case .send: .send
        case .resend: .resend
        case .recall: .recall
        case .sendReadReceipt: .sendReadReceipt
        case .clearUnread: .clearUnread
        case .joinChatroom: .joinChatroom
        case .joinExistChatroom: .joinExistChatroom
        case .quitChatroom: .quitChatroom
        case .setChatroomKV: .setChatroomKV
        case .removeChatroomKV: .removeChatroomKV
        case .getChatroomKV: .getChatroomKV
        case .getHistory: .getHistory
        case .getRemoteHistory: .getRemoteHistory
        case .getRemoteHistoryAfter: .getRemoteHistoryAfter
        case .transportOpened: .transportOpened
        case .transportBytes: .transportBytes
        case .transportClosed: .transportClosed
        case .timerFired: .timerFired
        case .lifecycle: .lifecycle
        case .networkChanged: .networkChanged
        case .wallClock: .wallClock
        }
    }

    public var isAPICall: Bool { inputKind.isAPICall }

    public init(_ input: ClientInput, keepContent keep: Bool) {
        switch input {
        case .api(let call): self.init(call, keepContent: keep)
        case .transport(.opened): self = .transportOpened
        case .transport(.bytes(let b)): self = .transportBytes(.of(b, keep: keep))
        case .transport(.closed(let r)): self = .transportClosed(r)
        case .timerFired(let t): self = .timerFired(t)
        case .lifecycle(let l): self = .lifecycle(l)
        case .networkChanged(let a): self = .networkChanged(available: a)
        }
    }

    public init(_ call: ClientAPICall, keepContent keep: Bool) {
        switch call {
        case .connect(let token, let limit): self = .connect(token: .of(token, keep: keep), timeLimitSeconds: limit)
        case .disconnect: self = .disconnect
        case .logout: self = .logout
        case .send(let c, let type, let content, let push, let mentioned):
            self = .send(conversation: c, objectName: type, content: .of(content, keep: keep),
                         pushText: push.map { .of($0, keep: keep) }, mentioned: mentioned)
        case .resend(let id): self = .resend(messageId: id)
        case .recall(let id): self = .recall(messageId: id)
        case .sendReadReceipt(let c, let t): self = .sendReadReceipt(conversation: c, lastMessageSentTime: t)
        case .clearUnread(let c, let t): self = .clearUnread(conversation: c, upToSentTime: t)
        case .joinChatroom(let r, let n): self = .joinChatroom(roomId: r, messageCount: n)
        case .joinExistChatroom(let r, let n): self = .joinExistChatroom(roomId: r, messageCount: n)
        case .quitChatroom(let r): self = .quitChatroom(roomId: r)
        case .setChatroomKV(let r, let k, let v, let a, let f):
            self = .setChatroomKV(roomId: r, key: k, value: .of(v, keep: keep), autoDelete: a, force: f)
        case .removeChatroomKV(let r, let k, let f): self = .removeChatroomKV(roomId: r, key: k, force: f)
        case .getChatroomKV(let r): self = .getChatroomKV(roomId: r)
        case .getHistory(let c, let b, let n): self = .getHistory(conversation: c, beforeMessageId: b, count: n)
        case .getRemoteHistory(let c, let b, let n): self = .getRemoteHistory(conversation: c, beforeTime: b, count: n)
        case .getRemoteHistoryAfter(let c, let a, let n): self = .getRemoteHistoryAfter(conversation: c, afterTime: a, count: n)
        }
    }

    /// `transportBytes`' fields (the recorder writes them without building the record).
    @inline(__always) static func encodeTransportBytes(_ b: TraceBytes, into e: inout RecordEncoder) { e.payload(b) }

    func encode(into e: inout RecordEncoder, epoch: Int64) {
        switch self {
        case .connect(let t, let l): e.content(t); e.int32(l)
        case .disconnect, .logout, .transportOpened: break
        case .send(let c, let type, let content, let push, let m):
            e.conversation(c); e.string(type); e.content(content); e.optionalContent(push); e.bool(m)
        case .resend(let id), .recall(let id): e.varint(id)
        case .sendReadReceipt(let c, let t), .clearUnread(let c, let t): e.conversation(c); e.wallMs(t, epoch: epoch)
        case .joinChatroom(let r, let n), .joinExistChatroom(let r, let n): e.string(r); e.int32(n)
        case .quitChatroom(let r), .getChatroomKV(let r): e.string(r)
        case .setChatroomKV(let r, let k, let v, let a, let f): e.string(r); e.string(k); e.content(v); e.bool(a); e.bool(f)
        case .removeChatroomKV(let r, let k, let f): e.string(r); e.string(k); e.bool(f)
        case .getHistory(let c, let b, let n): e.conversation(c); e.varint(b); e.int32(n)
        case .getRemoteHistory(let c, let b, let n), .getRemoteHistoryAfter(let c, let b, let n):
            e.conversation(c); e.wallMs(b, epoch: epoch); e.int32(n)
        case .transportBytes(let b): Self.encodeTransportBytes(b, into: &e)
        case .transportClosed(let r): e.string(r.rawValue)
        case .timerFired(let t): e.clientTimer(t)
        case .lifecycle(let l): e.bool(l == .foreground)
        case .networkChanged(let a): e.bool(a)
        case .wallClock(let o): e.varint(o)
        }
    }

    static func decode(kind: ClientInput.TraceKind, _ d: inout RecordDecoder, epoch: Int64) throws(RecordDecodeError) -> ClientInputRecord {
        switch kind {
        case .connect: return .connect(token: try d.content(), timeLimitSeconds: try d.int32())
        case .disconnect: return .disconnect
        case .logout: return .logout
        case .send:
            return .send(conversation: try d.conversation(), objectName: try d.string(), content: try d.content(),
                         pushText: try d.optionalContent(), mentioned: try d.bool())
        case .resend: return .resend(messageId: try d.varint())
        case .recall: return .recall(messageId: try d.varint())
        case .sendReadReceipt: return .sendReadReceipt(conversation: try d.conversation(), lastMessageSentTime: try d.wallMs(epoch: epoch))
        case .clearUnread: return .clearUnread(conversation: try d.conversation(), upToSentTime: try d.wallMs(epoch: epoch))
        case .joinChatroom: return .joinChatroom(roomId: try d.string(), messageCount: try d.int32())
        case .joinExistChatroom: return .joinExistChatroom(roomId: try d.string(), messageCount: try d.int32())
        case .quitChatroom: return .quitChatroom(roomId: try d.string())
        case .setChatroomKV:
            return .setChatroomKV(roomId: try d.string(), key: try d.string(), value: try d.content(),
                                  autoDelete: try d.bool(), force: try d.bool())
        case .removeChatroomKV: return .removeChatroomKV(roomId: try d.string(), key: try d.string(), force: try d.bool())
        case .getChatroomKV: return .getChatroomKV(roomId: try d.string())
        case .getHistory: return .getHistory(conversation: try d.conversation(), beforeMessageId: try d.varint(), count: try d.int32())
        case .getRemoteHistory:
            return .getRemoteHistory(conversation: try d.conversation(), beforeTime: try d.wallMs(epoch: epoch), count: try d.int32())
        case .getRemoteHistoryAfter:
            return .getRemoteHistoryAfter(conversation: try d.conversation(), afterTime: try d.wallMs(epoch: epoch), count: try d.int32())
        case .transportOpened: return .transportOpened
        case .transportBytes: return .transportBytes(try d.payload())
        case .transportClosed: return .transportClosed(try d.rawEnum(TransportCloseReason.self, "close reason"))
        case .timerFired: return .timerFired(try d.clientTimer())
        case .lifecycle: return .lifecycle(try d.bool() ? .foreground : .background)
        case .networkChanged: return .networkChanged(available: try d.bool())
        case .wallClock: return .wallClock(offsetMs: try d.varint())
        }
    }
}

/// An effect a device's client core returned, except callbacks and notes (`ClientEffect`).
/// Kinds 26–30.
public enum ClientEffectRecord: Hashable, Sendable {
    /// `connection`: the id the world gives the new connection.
    case openConnection(ConnectionID)
    case send(TraceBytes, frames: [OutgoingFrame])
    case closeConnection
    case setTimer(ClientTimer, after: SimDuration)
    case cancelTimer(ClientTimer)

    public var kind: UInt16 { effectKind.rawValue }

    public var effectKind: ClientEffect.TraceKind {
        switch self {
        case .openConnection: .openConnection
        case .send: .send
        case .closeConnection: .closeConnection
        case .setTimer: .setTimer
        case .cancelTimer: .cancelTimer
        }
    }

    func encode(into e: inout RecordEncoder) {
        switch self {
        case .openConnection(let c): e.connection(c.raw)
        case .send(let b, let frames): Self.encodeSend(b, frames, into: &e)
        case .closeConnection: break
        case .setTimer(let t, let after): Self.encodeSetTimer(t, after, into: &e)
        case .cancelTimer(let t): e.clientTimer(t)
        }
    }

    // The fields of the frequent records, shared with the recorder's direct path.
    @inline(__always) static func encodeSend(_ b: TraceBytes, _ frames: [OutgoingFrame], into e: inout RecordEncoder) {
        e.payload(b); e.clientFrames(frames)
    }
    @inline(__always) static func encodeSetTimer(_ t: ClientTimer, _ after: SimDuration, into e: inout RecordEncoder) {
        e.clientTimer(t); e.duration(after)
    }

    static func decode(kind: ClientEffect.TraceKind, _ d: inout RecordDecoder) throws(RecordDecodeError) -> ClientEffectRecord {
        switch kind {
        case .openConnection: return .openConnection(try d.connection())
        case .send: return .send(try d.payload(), frames: try d.clientFrames())
        case .closeConnection: return .closeConnection
        case .setTimer: return .setTimer(try d.clientTimer(), after: try d.duration())
        case .cancelTimer: return .cancelTimer(try d.clientTimer())
        }
    }
}
