import IMWire
import SimKernel

// The ledger's read of a store: what `conversationList()` lists, each conversation with its
// messages in history order. A run's end reads 1,000+ stores, each preparing its statements once
// on its own connection, so preparing costs as much as reading: the conversations come through
// the conversation list's statement (already prepared), and the one statement of its own is lean,
// one scan of the messages with only the columns the ledger shows (a join costs more to prepare and seeks an index per conversation and the
// table per message). Their results are `+column`: an expression, for which SQLite records no
// declared type and origin (four allocations a column in every prepare when the library is built
// with SQLITE_ENABLE_COLUMN_METADATA, as Debian's is) — the value is the column's, unchanged.

/// A listed conversation as the ledger reads it.
public struct LedgerConversation: Sendable, Hashable {
    public var key: ConversationKey
    public var unreadCount: Int
    /// History order, oldest first (as `allMessagesInHistoryOrder` lists them).
    public var messages: [LedgerMessage]
}

/// A message as the ledger reads it: the row's visible fields, the content only hashed.
public struct LedgerMessage: Sendable, Hashable {
    public var messageId: Int64
    public var messageUId: String?
    public var senderUserId: String
    public var direction: MessageDirection
    public var objectName: String
    public var sentTime: Int64
    public var sentStatus: SentStatus
    public var receivedStatus: ReceivedStatus
    /// `StableHash.fnv1a` of the content's UTF-8 bytes, hashed where SQLite keeps them.
    public var contentHash: UInt64
}

extension IMStore {
    /// The conversation list's conversations (every type but chatrooms) ordered by type, then
    /// targetId's UTF-8 bytes, each with its messages in history order.
    public func ledgerConversations() throws -> [LedgerConversation] {
        try read {
            var out = try ledgerConversationRows()
            // No listed conversation: the message scan would keep nothing (a run's end reads
            // 1,000+ stores, most of them with nothing listed in short runs).
            if out.isEmpty { return out }
            // Prepared for this one read, not cached: without SQLITE_PREPARE_PERSISTENT its memory
            // comes from the connection's lookaside, so finalizing it right after is nearly free,
            // where a cached statement's ~90 allocations were freed one by one when the world
            // closed its stores (~17k instructions a store; the prepare itself costs the same).
            let s = try connection.prepareRead("""
                SELECT +messageId, +messageUId, +conversationType, +targetId, +senderUserId, +direction,
                       +objectName, +sentTime, +sentStatus, +receivedStatus, +content
                FROM messages WHERE conversationType <> ?1
                """)
            try s.bind(ConversationType.chatroom.rawValue, at: 1)
            while try s.step() {
                // Messages of a conversation removed from the list stay out, as they do there.
                guard let i = LedgerRow.conversation(s, in: out) else { continue }
                out[i].messages.append(try LedgerRow.message(s))
            }
            // Sorted here, not by SQLite (an ORDER BY would need its sorter or an index walk).
            for i in out.indices { out[i].messages.sort(by: precedesInHistory) }
            return out
        }
    }

    /// The listed conversations, without messages, ordered by type, then targetId's bytes.
    private func ledgerConversationRows() throws -> [LedgerConversation] {
        // Read through `conversationList()`'s statement, which every started client has already
        // prepared on this connection (its startup lists chatroom rows): preparing a statement
        // of its own cost as much as the rest of a small store's ledger. Its ORDER BY is the
        // list's, not the ledger's: sorted here.
        var out = try conversationList().map { LedgerConversation(key: $0.key, unreadCount: $0.unreadCount, messages: []) }
        out.sort { a, b in
            a.key.type != b.key.type ? a.key.type < b.key.type : LedgerRow.compare(a.key.targetId, b.key.targetId) < 0
        }
        return out
    }
}

/// Row decoding of `ledgerConversations()`'s message SELECT (0-based): messageId, messageUId,
/// conversationType, targetId, senderUserId, direction, objectName, sentTime, sentStatus,
/// receivedStatus, content.
enum LedgerRow {
    /// The index in `list` (ordered by type, then targetId's bytes) of the row's conversation,
    /// nil when it is not listed: a binary search on the row's own bytes, no String or hash a row.
    static func conversation(_ s: Statement, in list: [LedgerConversation]) -> Int? {
        let type = s.int64(2)
        return s.withText(3) { targetId in
            var lo = 0, hi = list.count
            while lo < hi {
                let mid = (lo + hi) / 2
                let key = list[mid].key
                let order = Int64(key.type.rawValue) != type ? (Int64(key.type.rawValue) < type ? -1 : 1)
                    : compare(key.targetId, targetId)
                if order == 0 { return mid }
                if order < 0 { lo = mid + 1 } else { hi = mid }
            }
            return nil
        }
    }

    /// -1, 0 or 1 as `a`'s UTF-8 bytes sort before, equal or after `b`, as SQLite's BINARY
    /// collation (memcmp, then length) orders them.
    static func compare(_ a: String, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        if let order = a.utf8.withContiguousStorageIfAvailable({ compare($0, b) }) { return order }
        return Array(a.utf8).withUnsafeBufferPointer { compare($0, b) }
    }

    static func compare(_ a: String, _ b: String) -> Int {
        if let order = b.utf8.withContiguousStorageIfAvailable({ compare(a, $0) }) { return order }
        return Array(b.utf8).withUnsafeBufferPointer { compare(a, $0) }
    }

    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        for i in 0..<min(a.count, b.count) where a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    static func message(_ s: Statement) throws -> LedgerMessage {
        LedgerMessage(
            messageId: s.int64(0),
            messageUId: s.optionalString(1),
            senderUserId: s.string(4),
            direction: try enumValue(s, 5, "direction", MessageDirection.init(rawValue:)),
            objectName: s.string(6),
            sentTime: s.int64(7),
            sentStatus: try enumValue(s, 8, "sentStatus", SentStatus.init(rawValue:)),
            receivedStatus: ReceivedStatus(rawValue: try int32(s, 9, "receivedStatus")),
            contentHash: s.withText(10) { StableHash.fnv1a($0) })
    }
}

/// A row's place in history order.
protocol HistoryOrdered {
    var sentTime: Int64 { get }
    var messageUId: String? { get }
    var messageId: Int64 { get }
}

extension StoredMessage: HistoryOrdered {}
extension LedgerMessage: HistoryOrdered {}

/// History order: sentTime, then messageUId as SQLite's BINARY collation compares it (UTF-8
/// bytes; no uid sorts as ''), then messageId — `history(in:)`'s ORDER BY, ascending.
func precedesInHistory<M: HistoryOrdered>(_ a: M, _ b: M) -> Bool {
    if a.sentTime != b.sentTime { return a.sentTime < b.sentTime }
    let ua = a.messageUId ?? "", ub = b.messageUId ?? ""
    if ua != ub { return ua.utf8.lexicographicallyPrecedes(ub.utf8) }
    return a.messageId < b.messageId
}
