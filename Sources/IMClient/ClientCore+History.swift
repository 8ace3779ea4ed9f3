import IMStore
import IMWire

// Local history (messageId cursor, ≤ 20 per page) and cloud history (qryPMsg/qryGMsg/qryCHMsg).
extension ClientCore {
    mutating func localHistory(_ conversation: ConversationKey, before messageId: Int64, count: Int32) {
        let n = Int(max(0, min(count, Int32(IMStore.historyPageLimit))))
        var page: [StoredMessage] = []
        do {
            if config.bugs.contains(.b5) {
                page = try offsetHistoryPage(conversation, continuing: messageId != -1, count: n)
            } else {
                // A left room whose removal is owed shows only rows stored after it left.
                page = try store.history(in: conversation, before: messageId, count: n, above: hiddenRoomRows(conversation) ?? 0)
            }
        } catch {
            storeError("history \(conversation)", error)
        }
        showOwedReads(conversation, in: &page)
        out.callback(.history(conversation: conversation, messages: page))
    }

    /// A `clearUnread` the store has not taken yet (owed after a storage fault): the page shows
    /// the received rows it covers as read, as the app asked — the app is never told the write
    /// failed, and the retry makes the rows say so (everyday-storage --swarm seeds 588, 750, 809,
    /// 1398: history read during the fault window showed a row the app had read as unread).
    private func showOwedReads(_ conversation: ConversationKey, in page: inout [StoredMessage]) {
        guard hasOwedClear(conversation) else { return }
        for i in page.indices where page[i].direction == .receive
            && owedClearCovers(conversation, messageId: page[i].messageId, sentTime: page[i].sentTime) {
            page[i].receivedStatus.insert(.read)
        }
    }

    /// B5 (SDK 4.0.3 Dev): the pager continues by *offset* into the conversation in sentTime
    /// order (newest first) and counts every live message stored meanwhile as "one more row in
    /// the list". A live message older than the page boundary (a pulled offline message) shifts
    /// the window by one: the message at the boundary is never returned — a gap.
    private mutating func offsetHistoryPage(_ conversation: ConversationKey, continuing: Bool, count: Int) throws -> [StoredMessage] {
        let offset = continuing ? historyPagers[conversation] ?? 0 : 0
        var all = try store.messages(in: conversation, sentTime: Int64.min...Int64.max)
        if let upTo = hiddenRoomRows(conversation) { all.removeAll { $0.messageId <= upTo } }
        // Newest first: descending (sentTime, messageId).
        let start = all.count - offset
        let page = start > 0 ? Array(all[max(0, start - count)..<start].reversed()) : []
        historyPagers[conversation] = offset + page.count
        return page
    }

    /// `after`: the oldest `count` after `time` (order 1); else the newest `count` before it (order 0).
    mutating func remoteHistory(_ conversation: ConversationKey, time: Int64, count: Int32, after: Bool) {
        guard (1...200).contains(count), let topic = Topic.history(of: conversation.type) else {
            return out.callback(.remoteHistory(conversation: conversation, messages: [], error: IMErrorCode.invalidParameter.rawValue))
        }
        guard hasSession else {
            return out.callback(.remoteHistory(conversation: conversation, messages: [], error: ClientErrorCode.notConnected))
        }
        var input = RMTPHistoryMsgInput()
        input.targetID = conversation.targetId
        input.time = time
        input.count = count
        input.order = after ? 1 : 0
        query(topic, target: conversation.targetId, body: built(input), .remoteHistory(conversation))
    }

    /// Cloud history is returned to the app, not written to the local store (messageId 0).
    mutating func remoteHistoryAnswered(_ conversation: ConversationKey, _ q: Frame.QueryAck) {
        guard q.status == 0 else {
            return out.callback(.remoteHistory(conversation: conversation, messages: [], error: Int32(q.status)))
        }
        guard let output = try? q.decodeBody(RMTPHistoryMsgOuput.self) else {
            return out.callback(.remoteHistory(conversation: conversation, messages: [], error: IMErrorCode.invalidParameter.rawValue))
        }
        let messages = output.list.map { d -> StoredMessage in
            let m = IncomingMessage(d)
            var flags: MessageFlags = []
            if case .stored(let f) = ReceiveKind.of(m) { flags = f }
            return ReceiveKind.row(ReceiveKind.received(m, flags: flags, localTime: now.milliseconds), messageId: 0)
        }
        out.callback(.remoteHistory(conversation: conversation, messages: messages, error: nil))
    }
}
