import IMClient
import IMStore
import IMWire
import SimKernel

/// A callback to the app (`AppCallback`): what the user saw. Kinds 40–62 (`AppCallback.TraceKind`).
public enum CallbackRecord: Hashable, Sendable {
    case connectionStatus(ConnectionStatus)
    case dbOpened(code: Int32)
    case connected(userId: String)
    case connectError(code: Int32)
    // Message-bearing cases are boxed: a TraceMessage inline would make every TraceEvent (and
    // every copy of one) ~200 bytes; these cases are a few percent of the records.
    indirect case messageInserted(TraceMessage)
    case sendResult(messageId: Int64, messageUId: String?, sentTime: Int64, error: Int32?)
    indirect case received(TraceMessage, left: Int, offline: Bool, hasPackage: Bool)
    case recalled(messageId: Int64, conversation: ConversationKey)
    case readReceipt(conversation: ConversationKey, lastMessageSentTime: Int64)
    case syncReadStatus(conversation: ConversationKey, upToSentTime: Int64)
    case chatroomJoined(roomId: String)
    case chatroomJoinFailed(roomId: String, code: Int32)
    case chatroomQuit(roomId: String)
    case chatroomKicked(roomId: String)
    case chatroomDestroyed(roomId: String)
    case chatroomKVSynced(roomId: String)
    case chatroomKVUpdated(roomId: String, entries: [TraceKVEntry])
    case chatroomKVRemoved(roomId: String, keys: [String])
    case chatroomKVResult(roomId: String, key: String, error: Int32?)
    case chatroomKV(roomId: String, entries: [TraceKVEntry], error: Int32?)
    case history(conversation: ConversationKey, messages: [TraceMessage])
    case remoteHistory(conversation: ConversationKey, messages: [TraceMessage], error: Int32?)
    case recallResult(messageId: Int64, error: Int32?)

    public var kind: UInt16 { callbackKind.rawValue }

    public var callbackKind: AppCallback.TraceKind {
        switch self {
        case .connectionStatus: .connectionStatus
        case .dbOpened: .dbOpened
        case .connected: .connected
        case .connectError: .connectError
        case .messageInserted: .messageInserted
        case .sendResult: .sendResult
        case .received: .received
        case .recalled: .recalled
        case .readReceipt: .readReceipt
        case .syncReadStatus: .syncReadStatus
        case .chatroomJoined: .chatroomJoined
        case .chatroomJoinFailed: .chatroomJoinFailed
        case .chatroomQuit: .chatroomQuit
        case .chatroomKicked: .chatroomKicked
        case .chatroomDestroyed: .chatroomDestroyed
        case .chatroomKVSynced: .chatroomKVSynced
        case .chatroomKVUpdated: .chatroomKVUpdated
        case .chatroomKVRemoved: .chatroomKVRemoved
        case .chatroomKVResult: .chatroomKVResult
        case .chatroomKV: .chatroomKV
        case .history: .history
        case .remoteHistory: .remoteHistory
        case .recallResult: .recallResult
        }
    }

