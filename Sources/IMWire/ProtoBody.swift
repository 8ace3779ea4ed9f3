#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SwiftProtobuf

/// The protobuf messages a frame body can hold (wire-protocol §3; generated types `RMTP…`).
public enum BodyKind: String, Sendable, Hashable, Codable, CaseIterable {
    case upStreamMessage = "UpStreamMessage"
    case downStreamMessage = "DownStreamMessage"
    case downStreamMessages = "DownStreamMessages"
    case syncRequestMsg = "SyncRequestMsg"
    case notifyMsg = "NotifyMsg"
    case chrmInput = "ChrmInput"
    case chrmOutput = "ChrmOutput"
    case chrmPullMsg = "ChrmPullMsg"
    case historyMsgInput = "HistoryMsgInput"
    case historyMsgOuput = "HistoryMsgOuput"
    case chrmKVEntity = "ChrmKVEntity"
    case setChrmKV = "SetChrmKV"
    case deleteChrmKV = "DeleteChrmKV"
    case chrmKVOutput = "ChrmKVOutput"
    case queryChrmKV = "QueryChrmKV"
    case sessionMsgReadInput = "SessionMsgReadInput"

    /// The generated Swift type.
    public var messageType: any SwiftProtobuf.Message.Type {
        switch self {
        case .upStreamMessage: RMTPUpStreamMessage.self
        case .downStreamMessage: RMTPDownStreamMessage.self
        case .downStreamMessages: RMTPDownStreamMessages.self
        case .syncRequestMsg: RMTPSyncRequestMsg.self
        case .notifyMsg: RMTPNotifyMsg.self
        case .chrmInput: RMTPChrmInput.self
        case .chrmOutput: RMTPChrmOutput.self
        case .chrmPullMsg: RMTPChrmPullMsg.self
        case .historyMsgInput: RMTPHistoryMsgInput.self
        case .historyMsgOuput: RMTPHistoryMsgOuput.self
        case .chrmKVEntity: RMTPChrmKVEntity.self
        case .setChrmKV: RMTPSetChrmKV.self
        case .deleteChrmKV: RMTPDeleteChrmKV.self
        case .chrmKVOutput: RMTPChrmKVOutput.self
        case .queryChrmKV: RMTPQueryChrmKV.self
        case .sessionMsgReadInput: RMTPSessionMsgReadInput.self
        }
    }

    /// Fully qualified protobuf name (`rmtp.UpStreamMessage`), as `protoc --decode` wants it.
    public var protoName: String { "rmtp." + rawValue }

    /// The kind of a generated message value.
    public init?(of message: any SwiftProtobuf.Message) {
        let name = type(of: message).protoMessageName
        guard name.hasPrefix("rmtp."), let k = BodyKind(rawValue: String(name.dropFirst(5))) else { return nil }
        self = k
    }

    /// Decodes `bytes` as this kind.
    public func decode(_ bytes: [UInt8]) throws(WireError) -> any SwiftProtobuf.Message {
        switch self {
        case .upStreamMessage: return try ProtoBody.decode(RMTPUpStreamMessage.self, from: bytes)
        case .downStreamMessage: return try ProtoBody.decode(RMTPDownStreamMessage.self, from: bytes)
        case .downStreamMessages: return try ProtoBody.decode(RMTPDownStreamMessages.self, from: bytes)
        default: break
        }
        do {
            return try messageType.init(serializedBytes: bytes, extensions: nil, partial: false, options: BinaryDecodingOptions())
        } catch {
            throw ProtoBody.diagnose(bytes, kind: self, cause: error)
        }
    }
}

/// A protobuf body type, for the cores' own build helpers (they need not import swift-protobuf).
public typealias BodyMessage = SwiftProtobuf.Message

/// A body a core built (`ProtoBody.encodeBuilt`): its bytes, and what it lacks when a required
/// field was left unset.
public struct BuiltBody: Sendable {
    public var bytes: [UInt8]
    public var incomplete: IncompleteBody?
}

/// A body built without one of its required fields: the message, the field (nil when the schema
/// walker cannot tell) and the builder's source place. A core bug, reported as a typed effect.
public struct IncompleteBody: Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var field: String?
    public var site: String

    public init(message: String, field: String?, site: String) {
        self.message = message
        self.field = field
        self.site = site
    }

    public var description: String { "\(message) built without required field \(field ?? "?") at \(site)" }
}

