import IMServer
import IMWire
import SimKernel

/// A fact the server core reported (`ServerEvent`). Kinds 96–118. The world's own types are
/// kept where they round-trip exactly.
public enum ServerEventRecord: Hashable, Sendable {
    indirect case sessionOpened(ConnectionID, userId: String, deviceId: String, platform: Platform, sessionId: String)
    case connectRejected(ConnectionID, status: ConnackStatus)
    case sessionClosed(ConnectionID, userId: String, deviceId: String, reason: SessionCloseReason)
    case kicked(victim: ConnectionID, userId: String, victimDeviceId: String, byDeviceId: String)
    /// Boxed (see `CallbackRecord.messageInserted`).
    indirect case messageAccepted(AcceptedMessage)
    case messageRejected(ConnectionID, userId: String, conversation: ConversationKey, clientUniqueId: Int64, code: Int32)
    case duplicateSendAbsorbed(messageUId: String, userId: String, clientUniqueId: Int64)
    case fannedOut(messageUId: String, userId: String, deviceId: String, ConnectionID, via: DeliveryPath)
    indirect case pulled(ConnectionID, userId: String, deviceId: String, topic: String, messageUIds: [String], syncTime: Int64, finished: Bool)
    case offlineStored(messageUId: String, userId: String)
    case pushed(messageUId: String, userId: String)
    case dropped(messageUId: String?, conversation: ConversationKey, userId: String?, reason: DropReason)
    case chatroomJoined(roomId: String, userId: String, deviceId: String)
    case chatroomLeft(roomId: String, userId: String, reason: ChatroomLeaveReason)
    case chatroomDestroyed(roomId: String, reason: String)
    case chatroomKVChanged(roomId: String, key: String, userId: String, deleted: Bool)
    case recalled(messageUId: String, byUserId: String)
    case restarted(keptPersistentState: Bool)
    case protocolError(ConnectionID, description: String)
    case reconnectRefused(ConnectionID, userId: String, deviceId: String, activeDeviceId: String)
    case queryRejected(ConnectionID, userId: String, topic: String, targetId: String, code: Int32)
    case chatroomCreated(roomId: String, byUserId: String?)
    case incompleteBody(IncompleteBody)

    public var kind: UInt16 { eventKind.rawValue }

    public var eventKind: ServerEvent.TraceKind {
        switch self {
        case .sessionOpened: .sessionOpened
        case .connectRejected: .connectRejected
        case .sessionClosed: .sessionClosed
        case .kicked: .kicked
        case .messageAccepted: .messageAccepted
        case .messageRejected: .messageRejected
        case .duplicateSendAbsorbed: .duplicateSendAbsorbed
        case .fannedOut: .fannedOut
        case .pulled: .pulled
        case .offlineStored: .offlineStored
        case .pushed: .pushed
        case .dropped: .dropped
        case .chatroomJoined: .chatroomJoined
        case .chatroomLeft: .chatroomLeft
        case .chatroomDestroyed: .chatroomDestroyed
        case .chatroomKVChanged: .chatroomKVChanged
        case .recalled: .recalled
        case .restarted: .restarted
        case .protocolError: .protocolError
        case .reconnectRefused: .reconnectRefused
        case .queryRejected: .queryRejected
        case .chatroomCreated: .chatroomCreated
        case .incompleteBody: .incompleteBody
        }
    }

    /// The second record of a message accepted and dropped for everyone (one `ServerEvent`, two
    /// records: `messageAccepted`, then this `dropped`), else nil.
    public static func droppedRecord(_ e: ServerEvent) -> ServerEventRecord? {
        guard case .messageAccepted(let m) = e, let reason = m.droppedForEveryone else { return nil }
        return .dropped(messageUId: m.messageUId, conversation: m.conversation, userId: nil, reason: reason)
    }