    public init(_ cb: AppCallback, keepContent keep: Bool) {
        func msgs(_ l: [StoredMessage]) -> [TraceMessage] { l.map { TraceMessage($0, keepContent: keep) } }
        func kv(_ l: [ChatroomKVEntry]) -> [TraceKVEntry] { l.map { TraceKVEntry($0, keepContent: keep) } }
        switch cb {
        case .connectionStatus(let s): self = .connectionStatus(s)
        case .dbOpened(let c): self = .dbOpened(code: c)
        case .connected(let u): self = .connected(userId: u)
        case .connectError(let c): self = .connectError(code: c)
        case .messageInserted(let m): self = .messageInserted(TraceMessage(m, keepContent: keep))
        case .sendResult(let id, let uid, let t, let err): self = .sendResult(messageId: id, messageUId: uid, sentTime: t, error: err)
        case .received(let m, let left, let off, let pkg):
            self = .received(TraceMessage(m, keepContent: keep), left: left, offline: off, hasPackage: pkg)
        case .recalled(let id, let c): self = .recalled(messageId: id, conversation: c)
        case .readReceipt(let c, let t): self = .readReceipt(conversation: c, lastMessageSentTime: t)
        case .syncReadStatus(let c, let t): self = .syncReadStatus(conversation: c, upToSentTime: t)
        case .chatroomJoined(let r): self = .chatroomJoined(roomId: r)
        case .chatroomJoinFailed(let r, let c): self = .chatroomJoinFailed(roomId: r, code: c)
        case .chatroomQuit(let r): self = .chatroomQuit(roomId: r)
        case .chatroomKicked(let r): self = .chatroomKicked(roomId: r)
        case .chatroomDestroyed(let r): self = .chatroomDestroyed(roomId: r)
        case .chatroomKVSynced(let r): self = .chatroomKVSynced(roomId: r)
        case .chatroomKVUpdated(let r, let e): self = .chatroomKVUpdated(roomId: r, entries: kv(e))
        case .chatroomKVRemoved(let r, let k): self = .chatroomKVRemoved(roomId: r, keys: k)
        case .chatroomKVResult(let r, let k, let err): self = .chatroomKVResult(roomId: r, key: k, error: err)
        case .chatroomKV(let r, let e, let err): self = .chatroomKV(roomId: r, entries: kv(e), error: err)
        case .history(let c, let m): self = .history(conversation: c, messages: msgs(m))
        case .remoteHistory(let c, let m, let err): self = .remoteHistory(conversation: c, messages: msgs(m), error: err)
        case .recallResult(let id, let err): self = .recallResult(messageId: id, error: err)
        }
    }

    /// The body of `CallbackRecord(cb, keepContent:)` written straight from the callback (the
    /// recorder's hot path: the frequent kinds build no record and copy no store row; the rest
    /// go through the record type). Same bytes (RecorderTests).
    static func encode(_ cb: AppCallback, keepContent: Bool, epoch: Int64, into e: inout RecordEncoder) {
        switch cb {
        case .received(let m, let left, let off, let pkg):
            e.message(m, keepContent: keepContent, epoch: epoch)
            encodeReceivedTail(left: left, offline: off, hasPackage: pkg, into: &e)
        case .connectionStatus(let s): e.int32(s.rawValue)
        case .dbOpened(let c), .connectError(let c): e.int32(c)
        case .connected(let u): e.string(u)
        case .sendResult(let id, let uid, let t, let err):
            e.varint(id); e.optionalUID(uid); e.wallMs(t, epoch: epoch); e.optionalCode(err)
        case .recallResult(let id, let err): e.varint(id); e.optionalCode(err)
        case .chatroomJoined(let r), .chatroomQuit(let r), .chatroomKicked(let r), .chatroomDestroyed(let r),
             .chatroomKVSynced(let r):
            e.string(r)
        case .chatroomJoinFailed(let r, let c): e.string(r); e.int32(c)
        default: CallbackRecord(cb, keepContent: keepContent).encode(into: &e, epoch: epoch)
        }
    }

    static func encodeReceivedTail(left: Int, offline: Bool, hasPackage: Bool, into e: inout RecordEncoder) {
        e.varint(Int64(left)); e.uvarint(UInt64((offline ? 1 : 0) | (hasPackage ? 2 : 0)))
    }