/// Serialising and parsing frame bodies with errors that name the message, field and body offset.
public enum ProtoBody {
    /// Parses a body. A failure names the field and the body byte offset where it was found.
    public static func decode<M: SwiftProtobuf.Message>(_ type: M.Type, from bytes: [UInt8]) throws(WireError) -> M {
        // Hot messages first try the hand-written path (nil = let swift-protobuf decide).
        if M.self == RMTPDownStreamMessage.self, let m = FastProto.decodeDownStream(bytes) { return m as! M }
        if M.self == RMTPUpStreamMessage.self, let m = FastProto.decodeUpStream(bytes) { return m as! M }
        if M.self == RMTPDownStreamMessages.self, let m = FastProto.decodeDownStreamMessages(bytes) { return m as! M }
        if M.self == RMTPChrmPullMsg.self, let m = FastProto.decodeChrmPull(bytes) { return m as! M }
        if M.self == RMTPNotifyMsg.self, let m = FastProto.decodeNotify(bytes) { return m as! M }
        do {
            return try M(serializedBytes: bytes)
        } catch {
            throw diagnose(bytes, kind: BodyKind(rawValue: String(M.protoMessageName.dropFirst(5))), cause: error,
                           messageName: M.protoMessageName)
        }
    }

    /// Serialises a body (required fields must be set).
    public static func encode<M: SwiftProtobuf.Message>(_ message: M) throws(WireError) -> [UInt8] {
        // Type tests, not `as?`: in this unspecialised generic each `as?` was a dynamic cast
        // (~190 instructions) and a copy of the message.
        if M.self == RMTPDownStreamMessage.self, let b = FastProto.encode(unsafeBitCast(message, to: RMTPDownStreamMessage.self)) { return b }
        if M.self == RMTPUpStreamMessage.self, let b = FastProto.encode(unsafeBitCast(message, to: RMTPUpStreamMessage.self)) { return b }
        if M.self == RMTPDownStreamMessages.self, let b = FastProto.encode(unsafeBitCast(message, to: RMTPDownStreamMessages.self)) { return b }
        if M.self == RMTPChrmPullMsg.self, let b = FastProto.encode(unsafeBitCast(message, to: RMTPChrmPullMsg.self)) { return b }
        if M.self == RMTPNotifyMsg.self, let b = FastProto.encode(unsafeBitCast(message, to: RMTPNotifyMsg.self)) { return b }
        do {
            return try message.serializedBytes()
        } catch {
            let name = type(of: message).protoMessageName
            var missing: String?
            if let kind = BodyKind(of: message) {
                missing = ProtoSchema.firstMissingRequired(message, kind: kind)
            }
            throw .protobuf(message: shortName(name), field: missing,
                            reason: missing != nil ? "required field not set" : "\(error)", offset: 0)
        }
    }

    /// Serialises a body a core built itself (the one policy for the call sites that once sent an
    /// empty body on failure). swift-protobuf's encoder fails for two reasons only: a proto2
    /// required field left unset, or a body over 2 GiB. Partial encoding lifts the first, and no
    /// core builds the second (bodies are bounded by `maxBodyBytes` and page sizes), so this
    /// cannot fail: `bytes` is exactly what was built, never an empty stand-in. A required field
    /// left unset — a bug in the builder — is named in `incomplete`; the core reports it as a
    /// typed effect (`ServerEvent.incompleteBody`, `ClientNote.incompleteBody`), and the peer
    /// refuses the body with a decode error naming the field.
    public static func encodeBuilt(_ message: some SwiftProtobuf.Message, file: StaticString = #fileID,
                                   line: UInt = #line) -> BuiltBody {
        if let bytes = try? encode(message) { return BuiltBody(bytes: bytes, incomplete: nil) }
        let name = shortName(type(of: message).protoMessageName)
        let field = BodyKind(of: message).flatMap { ProtoSchema.firstMissingRequired(message, kind: $0) }
        return BuiltBody(bytes: partialBytes(message),
                         incomplete: IncompleteBody(message: name, field: field, site: "\(file):\(line)"))
    }

