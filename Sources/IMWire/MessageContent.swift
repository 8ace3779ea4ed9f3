/// A message's JSON content (im-semantics §2), typed for the types the model interprets and raw for
/// everything else (images, files, custom types, unknown types from the wire).
///
/// Encoding is canonical: compact JSON, fields in the fixed order listed on each type, optional
/// fields omitted when nil — the same value always gives the same bytes (they go into traces and
/// digests). Decoding accepts fields in any order and ignores unknown fields, as the SDKs do.
public enum MessageContent: Sendable, Hashable {
    case text(TextContent)
    case recallCommand(RecallCommandContent)
    case recallNotification(RecallNotificationContent)
    case readNotification(ReadNotificationContent)
    case syncReadStatus(SyncReadStatusContent)
    case information(InformationNotificationContent)
    case typingStatus(TypingStatusContent)
    case chatroomKVNotification(ChatroomKVNotificationContent)
    /// Any other type, bytes kept exactly as received.
    case raw(RawContent)

    /// Serialized content limit (im-semantics §2): 128 KiB → error 30016.
    public static let maxEncodedSize = 128 * 1024

    /// Object names that have a typed codec.
    public static let typedObjectNames: [String] = [
        TextContent.objectName, RecallCommandContent.objectName, RecallNotificationContent.objectName,
        ReadNotificationContent.objectName, SyncReadStatusContent.objectName,
        InformationNotificationContent.objectName, TypingStatusContent.objectName,
        ChatroomKVNotificationContent.objectName,
    ]

    public var objectName: String {
        switch self {
        case .text: TextContent.objectName
        case .recallCommand: RecallCommandContent.objectName
        case .recallNotification: RecallNotificationContent.objectName
        case .readNotification: ReadNotificationContent.objectName
        case .syncReadStatus: SyncReadStatusContent.objectName
        case .information: InformationNotificationContent.objectName
        case .typingStatus: TypingStatusContent.objectName
        case .chatroomKVNotification: ChatroomKVNotificationContent.objectName
        case .raw(let r): r.objectName
        }
    }

    /// The content as a JSON value (raw content: parsed, nil if it is not JSON).
    public var json: JSONValue? {
        switch self {
        case .text(let c): c.json
        case .recallCommand(let c): c.json
        case .recallNotification(let c): c.json
        case .readNotification(let c): c.json
        case .syncReadStatus(let c): c.json
        case .information(let c): c.json
        case .typingStatus(let c): c.json
        case .chatroomKVNotification(let c): c.json
        case .raw(let r): try? JSONValue.parse(r.bytes)
        }
    }

    /// The canonical bytes (raw content: its bytes unchanged). Over 128 KiB → `.messageTooLarge`.
    public func encoded() throws(WireError) -> [UInt8] {
        let bytes: [UInt8]
        if case .raw(let r) = self { bytes = r.bytes } else { bytes = json?.serialized() ?? [] }
        guard bytes.count <= Self.maxEncodedSize else {
            throw .messageTooLarge(size: bytes.count, limit: Self.maxEncodedSize)
        }
        return bytes
    }

    /// Decodes content of type `objectName`. Types with a typed codec must match it (else
    /// `.badContent` / `.badJSON` naming the field and offset); every other type becomes `.raw`.
    public static func decode(objectName: String, bytes: [UInt8]) throws(WireError) -> MessageContent {
        guard typedObjectNames.contains(objectName) else {
            return .raw(RawContent(objectName: objectName, bytes: bytes))
        }
        let json: JSONValue, offsets: [Int]
        do {
            (json, offsets) = try JSONValue.parseWithMemberOffsets(bytes)
        } catch {
            if case .badJSON(let reason, let offset) = error {
                throw .badContent(objectName: objectName, field: nil, reason: "invalid JSON: \(reason)", offset: offset)
            }
            throw error
        }
        var r = ContentReader(objectName: objectName, json: json, offsets: offsets)
        switch objectName {
        case TextContent.objectName: return .text(try TextContent(&r))
        case RecallCommandContent.objectName: return .recallCommand(try RecallCommandContent(&r))
        case RecallNotificationContent.objectName: return .recallNotification(try RecallNotificationContent(&r))
        case ReadNotificationContent.objectName: return .readNotification(try ReadNotificationContent(&r))
        case SyncReadStatusContent.objectName: return .syncReadStatus(try SyncReadStatusContent(&r))
        case InformationNotificationContent.objectName: return .information(try InformationNotificationContent(&r))
        case TypingStatusContent.objectName: return .typingStatus(try TypingStatusContent(&r))
        default: return .chatroomKVNotification(try ChatroomKVNotificationContent(&r))
        }
    }

    /// Like `decode`, but malformed content of a typed type falls back to `.raw`: never fails.
    public static func decodeOrRaw(objectName: String, bytes: [UInt8]) -> MessageContent {
        (try? decode(objectName: objectName, bytes: bytes)) ?? .raw(RawContent(objectName: objectName, bytes: bytes))
    }
}

/// Content kept as bytes: images, files, custom types, unknown types, malformed content.
public struct RawContent: Sendable, Hashable {
    public var objectName: String
    public var bytes: [UInt8]

    public init(objectName: String, bytes: [UInt8]) {
        self.objectName = objectName
        self.bytes = bytes
    }

    /// Custom content from a JSON value (canonical bytes).
    public init(objectName: String, json: JSONValue) {
        self.init(objectName: objectName, bytes: json.serialized())
    }
}

/// Reads typed fields of a content object; errors name the field.
/// Reads typed fields of a content object; errors name the field and the offset of its value
/// (0 — the start of the content — for a missing field or a non-object).
struct ContentReader {
    let objectName: String
    let members: [JSONValue.Member]
    let offsets: [Int]
    let isObject: Bool

    init(objectName: String, json: JSONValue, offsets: [Int]) {
        self.objectName = objectName
        self.offsets = offsets
        if case .object(let m) = json { members = m; isObject = true } else { members = []; isObject = false }
    }

    func fail(_ field: String?, _ reason: String) -> WireError {
        var offset = 0
        if let field, let i = members.firstIndex(where: { $0.key == field }), i < offsets.count { offset = offsets[i] }
        return .badContent(objectName: objectName, field: field, reason: reason, offset: offset)
    }

    func requireObject() throws(WireError) {
        if !isObject { throw fail(nil, "content is not a JSON object") }
    }

    func value(_ key: String) -> JSONValue? {
        guard let v = members.first(where: { $0.key == key })?.value, v != .null else { return nil }
        return v
    }

    func string(_ key: String) throws(WireError) -> String {
        guard let s = try optionalString(key) else { throw fail(key, "missing") }
        return s
    }

    func optionalString(_ key: String) throws(WireError) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v else { throw fail(key, "expected a string") }
        return s
    }

    func int64(_ key: String) throws(WireError) -> Int64 {
        guard let n = try optionalInt64(key) else { throw fail(key, "missing") }
        return n
    }

    func optionalInt64(_ key: String) throws(WireError) -> Int64? {
        guard let v = value(key) else { return nil }
        guard case .number = v else { throw fail(key, "expected a number") }
        guard let n = v.int64Value else { throw fail(key, "expected an integer in Int64 range") }
        return n
    }

    func bool(_ key: String, default d: Bool) throws(WireError) -> Bool {
        guard let v = value(key) else { return d }
        guard case .bool(let b) = v else { throw fail(key, "expected true or false") }
        return b
    }
}
