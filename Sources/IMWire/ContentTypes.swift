// Typed JSON content of the message types the model interprets (im-semantics §2, §7).
// Each type lists its JSON fields in their canonical output order.

/// `RC:TxtMsg` — `{"content", "extra"?}`.
public struct TextContent: Sendable, Hashable {
    public static let objectName = "RC:TxtMsg"
    public var content: String
    public var extra: String?

    public init(content: String, extra: String? = nil) {
        self.content = content
        self.extra = extra
    }

    init(_ r: inout ContentReader) throws(WireError) {
        try r.requireObject()
        content = try r.string("content")
        extra = try r.optionalString("extra")
    }

    public var json: JSONValue {
        var m: [JSONValue.Member] = [.init("content", .string(content))]
        if let extra { m.append(.init("extra", .string(extra))) }
        return .object(m)
    }
}

/// `RC:RcCmd` — recall command `{"conversationType", "targetId", "messageUId", "sentTime"}`.
public struct RecallCommandContent: Sendable, Hashable {
    public static let objectName = "RC:RcCmd"
    public var conversationType: ConversationType
    public var targetId: String
    public var messageUId: String
    /// sentTime (server ms) of the recalled message.
    public var sentTime: Int64

    public init(conversationType: ConversationType, targetId: String, messageUId: String, sentTime: Int64) {
        self.conversationType = conversationType
        self.targetId = targetId
        self.messageUId = messageUId
        self.sentTime = sentTime
    }

    init(_ r: inout ContentReader) throws(WireError) {
        try r.requireObject()
        let t = try r.int64("conversationType")
        guard let ct = Int32(exactly: t).flatMap(ConversationType.init(rawValue:)) else {
            throw r.fail("conversationType", "unknown conversation type \(t)")
        }
        conversationType = ct
        targetId = try r.string("targetId")
        messageUId = try r.string("messageUId")
        sentTime = try r.int64("sentTime")
    }

    public var json: JSONValue {
        .object([.init("conversationType", .int(conversationType.rawValue)), .init("targetId", .string(targetId)),
                 .init("messageUId", .string(messageUId)), .init("sentTime", .int(sentTime))])
    }
}

/// `RC:RcNtf` — the notification that replaces a recalled message:
/// `{"operatorId", "recallTime", "originalObjectName", "originalMessageUId"?, "recallContent"?, "isAdmin", "isDelete"}`.
public struct RecallNotificationContent: Sendable, Hashable {
    public static let objectName = "RC:RcNtf"
    public var operatorId: String
    /// Server ms of the recall.
    public var recallTime: Int64
    public var originalObjectName: String
    public var originalMessageUId: String?
    /// Text of the recalled message (the SDK keeps it for "re-edit").
    public var recallContent: String?
    public var isAdmin: Bool
    public var isDelete: Bool

    public init(operatorId: String, recallTime: Int64, originalObjectName: String, originalMessageUId: String? = nil,
                recallContent: String? = nil, isAdmin: Bool = false, isDelete: Bool = false) {
        self.operatorId = operatorId
        self.recallTime = recallTime
        self.originalObjectName = originalObjectName
        self.originalMessageUId = originalMessageUId
        self.recallContent = recallContent
        self.isAdmin = isAdmin
        self.isDelete = isDelete
    }

    init(_ r: inout ContentReader) throws(WireError) {
        try r.requireObject()
        operatorId = try r.string("operatorId")
        recallTime = try r.int64("recallTime")
        originalObjectName = try r.string("originalObjectName")
        originalMessageUId = try r.optionalString("originalMessageUId")
        recallContent = try r.optionalString("recallContent")
        isAdmin = try r.bool("isAdmin", default: false)
        isDelete = try r.bool("isDelete", default: false)
    }

    public var json: JSONValue {
        var m: [JSONValue.Member] = [
            .init("operatorId", .string(operatorId)), .init("recallTime", .int(recallTime)),
            .init("originalObjectName", .string(originalObjectName)),
        ]
        if let originalMessageUId { m.append(.init("originalMessageUId", .string(originalMessageUId))) }
        if let recallContent { m.append(.init("recallContent", .string(recallContent))) }
        m.append(.init("isAdmin", .bool(isAdmin)))
        m.append(.init("isDelete", .bool(isDelete)))
        return .object(m)
    }
}