    /// Serialises a body decoded from bytes (its required fields checked by the decoder) and then
    /// changed only by setting fields: it cannot miss a required field, so there is nothing to
    /// report (see `encodeBuilt` for the size bound).
    public static func reencode(_ decoded: some SwiftProtobuf.Message) -> [UInt8] {
        if let bytes = try? encode(decoded) { return bytes }
        return partialBytes(decoded)
    }

    private static func partialBytes(_ message: some SwiftProtobuf.Message) -> [UInt8] {
        do {
            return try message.serializedBytes(partial: true)
        } catch {
            // Only `BinaryEncodingError.tooLarge` (over 2 GiB) is left, which no core can build.
            preconditionFailure("a core built a body swift-protobuf cannot encode at all: \(error)")
        }
    }

    static func shortName(_ protoName: String) -> String {
        protoName.hasPrefix("rmtp.") ? String(protoName.dropFirst(5)) : protoName
    }

    /// Turns a swift-protobuf failure into a `WireError` naming the place, using the schema walker.
    static func diagnose(_ bytes: [UInt8], kind: BodyKind?, cause: any Error, messageName: String? = nil) -> WireError {
        let name = kind?.rawValue ?? shortName(messageName ?? "?")
        if let kind, let located = ProtoSchema.locateError(bytes, kind: kind) { return located }
        return .protobuf(message: name, field: nil, reason: "\(cause)", offset: 0)
    }
}

// MARK: - Frame body helpers

extension Frame.Publish {
    /// A PUBLISH whose body is `message`.
    public init(flags: FrameFlags = .atLeastOnce, date: UInt32 = 0, topic: Topic, targetId: String,
                messageId: UInt16, message: some SwiftProtobuf.Message) throws(WireError) {
        self.init(flags: flags, date: date, topic: topic, targetId: targetId, messageId: messageId,
                  body: try ProtoBody.encode(message))
    }

    /// The body parsed as `type`.
    public func decodeBody<M: SwiftProtobuf.Message>(_ type: M.Type) throws(WireError) -> M {
        try ProtoBody.decode(type, from: body)
    }
}

extension Frame.Query {
    /// A QUERY whose body is `message`.
    public init(flags: FrameFlags = .atLeastOnce, topic: Topic, targetId: String, messageId: UInt16,
                message: some SwiftProtobuf.Message) throws(WireError) {
        self.init(flags: flags, topic: topic, targetId: targetId, messageId: messageId, body: try ProtoBody.encode(message))
    }

    public func decodeBody<M: SwiftProtobuf.Message>(_ type: M.Type) throws(WireError) -> M {
        try ProtoBody.decode(type, from: body)
    }
}

extension Frame.QueryAck {
    /// A QUERYACK whose body is `message`.
    public init(flags: FrameFlags = .atLeastOnce, messageId: UInt16, date: UInt32, status: UInt16 = 0,
                message: some SwiftProtobuf.Message) throws(WireError) {
        self.init(flags: flags, messageId: messageId, date: date, status: status, body: try ProtoBody.encode(message))
    }

    public func decodeBody<M: SwiftProtobuf.Message>(_ type: M.Type) throws(WireError) -> M {
        try ProtoBody.decode(type, from: body)
    }
}

// MARK: - Flag words inside bodies

/// `UpStreamMessage.sessionId` flags (wire-protocol §3).
public struct UpStreamFlags: OptionSet, Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let persisted = UpStreamFlags(rawValue: 0x01)
    public static let counted = UpStreamFlags(rawValue: 0x02)
    public static let mentioned = UpStreamFlags(rawValue: 0x04)
    public static let noNotification = UpStreamFlags(rawValue: 0x20)

    /// The flags a message of a type with `persistent` carries.
    public init(persistent: MessagePersistent, mentioned: Bool = false, noNotification: Bool = false) {
        var f: UpStreamFlags = []
        if persistent.isStored { f.insert(.persisted) }
        if persistent.isCounted { f.insert(.counted) }
        if mentioned { f.insert(.mentioned) }
        if noNotification { f.insert(.noNotification) }
        self = f
    }
}