    public init(_ e: ServerEvent) {
        switch e {
        case .sessionOpened(let c, let u, let d, let p, let s): self = .sessionOpened(c, userId: u, deviceId: d, platform: p, sessionId: s)
        case .connectRejected(let c, let s): self = .connectRejected(c, status: s)
        case .sessionClosed(let c, let u, let d, let r): self = .sessionClosed(c, userId: u, deviceId: d, reason: r)
        case .kicked(let v, let u, let vd, let by): self = .kicked(victim: v, userId: u, victimDeviceId: vd, byDeviceId: by)
        case .messageAccepted(var m):
            // A drop for everyone is its own record (`droppedRecord`), as in every trace so far.
            m.droppedForEveryone = nil
            self = .messageAccepted(m)
        case .messageRejected(let c, let u, let conv, let cuid, let code):
            self = .messageRejected(c, userId: u, conversation: conv, clientUniqueId: cuid, code: code)
        case .duplicateSendAbsorbed(let uid, let u, let cuid): self = .duplicateSendAbsorbed(messageUId: uid, userId: u, clientUniqueId: cuid)
        case .fannedOut(let uid, let u, let d, let c, let via): self = .fannedOut(messageUId: uid, userId: u, deviceId: d, c, via: via)
        case .pulled(let c, let u, let d, let t, let uids, let st, let f):
            self = .pulled(c, userId: u, deviceId: d, topic: t, messageUIds: uids, syncTime: st, finished: f)
        case .offlineStored(let uid, let u): self = .offlineStored(messageUId: uid, userId: u)
        case .pushed(let uid, let u): self = .pushed(messageUId: uid, userId: u)
        case .dropped(let uid, let c, let u, let r): self = .dropped(messageUId: uid, conversation: c, userId: u, reason: r)
        case .chatroomJoined(let r, let u, let d): self = .chatroomJoined(roomId: r, userId: u, deviceId: d)
        case .chatroomLeft(let r, let u, let why): self = .chatroomLeft(roomId: r, userId: u, reason: why)
        case .chatroomDestroyed(let r, let why): self = .chatroomDestroyed(roomId: r, reason: why)
        case .chatroomKVChanged(let r, let k, let u, let del): self = .chatroomKVChanged(roomId: r, key: k, userId: u, deleted: del)
        case .recalled(let uid, let by): self = .recalled(messageUId: uid, byUserId: by)
        case .restarted(let kept): self = .restarted(keptPersistentState: kept)
        case .protocolError(let c, let d): self = .protocolError(c, description: d)
        case .reconnectRefused(let c, let u, let d, let a): self = .reconnectRefused(c, userId: u, deviceId: d, activeDeviceId: a)
        case .queryRejected(let c, let u, let t, let target, let code):
            self = .queryRejected(c, userId: u, topic: t, targetId: target, code: code)
        case .chatroomCreated(let r, let by): self = .chatroomCreated(roomId: r, byUserId: by)
        case .incompleteBody(let i): self = .incompleteBody(i)
        }
    }

    func encode(into e: inout RecordEncoder, epoch: Int64) {
        switch self {
        case .sessionOpened(let c, let u, let d, let p, let s): e.connection(c.raw); e.string(u); e.string(d); e.string(p.rawValue); e.string(s)
        case .connectRejected(let c, let s): e.connection(c.raw); e.uvarint(UInt64(s.rawValue))
        case .sessionClosed(let c, let u, let d, let r): e.connection(c.raw); e.string(u); e.string(d); e.string(r.rawValue)
        case .kicked(let v, let u, let vd, let by): e.connection(v.raw); e.string(u); e.string(vd); e.string(by)
        case .messageAccepted(let m): e.accepted(m, epoch: epoch)
        case .messageRejected(let c, let u, let conv, let cuid, let code):
            e.connection(c.raw); e.string(u); e.conversation(conv); e.varint(cuid); e.int32(code)
        case .duplicateSendAbsorbed(let uid, let u, let cuid): e.uid(uid); e.string(u); e.varint(cuid)
        case .fannedOut(let uid, let u, let d, let c, let via): Self.encodeFannedOut(uid, u, d, c, via, into: &e)
        case .pulled(let c, let u, let d, let t, let uids, let st, let f):
            Self.encodePulled(c, u, d, t, uids, st, f, into: &e, epoch: epoch)
        case .offlineStored(let uid, let u), .pushed(let uid, let u): e.uid(uid); e.string(u)
        case .dropped(let uid, let c, let u, let r): e.optionalUID(uid); e.conversation(c); e.optionalString(u); e.string(r.rawValue)
        case .chatroomJoined(let r, let u, let d): e.string(r); e.string(u); e.string(d)
        case .chatroomLeft(let r, let u, let why): e.string(r); e.string(u); e.string(why.rawValue)
        case .chatroomDestroyed(let r, let why): e.string(r); e.string(why)
        case .chatroomKVChanged(let r, let k, let u, let del): e.string(r); e.string(k); e.string(u); e.bool(del)
        case .recalled(let uid, let by): e.uid(uid); e.string(by)
        case .restarted(let kept): e.bool(kept)
        case .protocolError(let c, let d): e.connection(c.raw); e.utf8(d)
        case .reconnectRefused(let c, let u, let d, let a): e.connection(c.raw); e.string(u); e.string(d); e.string(a)
        case .queryRejected(let c, let u, let t, let target, let code): e.connection(c.raw); e.string(u); e.string(t); e.string(target); e.int32(code)
        case .chatroomCreated(let r, let by): e.string(r); e.optionalString(by)
        case .incompleteBody(let i): e.incompleteBody(i)
        }
    }

