import IMWire

/// Read-only queries for the oracles (IMWorld's store rules): the columns a check compares and
/// nothing else, so judging a device's store does not decode whole rows. Each answers what the
/// app-facing reads (`message(id:)`, `conversation(_:)` + `countUnreadCandidates(in:)`, paging
/// `history(in:before:count:)`) would, restricted to those columns.
extension IMStore {
    /// A message's conversation and sentTime (what `message(id:)` holds in those fields); nil
    /// when there is no such row.
    public func conversationAndSentTime(ofMessage id: Int64) throws -> (conversation: ConversationKey, sentTime: Int64)? {
        try read {
            try connection.with("""
                SELECT conversationType, targetId, sentTime FROM messages WHERE messageId = ?1
                """) { s in
                try s.bind(id, at: 1)
                guard try s.step() else { return nil }
                return (ConversationKey(try conversationType(s, 0), s.string(1)), s.int64(2))
            }
        }
    }

    /// A conversation's unread count and mention flag as stored, with the recount of its
    /// received, counted, unread, not-recalled messages (`countUnreadCandidates(in:)`), in one
    /// statement; nil when the conversation has no row.
    public func unreadState(of key: ConversationKey) throws -> UnreadState? {
        try read {
            try connection.with("""
                SELECT unreadCount, hasUnreadMentioned,
                       (SELECT COUNT(*) FROM messages
                        WHERE conversationType = ?1 AND targetId = ?2 AND direction = 2
                          AND (flags & 2) <> 0 AND (receivedStatus & 1) = 0 AND objectName <> ?3)
                FROM conversations WHERE conversationType = ?1 AND targetId = ?2
                """) { s in
                try s.bind(key, at: 1)
                try s.bind(Self.recallNotificationObjectName, at: 3)
                guard try s.step() else { return nil }
                return UnreadState(unreadCount: s.int(0), hasUnreadMentioned: s.bool(1), unreadCandidates: s.int(2))
            }
        }
    }

    /// The messageUIds of a conversation in history order — newest first, (sentTime,
    /// messageUId, messageId) descending — at most `limit`: the concatenation of the pages
    /// `history(in:before:count:)` returns when paged from the newest message, in one statement.
    public func historyUIds(in key: ConversationKey, limit: Int) throws -> [String?] {
        try read {
            try connection.with("""
                SELECT messageUId FROM messages
                WHERE conversationType = ?1 AND targetId = ?2
                  AND (sentTime, COALESCE(messageUId, ''), messageId) < (?3, '', ?3)
                ORDER BY sentTime DESC, COALESCE(messageUId, '') DESC, messageId DESC LIMIT ?4
                """) { s in
                try s.bind(key, at: 1)
                try s.bind(Int64.max, at: 3)
                try s.bind(limit, at: 4)
                var out: [String?] = []
                while try s.step() { out.append(s.optionalString(0)) }
                return out
            }
        }
    }
}

/// `unreadState(of:)`'s answer.
public struct UnreadState: Sendable, Equatable {
    public var unreadCount: Int
    public var hasUnreadMentioned: Bool
    /// `countUnreadCandidates(in:)`.
    public var unreadCandidates: Int
}