/// `RC:ReadNtf` — private read receipt: `{"lastMessageSendTime", "messageUId"?, "type"}`. The sender
/// marks every outgoing message with sentTime ≤ `lastMessageSendTime` as READ.
public struct ReadNotificationContent: Sendable, Hashable {
    public static let objectName = "RC:ReadNtf"
    public var lastMessageSendTime: Int64
    public var messageUId: String?
    /// 1 = read receipt (the only type the SDK sends).
    public var type: Int64

    public init(lastMessageSendTime: Int64, messageUId: String? = nil, type: Int64 = 1) {
        self.lastMessageSendTime = lastMessageSendTime
        self.messageUId = messageUId
        self.type = type
    }

    init(_ r: inout ContentReader) throws(WireError) {
        try r.requireObject()
        lastMessageSendTime = try r.int64("lastMessageSendTime")
        messageUId = try r.optionalString("messageUId")
        type = try r.optionalInt64("type") ?? 1
    }

    public var json: JSONValue {
        var m: [JSONValue.Member] = [.init("lastMessageSendTime", .int(lastMessageSendTime))]
        if let messageUId { m.append(.init("messageUId", .string(messageUId))) }
        m.append(.init("type", .int(type)))
        return .object(m)
    }
}

/// `RC:SRSMsg` — multi-device read sync: `{"lastMessageSendTime"}`; the user's other devices clear
/// the conversation's unread count up to that time.
public struct SyncReadStatusContent: Sendable, Hashable {
    public static let objectName = "RC:SRSMsg"
    public var lastMessageSendTime: Int64

    public init(lastMessageSendTime: Int64) { self.lastMessageSendTime = lastMessageSendTime }

    init(_ r: inout ContentReader) throws(WireError) {
        try r.requireObject()
        lastMessageSendTime = try r.int64("lastMessageSendTime")
    }

    public var json: JSONValue { .object([.init("lastMessageSendTime", .int(lastMessageSendTime))]) }
}

/// `RC:InfoNtf` — informational notice: `{"message", "extra"?}`.
public struct InformationNotificationContent: Sendable, Hashable {
    public static let objectName = "RC:InfoNtf"
    public var message: String
    public var extra: String?

    public init(message: String, extra: String? = nil) {
        self.message = message
        self.extra = extra
    }

    init(_ r: inout ContentReader) throws(WireError) {
        try r.requireObject()
        message = try r.string("message")
        extra = try r.optionalString("extra")
    }

    public var json: JSONValue {
        var m: [JSONValue.Member] = [.init("message", .string(message))]
        if let extra { m.append(.init("extra", .string(extra))) }
        return .object(m)
    }
}

/// `RC:TypSts` — typing status (STATUS): `{"typingContentType", "data"?}`.
public struct TypingStatusContent: Sendable, Hashable {
    public static let objectName = "RC:TypSts"
    /// objectName of what is being typed, e.g. `RC:TxtMsg`.
    public var typingContentType: String
    public var data: String?

    public init(typingContentType: String, data: String? = nil) {
        self.typingContentType = typingContentType
        self.data = data
    }

    init(_ r: inout ContentReader) throws(WireError) {
        try r.requireObject()
        typingContentType = try r.string("typingContentType")
        data = try r.optionalString("data")
    }

    public var json: JSONValue {
        var m: [JSONValue.Member] = [.init("typingContentType", .string(typingContentType))]
        if let data { m.append(.init("data", .string(data))) }
        return .object(m)
    }
}

/// `RC:chrmKVNotiMsg` — chatroom attribute change: `{"type", "key", "value", "extra"?}`.
public struct ChatroomKVNotificationContent: Sendable, Hashable {
    public static let objectName = "RC:chrmKVNotiMsg"

    public enum ChangeType: Int64, Sendable, Hashable, Codable {
        case set = 1
        case remove = 2
    }

    public var type: ChangeType
    public var key: String
    public var value: String
    public var extra: String?

    public init(type: ChangeType, key: String, value: String, extra: String? = nil) {
        self.type = type
        self.key = key
        self.value = value
        self.extra = extra
    }

    init(_ r: inout ContentReader) throws(WireError) {
        try r.requireObject()
        let t = try r.int64("type")
        guard let ct = ChangeType(rawValue: t) else { throw r.fail("type", "unknown change type \(t)") }
        type = ct
        key = try r.string("key")
        value = try r.optionalString("value") ?? ""
        extra = try r.optionalString("extra")
    }

    public var json: JSONValue {
        var m: [JSONValue.Member] = [.init("type", .int(type.rawValue)), .init("key", .string(key)),
                                     .init("value", .string(value))]
        if let extra { m.append(.init("extra", .string(extra))) }
        return .object(m)
    }
}