    // The recorder writes these two (the most frequent server events) straight from `ServerEvent`.
    static func encodeFannedOut(_ uid: String, _ u: String, _ d: String, _ c: ConnectionID, _ via: DeliveryPath,
                                into e: inout RecordEncoder) {
        e.uid(uid); e.string(u); e.string(d); e.connection(c.raw); e.string(via.rawValue)
    }

    static func encodePulled(_ c: ConnectionID, _ u: String, _ d: String, _ t: String, _ uids: [String], _ st: Int64, _ f: Bool,
                             into e: inout RecordEncoder, epoch: Int64) {
        e.connection(c.raw); e.string(u); e.string(d); e.string(t); e.uids(uids); e.wallMs(st, epoch: epoch); e.bool(f)
    }

    static func decode(kind: ServerEvent.TraceKind, _ d: inout RecordDecoder, epoch: Int64) throws(RecordDecodeError) -> ServerEventRecord {
        switch kind {
        case .sessionOpened:
            return .sessionOpened(try d.connection(), userId: try d.string(), deviceId: try d.string(),
                                  platform: try d.rawEnum(Platform.self, "platform"), sessionId: try d.string())
        case .connectRejected:
            let c = try d.connection()
            let at = d.offset
            let v = try d.uvarint()
            guard v <= 255, let s = ConnackStatus(rawValue: UInt8(v)) else { throw d.invalid(at, "connack status", "\(v)") }
            return .connectRejected(c, status: s)
        case .sessionClosed:
            return .sessionClosed(try d.connection(), userId: try d.string(), deviceId: try d.string(),
                                  reason: try d.rawEnum(SessionCloseReason.self, "session close reason"))
        case .kicked: return .kicked(victim: try d.connection(), userId: try d.string(), victimDeviceId: try d.string(), byDeviceId: try d.string())
        case .messageAccepted: return .messageAccepted(try d.accepted(epoch: epoch))
        case .messageRejected:
            return .messageRejected(try d.connection(), userId: try d.string(), conversation: try d.conversation(),
                                    clientUniqueId: try d.varint(), code: try d.int32())
        case .duplicateSendAbsorbed: return .duplicateSendAbsorbed(messageUId: try d.uid(), userId: try d.string(), clientUniqueId: try d.varint())
        case .fannedOut:
            return .fannedOut(messageUId: try d.uid(), userId: try d.string(), deviceId: try d.string(), try d.connection(),
                              via: try d.rawEnum(DeliveryPath.self, "delivery path"))
        case .pulled:
            return .pulled(try d.connection(), userId: try d.string(), deviceId: try d.string(), topic: try d.string(),
                           messageUIds: try d.uids(), syncTime: try d.wallMs(epoch: epoch), finished: try d.bool())
        case .offlineStored: return .offlineStored(messageUId: try d.uid(), userId: try d.string())
        case .pushed: return .pushed(messageUId: try d.uid(), userId: try d.string())
        case .dropped:
            return .dropped(messageUId: try d.optionalUID(), conversation: try d.conversation(), userId: try d.optionalString(),
                            reason: try d.rawEnum(DropReason.self, "drop reason"))
        case .chatroomJoined: return .chatroomJoined(roomId: try d.string(), userId: try d.string(), deviceId: try d.string())
        case .chatroomLeft:
            return .chatroomLeft(roomId: try d.string(), userId: try d.string(),
                                 reason: try d.rawEnum(ChatroomLeaveReason.self, "chatroom leave reason"))
        case .chatroomDestroyed: return .chatroomDestroyed(roomId: try d.string(), reason: try d.string())
        case .chatroomKVChanged: return .chatroomKVChanged(roomId: try d.string(), key: try d.string(), userId: try d.string(), deleted: try d.bool())
        case .recalled: return .recalled(messageUId: try d.uid(), byUserId: try d.string())
        case .restarted: return .restarted(keptPersistentState: try d.bool())
        case .protocolError: return .protocolError(try d.connection(), description: try d.utf8())
        case .reconnectRefused:
            return .reconnectRefused(try d.connection(), userId: try d.string(), deviceId: try d.string(), activeDeviceId: try d.string())
        case .queryRejected:
            return .queryRejected(try d.connection(), userId: try d.string(), topic: try d.string(), targetId: try d.string(),
                                  code: try d.int32())
        case .chatroomCreated: return .chatroomCreated(roomId: try d.string(), byUserId: try d.optionalString())
        case .incompleteBody: return .incompleteBody(try d.incompleteBody())
        }
    }
}

