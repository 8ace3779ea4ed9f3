import CSQLite
import IMWire

// Row decoding. Every SELECT of messages lists the columns in this order (0-based):
// messageId, messageUId, conversationType, targetId, senderUserId, direction, objectName, content,
// extra, sentTime, receivedTime, sentStatus, receivedStatus, flags, clientUniqueId
//
// Each as `+column`: an expression, so SQLite records no declared type and origin for it (with
// SQLITE_ENABLE_COLUMN_METADATA, as Debian builds it, ~2k instructions a column in every prepare,
// and every device prepares these again at each store open). Same values, same query plans.

enum MessageRow {
    static let columns = [
        "messageId", "messageUId", "conversationType", "targetId", "senderUserId", "direction",
        "objectName", "content", "extra", "sentTime", "receivedTime", "sentStatus", "receivedStatus",
        "flags", "clientUniqueId",
    ]

    static func decode(_ s: Statement) throws -> StoredMessage {
        assert((0..<s.columnCount).map { s.columnName($0).trimmingPrefix("+") } == columns.map { Substring($0) },
               "message SELECT columns out of order: \(s.sql)")
        let id = s.int64(0)
        return StoredMessage(
            messageId: id,
            messageUId: s.optionalString(1),
            conversation: ConversationKey(try conversationType(s, 2), s.string(3)),
            senderUserId: s.string(4),
            direction: try enumValue(s, 5, "direction", MessageDirection.init(rawValue:)),
            objectName: s.string(6),
            content: s.string(7),
            extra: s.optionalString(8),
            sentTime: s.int64(9),
            receivedTime: s.int64(10),
            sentStatus: try enumValue(s, 11, "sentStatus", SentStatus.init(rawValue:)),
            receivedStatus: ReceivedStatus(rawValue: try int32(s, 12, "receivedStatus")),
            flags: MessageFlags(rawValue: try int32(s, 13, "flags")),
            clientUniqueId: s.optionalInt64(14))
    }

    static func decodeAll(_ s: Statement) throws -> [StoredMessage] {
        var out: [StoredMessage] = []
        while try s.step() { out.append(try decode(s)) }
        return out
    }
}

/// Conversation SELECTs list: conversationType, targetId, latestMessageId, latestTime, unreadCount,
/// hasUnreadMentioned, isTop, draft, notificationStatus, readReceiptTime (as `+column`, as above).
enum ConversationRow {
    static func decode(_ s: Statement) throws -> StoredConversation {
        StoredConversation(
            key: ConversationKey(try conversationType(s, 0), s.string(1)),
            latestMessageId: s.optionalInt64(2),
            latestTime: s.int64(3),
            unreadCount: s.int(4),
            hasUnreadMentioned: s.bool(5),
            isTop: s.bool(6),
            draft: s.optionalString(7),
            notificationStatus: try enumValue(s, 8, "notificationStatus", ConversationNotificationStatus.init(rawValue:)),
            readReceiptTime: s.int64(9))
    }
}

func int32(_ s: Statement, _ column: Int32, _ name: String) throws -> Int32 {
    let v = s.int64(column)
    guard let i = Int32(exactly: v) else { throw StoreError.badValue(name, v, sql: s.sql) }
    return i
}

func enumValue<T>(_ s: Statement, _ column: Int32, _ name: String, _ make: (Int32) -> T?) throws -> T {
    let raw = try int32(s, column, name)
    guard let v = make(raw) else { throw StoreError.badValue(name, Int64(raw), sql: s.sql) }
    return v
}

func conversationType(_ s: Statement, _ column: Int32) throws -> ConversationType {
    try enumValue(s, column, "conversationType", ConversationType.init(rawValue:))
}

extension Statement {
    /// Binds a conversation key to parameters `index` (type) and `index + 1` (targetId).
    func bind(_ key: ConversationKey, at index: Int32) throws {
        try bind(key.type.rawValue, at: index)
        try bind(key.targetId, at: index + 1)
    }
}