    func encode(into e: inout RecordEncoder, epoch: Int64) {
        switch self {
        case .connectionStatus(let s): e.int32(s.rawValue)
        case .dbOpened(let c), .connectError(let c): e.int32(c)
        case .connected(let u): e.string(u)
        case .messageInserted(let m): e.message(m, epoch: epoch)
        case .sendResult(let id, let uid, let t, let err):
            e.varint(id); e.optionalUID(uid); e.wallMs(t, epoch: epoch); e.optionalCode(err)
        case .received(let m, let left, let off, let pkg):
            e.message(m, epoch: epoch); Self.encodeReceivedTail(left: left, offline: off, hasPackage: pkg, into: &e)
        case .recalled(let id, let c): e.varint(id); e.conversation(c)
        case .readReceipt(let c, let t), .syncReadStatus(let c, let t): e.conversation(c); e.wallMs(t, epoch: epoch)
        case .chatroomJoined(let r), .chatroomQuit(let r), .chatroomKicked(let r), .chatroomDestroyed(let r),
             .chatroomKVSynced(let r):
            e.string(r)
        case .chatroomJoinFailed(let r, let c): e.string(r); e.int32(c)
        case .chatroomKVUpdated(let r, let l): e.string(r); e.kvEntries(l, epoch: epoch)
        case .chatroomKVRemoved(let r, let k): e.string(r); e.strings(k)
        case .chatroomKVResult(let r, let k, let err): e.string(r); e.string(k); e.optionalCode(err)
        case .chatroomKV(let r, let l, let err): e.string(r); e.kvEntries(l, epoch: epoch); e.optionalCode(err)
        case .history(let c, let m): e.conversation(c); e.messages(m, epoch: epoch)
        case .remoteHistory(let c, let m, let err): e.conversation(c); e.messages(m, epoch: epoch); e.optionalCode(err)
        case .recallResult(let id, let err): e.varint(id); e.optionalCode(err)
        }
    }

    static func decode(kind: AppCallback.TraceKind, _ d: inout RecordDecoder, epoch: Int64) throws(RecordDecodeError) -> CallbackRecord {
        switch kind {
        case .connectionStatus: return .connectionStatus(try d.intEnum(ConnectionStatus.self, "connection status"))
        case .dbOpened: return .dbOpened(code: try d.int32())
        case .connected: return .connected(userId: try d.string())
        case .connectError: return .connectError(code: try d.int32())
        case .messageInserted: return .messageInserted(try d.message(epoch: epoch))
        case .sendResult:
            return .sendResult(messageId: try d.varint(), messageUId: try d.optionalUID(),
                               sentTime: try d.wallMs(epoch: epoch), error: try d.optionalCode())
        case .received:
            let m = try d.message(epoch: epoch)
            let left = try d.int()
            let at = d.offset
            let bits = try d.uvarint()
            guard bits < 4 else { throw d.invalid(at, "received flags", "\(bits)") }
            return .received(m, left: left, offline: bits & 1 != 0, hasPackage: bits & 2 != 0)
        case .recalled: return .recalled(messageId: try d.varint(), conversation: try d.conversation())
        case .readReceipt: return .readReceipt(conversation: try d.conversation(), lastMessageSentTime: try d.wallMs(epoch: epoch))
        case .syncReadStatus: return .syncReadStatus(conversation: try d.conversation(), upToSentTime: try d.wallMs(epoch: epoch))
        case .chatroomJoined: return .chatroomJoined(roomId: try d.string())
        case .chatroomJoinFailed: return .chatroomJoinFailed(roomId: try d.string(), code: try d.int32())
        case .chatroomQuit: return .chatroomQuit(roomId: try d.string())
        case .chatroomKicked: return .chatroomKicked(roomId: try d.string())
        case .chatroomDestroyed: return .chatroomDestroyed(roomId: try d.string())
        case .chatroomKVSynced: return .chatroomKVSynced(roomId: try d.string())
        case .chatroomKVUpdated: return .chatroomKVUpdated(roomId: try d.string(), entries: try d.kvEntries(epoch: epoch))
        case .chatroomKVRemoved: return .chatroomKVRemoved(roomId: try d.string(), keys: try d.strings())
        case .chatroomKVResult: return .chatroomKVResult(roomId: try d.string(), key: try d.string(), error: try d.optionalCode())
        case .chatroomKV: return .chatroomKV(roomId: try d.string(), entries: try d.kvEntries(epoch: epoch), error: try d.optionalCode())
        case .history: return .history(conversation: try d.conversation(), messages: try d.messages(epoch: epoch))
        case .remoteHistory:
            return .remoteHistory(conversation: try d.conversation(), messages: try d.messages(epoch: epoch),
                                  error: try d.optionalCode())
        case .recallResult: return .recallResult(messageId: try d.varint(), error: try d.optionalCode())
        }
    }
}

