import IMStore
import IMWire
import SimKernel

/// Message content (or any app-provided text) in a trace: its UTF-8 length and a 32-bit hash by
/// default, the text itself when the run was recorded with `--keep-content`.
///
/// 32 bits: the hash only has to tell "same content" from "different content" within a run
/// (for which 2^-32 is ample); 64 would cost 4 more incompressible bytes per message record.
public enum TraceContent: Hashable, Sendable, CustomStringConvertible {
    case digest(length: Int, hash: UInt32)
    case text(String)

    /// The digest of `s`, or `s` itself when `keep`.
    @inlinable public static func of(_ s: String, keep: Bool) -> TraceContent {
        keep ? .text(s) : .digest(length: s.utf8.count, hash: hash32(s))
    }

    /// FNV-1a-64 folded to 32 bits (`h ^ h >> 32`, low half).
    @inlinable public static func hash32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        let h = StableHash.fnv1a(bytes)
        return UInt32(truncatingIfNeeded: h ^ (h >> 32))
    }

    /// `hash32(s.utf8)`, over the contiguous UTF-8 when the string has it (every native string).
    @inlinable public static func hash32(_ s: String) -> UInt32 {
        if let h = s.utf8.withContiguousStorageIfAvailable({ hash32(UnsafeBufferPointer(rebasing: $0[...])) }) { return h }
        return hash32(s.utf8)
    }

    public var length: Int {
        switch self {
        case .digest(let n, _): n
        case .text(let s): s.utf8.count
        }
    }

    /// The 32-bit hash (computed for kept text), so kept and digested traces compare.
    public var hash: UInt32 {
        switch self {
        case .digest(_, let h): h
        case .text(let s): Self.hash32(s)
        }
    }

    public var description: String {
        switch self {
        case .digest(let n, let h): "\(n)B #\(Digest64.hex(UInt64(h)).suffix(8))"
        case .text(let s): TraceText.quoted(s, limit: 60)
        }
    }
}

/// Wire bytes in a trace: their count, plus the bytes with `--keep-content`.
public struct TraceBytes: Hashable, Sendable {
    public var count: Int
    public var bytes: [UInt8]?
    public init(count: Int) {
        self.count = count
        bytes = nil
    }
    public init(bytes: [UInt8]) {
        count = bytes.count
        self.bytes = bytes
    }
    @inlinable public static func of(_ b: [UInt8], keep: Bool) -> TraceBytes {
        keep ? TraceBytes(bytes: b) : TraceBytes(count: b.count)
    }
}

/// A message row as the app saw it (`StoredMessage` with its content as `TraceContent`).
public struct TraceMessage: Hashable, Sendable {
    public var messageId: Int64
    public var messageUId: String?
    public var conversation: ConversationKey
    public var senderUserId: String
    public var direction: MessageDirection
    public var objectName: String
    public var content: TraceContent
    public var extra: TraceContent?
    /// Server ms (local ms while unsent).
    public var sentTime: Int64
    /// Local ms.
    public var receivedTime: Int64
    public var sentStatus: SentStatus
    public var receivedStatus: Int32
    public var flags: Int32
    public var clientUniqueId: Int64?

    public init(messageId: Int64, messageUId: String?, conversation: ConversationKey, senderUserId: String,
                direction: MessageDirection, objectName: String, content: TraceContent, extra: TraceContent?,
                sentTime: Int64, receivedTime: Int64, sentStatus: SentStatus, receivedStatus: Int32, flags: Int32,
                clientUniqueId: Int64?) {
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

    public init(_ m: StoredMessage, keepContent: Bool) {
        self.init(messageId: m.messageId, messageUId: m.messageUId, conversation: m.conversation,
                  senderUserId: m.senderUserId, direction: m.direction, objectName: m.objectName,
                  content: .of(m.content, keep: keepContent), extra: m.extra.map { .of($0, keep: keepContent) },
                  sentTime: m.sentTime, receivedTime: m.receivedTime, sentStatus: m.sentStatus,
                  receivedStatus: m.receivedStatus.rawValue, flags: m.flags.rawValue, clientUniqueId: m.clientUniqueId)
    }
}

/// A chatroom attribute (`ChatroomKVEntry` with its value as `TraceContent`).
public struct TraceKVEntry: Hashable, Sendable {
    public var key: String
    public var value: TraceContent
    public var userId: String
    public var autoDelete: Bool
    /// Server ms.
    public var updateTime: Int64

    public init(key: String, value: TraceContent, userId: String, autoDelete: Bool, updateTime: Int64) {
        self.key = key
        self.value = value
        self.userId = userId
        self.autoDelete = autoDelete
        self.updateTime = updateTime
    }

    public init(_ e: ChatroomKVEntry, keepContent: Bool) {
        self.init(key: e.key, value: .of(e.value, keep: keepContent), userId: e.userId, autoDelete: e.autoDelete,
                  updateTime: e.updateTime)
    }
}

extension RecordEncoder {
    /// Message: messageId · bits (direction, presence) · [uid] · conversation · sender · type ·
    /// content · [extra] · sentTime · receivedTime · sentStatus · receivedStatus · flags · [cuid].
    mutating func message(_ m: TraceMessage, epoch: Int64) {
        message(messageId: m.messageId, messageUId: m.messageUId, conversation: m.conversation, senderUserId: m.senderUserId,
                direction: m.direction, objectName: m.objectName, content: m.content, extra: m.extra, sentTime: m.sentTime,
                receivedTime: m.receivedTime, sentStatus: m.sentStatus, receivedStatus: m.receivedStatus, flags: m.flags,
                clientUniqueId: m.clientUniqueId, epoch: epoch)
    }

