import IMWire

// Send and receive (im-semantics §4): insert outgoing as SENDING → SENT / FAILED; store received
// with optional messageUId dedup; each updates the conversation in the same transaction.

extension IMStore {
    // MARK: Receive

    /// Stores one received message (direct delivery, pulled, or a sync echo) and updates its
    /// conversation (latest message; unread +1 if received, counted and unread). One transaction.
    ///
    /// With `options.dedupByMessageUId`, a messageUId already stored anywhere is not inserted
    /// again: `isNew == false` and `messageId` names the existing row. A `sentTime` of 0 (no server
    /// time) is replaced by `receivedTime`.
    public func storeReceived(_ message: ReceivedMessage) throws -> ReceivedInsertResult {
        try write { try insertReceived(message) }
    }

    /// Stores a batch (e.g. one pull response) in one transaction; results in input order.
    /// De-duplication also applies within the batch.
    public func storeReceived(_ batch: [ReceivedMessage]) throws -> [ReceivedInsertResult] {
        try write {
            var results: [ReceivedInsertResult] = []
            results.reserveCapacity(batch.count)
            for m in batch { results.append(try insertReceived(m)) }
            return results
        }
    }

    private func insertReceived(_ m: ReceivedMessage) throws -> ReceivedInsertResult {
        let sentTime = m.storedSentTime
        func insert(copy: Int64) throws -> Int64? {
            try insertRow(
                uid: m.messageUId, uidCopy: copy, conversation: m.conversation, sender: m.senderUserId,
                direction: m.direction, objectName: m.objectName, content: m.content, extra: m.extra,
                sentTime: sentTime, receivedTime: m.receivedTime, sentStatus: m.sentStatus,
                receivedStatus: m.receivedStatus, flags: m.flags, clientUniqueId: m.clientUniqueId)
        }
        var inserted = try insert(copy: 0)
        if inserted == nil, let uid = m.messageUId {
            // The messageUId is already stored (copy 0 exists).
            guard options.dedupByMessageUId else {
                inserted = try insert(copy: nextUIdCopy(uid))
                return try finishReceived(m, id: inserted!, sentTime: sentTime)
            }
            return ReceivedInsertResult(
                messageId: try firstRow(withUId: uid) ?? 0, isNew: false, conversationChanged: false,
                latestChanged: false, unreadDelta: 0)
        }
        return try finishReceived(m, id: inserted!, sentTime: sentTime)
    }

    private func finishReceived(_ m: ReceivedMessage, id: Int64, sentTime: Int64) throws -> ReceivedInsertResult {
        let delta = m.countsAsUnread ? 1 : 0
        let latestChanged = try bumpConversation(
            m.conversation, messageId: id, sentTime: sentTime, unreadDelta: delta,
            mentioned: delta == 1 && m.flags.contains(.mentioned))
        return ReceivedInsertResult(
            messageId: id, isNew: true, conversationChanged: latestChanged || delta != 0,
            latestChanged: latestChanged, unreadDelta: delta)
    }

    // MARK: Send

    /// Inserts a message the user sends, as SENDING with `sentTime = localTime`, before it goes on
    /// the wire; updates the conversation's latest message. One transaction.
    public func insertOutgoing(_ message: OutgoingMessage) throws -> OutgoingInsertResult {
        try write {
            let id = try insertRow(
                uid: nil, uidCopy: 0, conversation: message.conversation, sender: message.senderUserId, direction: .send,
                objectName: message.objectName, content: message.content, extra: message.extra,
                sentTime: message.localTime, receivedTime: message.localTime, sentStatus: .sending,
                receivedStatus: .unread, flags: message.flags, clientUniqueId: message.clientUniqueId)!
            let latestChanged = try bumpConversation(
                message.conversation, messageId: id, sentTime: message.localTime, unreadDelta: 0, mentioned: false)
            let stored = StoredMessage(
                messageId: id, messageUId: nil, conversation: message.conversation, senderUserId: message.senderUserId,
                direction: .send, objectName: message.objectName, content: message.content, extra: message.extra,
                sentTime: message.localTime, receivedTime: message.localTime, sentStatus: .sending,
                receivedStatus: .unread, flags: message.flags, clientUniqueId: message.clientUniqueId)
            return OutgoingInsertResult(messageId: id, message: stored, conversationChanged: latestChanged, latestChanged: latestChanged)
        }
    }

    /// PUBACK status 0: the row gets its messageUId and the server's `sentTime` and becomes SENT
    /// (from SENDING or FAILED). The conversation's latest message is recomputed, since the server
    /// time can reorder it. A duplicate messageUId is reported, not prevented.
    public func markSent(messageId: Int64, messageUId: String, sentTime: Int64) throws -> SentStatusUpdate {
        try write {
            guard let (key, status) = try sendState(messageId), status == .sending || status == .failed else {
                return try unchanged(messageId)
            }
            // The rows already holding the UId give both the copy number and the other rows to
            // report (the UPDATE changes only this row, so reading them first is the same).
            let rows = try rows(withUId: messageUId)
            let copy = Self.nextUIdCopy(rows)
            try connection.with("""
                UPDATE messages SET messageUId = ?2, uidCopy = ?4, sentTime = ?3, sentStatus = 30 WHERE messageId = ?1
                """) { s in
                try s.bind(messageId, at: 1)
                try s.bind(messageUId, at: 2)
                try s.bind(sentTime, at: 3)
                try s.bind(copy, at: 4)
                try s.run()
            }
            let others = rows.map(\.messageId).filter { $0 != messageId }
            let change = connection.conversationRowsDerived
                ? try refreshAfterSent(key, messageId: messageId, sentTime: sentTime)
                : try refreshConversation(key, unread: .delta(0))
            return SentStatusUpdate(
                updated: true, previousStatus: status, conversation: key,
                latestChanged: change?.latestChanged ?? false, otherRowsWithSameUId: others)
        }
    }