/// `DownStreamMessage.status` flags (wire-protocol §3).
public struct DownStreamStatus: OptionSet, Sendable, Hashable {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    /// Already received by another of the user's devices (→ `ReceivedStatus.retrieved`).
    public static let receivedByOtherDevice = DownStreamStatus(rawValue: 0x02)
    public static let persisted = DownStreamStatus(rawValue: 0x10)
    public static let counted = DownStreamStatus(rawValue: 0x20)
    public static let mentioned = DownStreamStatus(rawValue: 0x40)
    public static let noNotification = DownStreamStatus(rawValue: 0x100)

    /// The status bits for a type with `persistent`.
    public init(persistent: MessagePersistent, mentioned: Bool = false, noNotification: Bool = false) {
        var f: DownStreamStatus = []
        if persistent.isStored { f.insert(.persisted) }
        if persistent.isCounted { f.insert(.counted) }
        if mentioned { f.insert(.mentioned) }
        if noNotification { f.insert(.noNotification) }
        self = f
    }
}

extension RMTPChannelType {
    /// The wire channel type of a conversation type (same numbers).
    public init(_ type: ConversationType) {
        self = RMTPChannelType(rawValue: Int(type.rawValue)) ?? .person  // unnamed numbers: not sent by the model
    }
}

extension ConversationType {
    /// The conversation type of a wire channel type (same numbers).
    public init(_ channel: RMTPChannelType) {
        self = ConversationType(rawValue: Int32(channel.rawValue)) ?? .privateChat
    }
}

extension RMTPUpStreamMessage {
    /// `content` as bytes.
    public var contentBytes: [UInt8] {
        get { content.withUnsafeBytes { [UInt8]($0) } }
        set { content = Data(newValue) }
    }
}

extension RMTPDownStreamMessage {
    /// `content` as bytes.
    public var contentBytes: [UInt8] {
        get { content.withUnsafeBytes { [UInt8]($0) } }
        set { content = Data(newValue) }
    }
}

extension RMTPHistoryMsgOuput {
    /// Field 3 `hasMsg` (swift-protobuf names it `hasMsg_p` to avoid its `has…` accessors).
    public var hasMsg: Int32 {
        get { hasMsg_p }
        set { hasMsg_p = newValue }
    }
}

// MARK: - Content inside messages

extension RMTPUpStreamMessage {
    /// An UpStreamMessage carrying `content`, with the `sessionId` flags of its type.
    /// Throws `.messageTooLarge` (30016) for content over 128 KiB.
    public init(content: MessageContent, flags: MessageTypeFlags, mentioned: Bool = false,
                noNotification: Bool = false, clientUniqueId: Int64? = nil) throws(WireError) {
        self.init()
        sessionID = UpStreamFlags(persistent: flags.persistent, mentioned: mentioned, noNotification: noNotification).rawValue
        classname = content.objectName
        contentBytes = try content.encoded()
        if let clientUniqueId { clientUniqueID = clientUniqueId }
    }

    /// The content, typed when IMWire knows the type, raw otherwise (never fails).
    public var messageContent: MessageContent {
        MessageContent.decodeOrRaw(objectName: classname, bytes: contentBytes)
    }

    /// The `sessionId` flags.
    public var flags: UpStreamFlags { UpStreamFlags(rawValue: sessionID) }
}

extension RMTPDownStreamMessage {
    /// The content, typed when IMWire knows the type, raw otherwise (never fails).
    public var messageContent: MessageContent {
        MessageContent.decodeOrRaw(objectName: classname, bytes: contentBytes)
    }

    /// The `status` flags.
    public var statusFlags: DownStreamStatus { DownStreamStatus(rawValue: status) }

    /// The conversation type (`type` as a `ConversationType`; a number the schema does not name,
    /// such as 12, is kept as that number). A non-positive number is no type: private, as before.
    public var conversationType: ConversationType { ConversationType(rawValue: type) ?? .privateChat }
}

extension RMTPDownStreamMessages {
    /// Moves message `k` out of the page, an empty message left in its place: a decoded page
    /// hands its messages on without copying each (its strings and data: a dozen retains, and
    /// as many releases when the page goes).
    package mutating func takeMessage(at k: Int) -> RMTPDownStreamMessage {
        var d = RMTPDownStreamMessage()
        swap(&d, &list[k])
        return d
    }
}