    /// The same fields straight from a store row (the recorder's path: no `TraceMessage`).
    mutating func message(_ m: StoredMessage, keepContent keep: Bool, epoch: Int64) {
        message(messageId: m.messageId, messageUId: m.messageUId, conversation: m.conversation, senderUserId: m.senderUserId,
                direction: m.direction, objectName: m.objectName, content: .of(m.content, keep: keep),
                extra: m.extra.map { .of($0, keep: keep) }, sentTime: m.sentTime, receivedTime: m.receivedTime,
                sentStatus: m.sentStatus, receivedStatus: m.receivedStatus.rawValue, flags: m.flags.rawValue,
                clientUniqueId: m.clientUniqueId, epoch: epoch)
    }

    @inline(__always)
    private mutating func message(messageId: Int64, messageUId: String?, conversation c: ConversationKey, senderUserId: String,
                                  direction: MessageDirection, objectName: String, content body: TraceContent, extra: TraceContent?,
                                  sentTime: Int64, receivedTime: Int64, sentStatus: SentStatus, receivedStatus: Int32,
                                  flags: Int32, clientUniqueId: Int64?, epoch: Int64) {
        varint(messageId)
        var bits: UInt64 = direction == .receive ? 1 : 0
        if extra != nil { bits |= 4 }
        if clientUniqueId != nil { bits |= 8 }
        // Format 2: a digest the block already wrote for this uid (its `srv.accepted`, another
        // recipient's copy) is not repeated: bit 16, no content field.
        var uid: UInt32 = 0
        var digest: ContentDigest?
        if let u = messageUId {
            bits |= 2
            uid = internUID(u)
            if case .digest(let n, let h) = body {
                let d = ContentDigest(length: n, hash: h)
                if blockContent(ofUID: uid) == d { bits |= 16 } else { digest = d }
            }
        }
        uvarint(bits)
        if bits & 2 != 0 { uidReference(uid) }
        conversation(c)
        string(senderUserId)
        string(objectName)
        if bits & 16 == 0 {
            content(body)
            if let digest { noteContent(digest, ofUID: uid) }
        }
        if let x = extra { content(x) }
        wallMs(sentTime, epoch: epoch)
        wallMs(receivedTime, epoch: epoch)
        uvarint(UInt64(UInt32(bitPattern: sentStatus.rawValue)))
        int32(receivedStatus)
        int32(flags)
        if let cuid = clientUniqueId { varint(cuid) }
    }

    mutating func messages(_ list: [TraceMessage], epoch: Int64) {
        uvarint(list.count)
        for m in list { message(m, epoch: epoch) }
    }

    mutating func kvEntry(_ e: TraceKVEntry, epoch: Int64) {
        string(e.key)
        content(e.value)
        string(e.userId)
        bool(e.autoDelete)
        wallMs(e.updateTime, epoch: epoch)
    }

    mutating func kvEntries(_ list: [TraceKVEntry], epoch: Int64) {
        uvarint(list.count)
        for e in list { kvEntry(e, epoch: epoch) }
    }
}

extension RecordDecoder {
    mutating func message(epoch: Int64) throws(RecordDecodeError) -> TraceMessage {
        let id = try varint()
        let bitsAt = offset
        let bits = try uvarint()
        guard bits < (context.legacy ? 16 : 32), bits & 18 != 16 else { throw invalid(bitsAt, "message bits", "\(bits)") }
        let uidKey = bits & 2 != 0 ? try uidID() : nil
        let conv = try conversation()
        let sender = try string()
        let type = try string()
        let body: TraceContent
        if bits & 16 != 0, let uidKey {
            guard let d = context.contents[uidKey] else {
                throw invalid(bitsAt, "message content", "the block's digest of its uid, but the block wrote none")
            }
            body = .digest(length: d.length, hash: d.hash)
        } else {
            body = try content()
            if !context.legacy, let uidKey, case .digest(let n, let h) = body { context.contents[uidKey] = ContentDigest(length: n, hash: h) }
        }
        let uid = uidKey.map { block.strings[$0]! }
        let extra = bits & 4 != 0 ? try content() : nil
        let sent = try wallMs(epoch: epoch)
        let received = try wallMs(epoch: epoch)
        let status = try intEnumU(SentStatus.self, "sentStatus")
        let rs = try int32()
        let flags = try int32()
        let cuid = bits & 8 != 0 ? try varint() : nil
        return TraceMessage(messageId: id, messageUId: uid, conversation: conv, senderUserId: sender,
                            direction: bits & 1 == 1 ? .receive : .send, objectName: type, content: body, extra: extra,
                            sentTime: sent, receivedTime: received, sentStatus: status, receivedStatus: rs, flags: flags,
                            clientUniqueId: cuid)
    }

    /// An Int32-valued enum stored as an unsigned varint.
    mutating func intEnumU<E: RawRepresentable>(_: E.Type, _ field: String) throws(RecordDecodeError) -> E
        where E.RawValue == Int32 {
        let at = offset
        let v = try uvarint()
        guard v <= UInt64(Int32.max), let e = E(rawValue: Int32(v)) else { throw invalid(at, field, "\(v)") }
        return e
    }

    mutating func messages(epoch: Int64) throws(RecordDecodeError) -> [TraceMessage] {
        let n = try count("message count")
        var out: [TraceMessage] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(try message(epoch: epoch)) }
        return out
    }

    mutating func kvEntry(epoch: Int64) throws(RecordDecodeError) -> TraceKVEntry {
        TraceKVEntry(key: try string(), value: try content(), userId: try string(), autoDelete: try bool(),
                     updateTime: try wallMs(epoch: epoch))
    }

    mutating func kvEntries(epoch: Int64) throws(RecordDecodeError) -> [TraceKVEntry] {
        let n = try count("entry count")
        var out: [TraceKVEntry] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(try kvEntry(epoch: epoch)) }
        return out
    }
}
