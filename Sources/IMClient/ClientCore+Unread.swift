import IMStore
import IMWire

// The SDK's app-facing unread answers (getConversation's unread count and mention flag,
// getTotalUnreadCount): the store's, except where a `clearUnread` is owed (a storage fault left
// its write undone, ClientCore+StoreRetry) — there they show what the app asked, as local history
// does (`showOwedReads`): the conversation answers as the retry will leave it, cleared up to the
// owed time; a message after that time still counts. The app is never told the write failed.
extension ClientCore {
    /// One conversation as the app reads it (nil: no row); its unread count and mention flag
    /// take an owed clear into account (everyday-storage --swarm seed 6831: a typing status 47 ms
    /// after a clear that failed on a full disk showed the old count).
    /// A left room whose row removal is owed answers as the removal will leave it (nil when no
    /// row stored after the quit remains).
    public func conversation(_ key: ConversationKey) throws -> StoredConversation? {
        if let upTo = hiddenRoomRows(key) { return try store.conversationAfterQuit(key, upTo: upTo) }
        guard var c = try store.conversation(key) else { return nil }
        if let upTo = owedClearUpTo(key) {
            (c.unreadCount, c.hasUnreadMentioned) = try store.unreadAfterClear(in: key, upTo: upTo)
        }
        return c
    }

    /// The sum of the conversations' unread counts as the app reads them (`conversation(_:)`;
    /// a room's rows never count unread, so hidden room rows change nothing here).
    public func totalUnreadCount() throws -> Int {
        var total = try store.totalUnreadCount()
        guard !owedClearUnreads.isEmpty else { return total }
        // One adjustment per conversation with an owed clear.
        for key in Set(owedClearUnreads.map(\.conversation)).sorted() {
            guard let upTo = owedClearUpTo(key), let stored = try store.conversation(key) else { continue }
            total += try store.unreadAfterClear(in: key, upTo: upTo).unreadCount - stored.unreadCount
        }
        return total
    }

    /// The number of the conversation's messages the app's local history holds (oracles: a left
    /// room whose removal is owed holds only the rows stored after it left).
    public func messageCount(in key: ConversationKey) throws -> Int {
        if let upTo = hiddenRoomRows(key) { return try store.messageCount(in: key, above: upTo) }
        return try store.messageCount(in: key)
    }

    /// The latest time an owed clear of `key` reads up to (nil: none owed).
    func owedClearUpTo(_ key: ConversationKey) -> Int64? {
        guard !owedClearUnreads.isEmpty else { return nil }
        var upTo: Int64?
        for c in owedClearUnreads where c.conversation == key { upTo = max(upTo ?? .min, c.upTo) }
        return upTo
    }
}