    /// The send failed (error or 30 s timeout): SENDING → FAILED. The row stays for a resend.
    public func markFailed(messageId: Int64) throws -> SentStatusUpdate {
        try transition(messageId, from: .sending, to: .failed)
    }

    /// A resend reuses the FAILED row: FAILED → SENDING.
    public func markResending(messageId: Int64) throws -> SentStatusUpdate {
        try transition(messageId, from: .failed, to: .sending)
    }

    private func transition(_ messageId: Int64, from: SentStatus, to: SentStatus) throws -> SentStatusUpdate {
        try write {
            guard let (key, status) = try sendState(messageId), status == from else { return try unchanged(messageId) }
            try connection.with("UPDATE messages SET sentStatus = ?2 WHERE messageId = ?1") { s in
                try s.bind(messageId, at: 1)
                try s.bind(to.rawValue, at: 2)
                try s.run()
            }
            return SentStatusUpdate(
                updated: true, previousStatus: status, conversation: key, latestChanged: false, otherRowsWithSameUId: [])
        }
    }

    /// The send state of an outgoing row (nil for a received one). The direction is read, not
    /// filtered in SQL, and the columns are `+column`s: the same row, ~6k fewer instructions to
    /// prepare on every connection that sends (issue 30).
    private func sendState(_ messageId: Int64) throws -> (ConversationKey, SentStatus)? {
        try connection.with("""
            SELECT +conversationType, +targetId, +sentStatus, +direction FROM messages WHERE messageId = ?1
            """) { s in
            try s.bind(messageId, at: 1)
            guard try s.step(), s.int64(3) == Int64(MessageDirection.send.rawValue) else { return nil }
            return (ConversationKey(try conversationType(s, 0), s.string(1)),
                    try enumValue(s, 2, "sentStatus", SentStatus.init(rawValue:)))
        }
    }

    private func unchanged(_ messageId: Int64) throws -> SentStatusUpdate {
        let state = try sendState(messageId)
        return SentStatusUpdate(
            updated: false, previousStatus: state?.1, conversation: state?.0, latestChanged: false, otherRowsWithSameUId: [])
    }

    // MARK: Rows

    /// The rows holding `uid` (one per copy), ascending messageId. One statement serves the first
    /// row, the next copy number and `markSent`'s other rows (each distinct statement costs every
    /// connection ~40k instructions to prepare; a UId has one row unless dedup was off).
    func rows(withUId uid: String) throws -> [(messageId: Int64, uidCopy: Int64)] {
        try connection.with(IndexedSQL.rowsWithUId) { s in
            try s.bind(uid, at: 1)
            var rows: [(messageId: Int64, uidCopy: Int64)] = []
            while try s.step() { rows.append((s.int64(0), s.int64(1))) }
            return rows
        }
    }

    /// The row holding the lowest copy of `uid` (copy 0, the first stored).
    func firstRow(withUId uid: String) throws -> Int64? {
        try rows(withUId: uid).min { $0.uidCopy < $1.uidCopy }?.messageId
    }

    /// The copy number a new row with `uid` gets: 0 if none is stored, else one past the highest.
    func nextUIdCopy(_ uid: String) throws -> Int64 {
        Self.nextUIdCopy(try rows(withUId: uid))
    }

    static func nextUIdCopy(_ rows: [(messageId: Int64, uidCopy: Int64)]) -> Int64 {
        rows.map(\.uidCopy).max().map { $0 + 1 } ?? 0
    }

    /// Inserts a row; nil when (messageUId, uidCopy) is already stored.
    ///
    /// The VALUES list follows the table's column order (`messageId` NULL: AUTOINCREMENT picks it)
    /// instead of naming the 15 columns: resolving the names cost ~23k of the ~120k instructions
    /// every connection pays to prepare this statement (issue 30; a device store again after each
    /// app kill). Same row. A migration that adds a column makes this statement fail loudly
    /// ("table messages has N columns but 16 values were supplied"); `StatementPreparationTests`
    /// pins the order.
    func insertRow(
        uid: String?, uidCopy: Int64, conversation: ConversationKey, sender: String, direction: MessageDirection,
        objectName: String, content: String, extra: String?, sentTime: Int64, receivedTime: Int64,
        sentStatus: SentStatus, receivedStatus: ReceivedStatus, flags: MessageFlags, clientUniqueId: Int64?
    ) throws -> Int64? {
        try connection.with("""
            INSERT INTO messages VALUES (NULL, ?1, ?15, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
            ON CONFLICT DO NOTHING
            """) { s in
            try s.bind(uid, at: 1)
            try s.bind(conversation, at: 2)
            try s.bind(sender, at: 4)
            try s.bind(direction.rawValue, at: 5)
            try s.bind(objectName, at: 6)
            try s.bind(content, at: 7)
            try s.bind(extra, at: 8)
            try s.bind(sentTime, at: 9)
            try s.bind(receivedTime, at: 10)
            try s.bind(sentStatus.rawValue, at: 11)
            try s.bind(receivedStatus.rawValue, at: 12)
            try s.bind(flags.rawValue, at: 13)
            try s.bind(clientUniqueId, at: 14)
            try s.bind(uidCopy, at: 15)
            return try s.run() == 1 ? connection.lastInsertRowid : nil
        }
    }
}