/// A fact a device's client core reported (`ClientNote`). Kinds 64–75.
public enum ClientNoteRecord: Hashable, Sendable {
    case state(from: String, to: String, reason: String)
    case stored(messageId: Int64, messageUId: String?, conversation: ConversationKey, sentTime: Int64,
                direction: MessageDirection, isNew: Bool)
    case skipped(messageUId: String?, conversation: ConversationKey, reason: String)
    case cursor(name: String, value: Int64)
    case reconnectScheduled(attempt: Int, delay: SimDuration)
    case requestTimedOut(messageId: UInt16, what: String)
    case chatroomState(roomId: String, joined: Bool)
    case changed(conversation: ConversationKey?, messageIds: [Int64], what: String)
    case storeError(operation: String, message: String)
    case ignored(input: String, reason: String)
    case syncState(from: String, to: String, reason: String)
    case incompleteBody(IncompleteBody)

    public var kind: UInt16 { noteKind.rawValue }

    public var noteKind: ClientNote.TraceKind {
        switch self {
        case .state: .state
        case .stored: .stored
        case .skipped: .skipped
        case .cursor: .cursor
        case .reconnectScheduled: .reconnectScheduled
        case .requestTimedOut: .requestTimedOut
        case .chatroomState: .chatroomState
        case .changed: .changed
        case .storeError: .storeError
        case .ignored: .ignored
        case .syncState: .syncState
        case .incompleteBody: .incompleteBody
        }
    }

    public init(_ n: ClientNote) {
        switch n {
        case .state(let f, let t, let r): self = .state(from: f, to: t, reason: r)
        case .stored(let id, let uid, let c, let t, let dir, let new):
            self = .stored(messageId: id, messageUId: uid, conversation: c, sentTime: t, direction: dir, isNew: new)
        case .skipped(let uid, let c, let r): self = .skipped(messageUId: uid, conversation: c, reason: r)
        case .cursor(let n, let v): self = .cursor(name: n, value: v)
        case .reconnectScheduled(let a, let d): self = .reconnectScheduled(attempt: a, delay: d)
        case .requestTimedOut(let m, let w): self = .requestTimedOut(messageId: m, what: w)
        case .chatroomState(let r, let j): self = .chatroomState(roomId: r, joined: j)
        case .changed(let c, let ids, let w): self = .changed(conversation: c, messageIds: ids, what: w)
        case .storeError(let op, let m): self = .storeError(operation: op, message: m)
        case .ignored(let i, let r): self = .ignored(input: i, reason: r)
        case .syncState(let f, let t, let r): self = .syncState(from: f.name, to: t.name, reason: r)
        case .incompleteBody(let i): self = .incompleteBody(i)
        }
    }

    func encode(into e: inout RecordEncoder, epoch: Int64) {
        switch self {
        case .state(let f, let t, let r): e.string(f); e.string(t); e.string(r)
        case .stored(let id, let uid, let c, let t, let dir, let new):
            Self.encodeStored(id, uid, c, t, dir, new, into: &e, epoch: epoch)
        case .skipped(let uid, let c, let r): e.optionalUID(uid); e.conversation(c); e.string(r)
        case .cursor(let n, let v): Self.encodeCursor(n, v, into: &e, epoch: epoch)
        case .reconnectScheduled(let a, let d): e.varint(Int64(a)); e.duration(d)
        case .requestTimedOut(let m, let w): e.uvarint(UInt64(m)); e.string(w)
        case .chatroomState(let r, let j): e.string(r); e.bool(j)
        case .changed(let c, let ids, let w):
            if let c { e.conversation(c) } else { e.uvarint(UInt64(0)) }  // type 0 = no conversation
            e.uvarint(ids.count)
            for id in ids { e.varint(id) }
            e.utf8(w)  // not interned: it names uids and times
        case .storeError(let op, let m): e.string(op); e.utf8(m)
        case .ignored(let i, let r): e.utf8(i); e.utf8(r)
        case .syncState(let f, let t, let r): e.string(f); e.string(t); e.string(r)
        case .incompleteBody(let i): e.incompleteBody(i)
        }
    }