extension RecordEncoder {
    /// Incomplete body: message · optString field · site.
    mutating func incompleteBody(_ i: IncompleteBody) {
        string(i.message)
        optionalString(i.field)
        string(i.site)
    }

    /// Accepted message: uid · conversation · sender · [senderDevice] · type · dataTime · flags
    /// (persistent · offline|push bits · priority) · cuid · recipients · content length · hash.
    mutating func accepted(_ m: AcceptedMessage, epoch: Int64) {
        let uid = internUID(m.messageUId)
        uidReference(uid)
        // The digest the recipients' copies will carry (the client's 32-bit fold of the same FNV-1a-64).
        noteContent(ContentDigest(length: m.contentLength, hash: UInt32(truncatingIfNeeded: m.contentHash ^ (m.contentHash >> 32))),
                    ofUID: uid)
        conversation(m.conversation)
        string(m.senderUserId)
        optionalString(m.senderDeviceId)
        string(m.objectName)
        wallMs(m.dataTime, epoch: epoch)
        uvarint(UInt64(UInt32(bitPattern: m.flags.persistent.rawValue)))
        uvarint(UInt64((m.flags.offline ? 1 : 0) | (m.flags.push ? 2 : 0)))
        string(m.flags.chatroomPriority.rawValue)
        varint(m.clientUniqueId)
        strings(m.recipients)
        uvarint(m.contentLength)
        fixed64(m.contentHash)
    }
}

extension RecordDecoder {
    mutating func accepted(epoch: Int64) throws(RecordDecodeError) -> AcceptedMessage {
        let uidKey = try uidID()
        let uid = block.strings[uidKey]!
        let conv = try conversation()
        let sender = try string()
        let device = try optionalString()
        let type = try string()
        let dataTime = try wallMs(epoch: epoch)
        let persistent = try intEnumU(MessagePersistent.self, "persistent")
        let at = offset
        let bits = try uvarint()
        guard bits < 4 else { throw invalid(at, "accepted flags", "\(bits)") }
        let priority = try rawEnum(ChatroomPriority.self, "chatroom priority")
        let cuid = try varint()
        let recipients = try strings()
        let length = try uvarintInt()
        let hash = try fixed64()
        if !context.legacy {
            context.contents[uidKey] = ContentDigest(length: length, hash: UInt32(truncatingIfNeeded: hash ^ (hash >> 32)))
        }
        return AcceptedMessage(
            messageUId: uid, conversation: conv, senderUserId: sender, senderDeviceId: device, objectName: type,
            dataTime: dataTime, flags: MessageTypeFlags(persistent: persistent, offline: bits & 1 != 0, push: bits & 2 != 0,
                                                         chatroomPriority: priority),
            clientUniqueId: cuid, recipients: recipients, contentLength: length, contentHash: hash)
    }
}

extension RecordDecoder {
    mutating func incompleteBody() throws(RecordDecodeError) -> IncompleteBody {
        IncompleteBody(message: try string(), field: try optionalString(), site: try string())
    }
}
