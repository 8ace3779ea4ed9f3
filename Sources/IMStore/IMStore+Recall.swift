import IMWire

// Recall (im-semantics §7): the original is replaced by a recall notification that keeps its
// messageId, messageUId and sentTime.

extension IMStore {
    /// Replaces the referenced message(s) with a recall notification: objectName `RC:RcNtf`,
    /// content `notificationContent` (JSON built by the caller), no extra, flags `.persisted`
    /// (shown, not counted). messageId, messageUId, times and statuses are kept.
    ///
    /// `.messageUId` recalls every row with that id (several only with dedup off). A recalled
    /// message that was unread and counted decrements its conversation's unread count when
    /// `options.recallDecrementsUnread` (off: the count keeps it — bug B14 — until a
    /// `clearUnread` recounts). Rows already recalled are reported, not changed. One transaction.
    public func recall(_ target: MessageReference, notificationContent: String) throws -> RecallResult {
        try write {
            let rows: [StoredMessage]
            switch target {
            case .messageId(let id):
                rows = try message(id: id).map { [$0] } ?? []
            case .messageUId(let uid):
                rows = try messages(withUId: uid)
            }
            var recalled: [Int64] = []
            var already: [Int64] = []
            var deltas: [ConversationKey: Int] = [:]
            for row in rows {
                if row.isRecalled {
                    already.append(row.messageId)
                    continue
                }
                try connection.with("""
                    UPDATE messages SET objectName = ?2, content = ?3, extra = NULL, flags = ?4 WHERE messageId = ?1
                    """) { s in
                    try s.bind(row.messageId, at: 1)
                    try s.bind(Self.recallNotificationObjectName, at: 2)
                    try s.bind(notificationContent, at: 3)
                    try s.bind(MessageFlags.persisted.rawValue, at: 4)
                    try s.run()
                }
                recalled.append(row.messageId)
                let decrement = row.isUnreadCounted && options.recallDecrementsUnread ? -1 : 0
                deltas[row.conversation, default: 0] += decrement
            }
            var changes: [ConversationChange] = []
            for key in deltas.keys.sorted() {
                guard var change = try refreshConversation(key, unread: .delta(deltas[key]!)) else { continue }
                // The latest message's content changed even though its id and time did not.
                if let latest = change.latestMessageId, recalled.contains(latest) { change.latestChanged = true }
                changes.append(change)
            }
            return RecallResult(recalledMessageIds: recalled.sorted(), alreadyRecalledMessageIds: already.sorted(), conversations: changes)
        }
    }
}