    /// The body of `ClientNoteRecord(n)` written straight from the note (the recorder's hot
    /// path; the rare kinds go through the record type). Same bytes (RecorderTests).
    static func encode(_ n: ClientNote, into e: inout RecordEncoder, epoch: Int64) {
        switch n {
        case .cursor(let name, let v): encodeCursor(name, v, into: &e, epoch: epoch)
        case .stored(let id, let uid, let c, let t, let dir, let new): encodeStored(id, uid, c, t, dir, new, into: &e, epoch: epoch)
        case .state(let f, let t, let r): e.string(f); e.string(t); e.string(r)
        case .syncState(let f, let t, let r): e.string(f.name); e.string(t.name); e.string(r)
        case .reconnectScheduled(let a, let d): e.varint(Int64(a)); e.duration(d)
        case .chatroomState(let r, let j): e.string(r); e.bool(j)
        case .skipped(let uid, let c, let r): e.optionalUID(uid); e.conversation(c); e.string(r)
        default: ClientNoteRecord(n).encode(into: &e, epoch: epoch)
        }
    }

    // The recorder writes these two (the most frequent notes) straight from `ClientNote`.
    static func encodeStored(_ id: Int64, _ uid: String?, _ c: ConversationKey, _ t: Int64, _ dir: MessageDirection, _ new: Bool,
                             into e: inout RecordEncoder, epoch: Int64) {
        e.varint(id); e.optionalUID(uid); e.conversation(c); e.wallMs(t, epoch: epoch)
        e.uvarint(UInt64((dir == .receive ? 1 : 0) | (new ? 2 : 0)))
    }

    static func encodeCursor(_ name: String, _ v: Int64, into e: inout RecordEncoder, epoch: Int64) {
        e.string(name); e.wallMs(v, epoch: epoch)
    }

    static func decode(kind: ClientNote.TraceKind, _ d: inout RecordDecoder, epoch: Int64) throws(RecordDecodeError) -> ClientNoteRecord {
        switch kind {
        case .state: return .state(from: try d.string(), to: try d.string(), reason: try d.string())
        case .stored:
            let id = try d.varint()
            let uid = try d.optionalUID()
            let c = try d.conversation()
            let t = try d.wallMs(epoch: epoch)
            let at = d.offset
            let bits = try d.uvarint()
            guard bits < 4 else { throw d.invalid(at, "stored flags", "\(bits)") }
            return .stored(messageId: id, messageUId: uid, conversation: c, sentTime: t,
                           direction: bits & 1 != 0 ? .receive : .send, isNew: bits & 2 != 0)
        case .skipped: return .skipped(messageUId: try d.optionalUID(), conversation: try d.conversation(), reason: try d.string())
        case .cursor: return .cursor(name: try d.string(), value: try d.wallMs(epoch: epoch))
        case .reconnectScheduled: return .reconnectScheduled(attempt: try d.int(), delay: try d.duration())
        case .requestTimedOut: return .requestTimedOut(messageId: try d.uint16(), what: try d.string())
        case .chatroomState: return .chatroomState(roomId: try d.string(), joined: try d.bool())
        case .changed:
            let conv = try d.optionalConversation()
            let n = try d.count("messageId count")
            var ids: [Int64] = []
            for _ in 0..<n { ids.append(try d.varint()) }
            return .changed(conversation: conv, messageIds: ids, what: try d.utf8())
        case .storeError: return .storeError(operation: try d.string(), message: try d.utf8())
        case .ignored: return .ignored(input: try d.utf8(), reason: try d.utf8())
        case .syncState: return .syncState(from: try d.string(), to: try d.string(), reason: try d.string())
        case .incompleteBody: return .incompleteBody(try d.incompleteBody())
        }
    }
}
