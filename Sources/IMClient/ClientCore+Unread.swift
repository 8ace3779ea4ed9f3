import IMStore
import IMWire

// The SDK's app-facing unread answers (getConversation's unread count and mention flag,
// getTotalUnreadCount): the store's, except where a `clearUnread` is owed (a storage fault left
// its write undone, ClientCore+StoreRetry) — there they show what the app asked, as local history
// does (`showOwedReads`): the conversation answers as the retry will leave it, the rows the app
// could read when it asked cleared up to the owed time; a message after that time, or stored
// while the clear was owed, still counts. The app is never told the write failed.
extension ClientCore {
    /// One conversation as the app reads it (nil: no row); its unread count and mention flag
    /// take an owed clear into account (everyday-storage --swarm seed 6831: a typing status 47 ms
    /// after a clear that failed on a full disk showed the old count).
    /// A left room whose row removal is owed answers as the removal will leave it (nil when no
    /// row stored after the quit remains).
    public func conversation(_ key: ConversationKey) throws -> StoredConversation? {
        if let upTo = hiddenRoomRows(key) { return try store.conversationAfterQuit(key, upTo: upTo) }
        guard var c = try store.conversation(key) else { return nil }
        if hasOwedClear(key) { (c.unreadCount, c.hasUnreadMentioned) = try unreadAfterOwedClears(key) }
        return c
    }

    /// The sum of the conversations' unread counts as the app reads them (`conversation(_:)`;
    /// a room's rows never count unread, so hidden room rows change nothing here).
    public func totalUnreadCount() throws -> Int {
        var total = try store.totalUnreadCount()
        guard !owedClearUnreads.isEmpty else { return total }
        // One adjustment per conversation with an owed clear.
        for key in Set(owedClearUnreads.map(\.conversation)).sorted() {
            guard let stored = try store.conversation(key) else { continue }
            total += try unreadAfterOwedClears(key).count - stored.unreadCount
        }
        return total
    }

    /// The number of the conversation's messages the app's local history holds (oracles: a left
    /// room whose removal is owed holds only the rows stored after it left).
    public func messageCount(in key: ConversationKey) throws -> Int {
        if let upTo = hiddenRoomRows(key) { return try store.messageCount(in: key, above: upTo) }
        return try store.messageCount(in: key)
    }

    func hasOwedClear(_ key: ConversationKey) -> Bool {
        owedClearUnreads.contains { $0.conversation == key }
    }

    /// Whether an owed clear of `key` covers a received row (one the app could read when it asked).
    func owedClearCovers(_ key: ConversationKey, messageId: Int64, sentTime: Int64) -> Bool {
        owedClearUnreads.contains { $0.conversation == key && $0.covers(messageId: messageId, sentTime: sentTime) }
    }

    /// The unread count and mention flag the owed clears' retries will leave: the unread rows
    /// none of them covers.
    private func unreadAfterOwedClears(_ key: ConversationKey) throws -> (count: Int, mentioned: Bool) {
        var count = 0, mentioned = false
        for r in try store.unreadRows(in: key) where !owedClearCovers(key, messageId: r.messageId, sentTime: r.sentTime) {
            count += 1
            mentioned = mentioned || r.mentionsUser
        }
        return (count, mentioned)
    }
}
