import IMStore
import IMWire

// The inbox/sendbox sync (wire-protocol §4): pull after CONNACK, on `s_ntf`, optionally on a poll
// timer; keep only messages newer than their direction's cursor; inbox := response syncTime,
// sendbox := newest sent dataTime; pull again while `finished == false` or a newer notify is queued.
extension ClientCore {
    /// `s_ntf` (type ≠ 2): go pull — unless its time is not past the inbox cursor.
    mutating func inboxNotify(_ n: RMTPNotifyMsg) {
        if n.hasTime, n.time <= inboxCursor {
            return out.note(.skipped(messageUId: nil, conversation: ConversationKey(.privateChat, userId),
                                     reason: "s_ntf time \(n.time) ≤ inbox cursor \(inboxCursor)"))
        }
        if sync.canStartPull {
            startPull(reason: "s_ntf")
        } else {
            // A pull runs (or the link check does): remember the notify for when it ends.
            sync.queueNotify(n.hasTime ? n.time : .max)
        }
    }

    /// Starts a pull if none runs.
    mutating func startPull(reason: String) {
        guard hasSession, sync.canStartPull else { return }
        sendPullRequest()
    }

    private mutating func sendPullRequest() {
        var r = RMTPSyncRequestMsg()
        r.syncTime = inboxCursor
        r.sendBoxSyncTime = sendboxCursor
        if cursorsUnsure {
            // Re-asking for a window below the cursors (`repullWindow`): the server returns what
            // is newer than the time asked for.
            let from = repullFrom ?? (inbox: max(0, inboxCursor - config.repullWindow), sendbox: max(0, sendboxCursor - config.repullWindow))
            repullFrom = from
            (r.syncTime, r.sendBoxSyncTime) = (from.inbox, from.sendbox)
        }
        r.ispolling = false
        r.isPullSend = true
        let id = query(.pullMsg, target: userId, body: built(r), .pull)
        syncChange("pullMsg #\(id) from inbox \(r.syncTime), sendbox \(r.sendBoxSyncTime)") { $0.pullSent(messageId: id) }
    }

    mutating func queryAckReceived(_ q: Frame.QueryAck) {
        // QUERYCON for every QUERYACK with qos ≠ 0 — also a re-sent one we no longer wait for,
        // or the server keeps re-sending it.
        if q.flags.qos != .atMostOnce { write(.queryConfirm(Frame.QueryConfirm(messageId: q.messageId))) }
        guard let request = requests.complete(q.messageId, isQuery: true) else {
            out.note(.ignored(input: "QUERYACK #\(q.messageId)", reason: "no QUERY waiting (late or repeated)"))
            return
        }
        out.cancelTimer(.requestTimeout(messageId: q.messageId))
        switch request {
        case .pull:
            pullAnswered(q)
        case .join(let roomId, let kind):
            joinAnswered(roomId, kind: kind, q)
        case .quit:
            break
        case .chatroomPull(let roomId, let isJoinPull):
            chatroomPullAnswered(roomId, isJoinPull: isJoinPull, q)
        case .pullKV(let roomId, let generation):
            pullKVAnswered(roomId, generation: generation, q)
        case .changeKV(let roomId, let key, _):
            out.callback(.chatroomKVResult(roomId: roomId, key: key, error: q.status == 0 ? nil : Int32(q.status)))
        case .remoteHistory(let conversation):
            remoteHistoryAnswered(conversation, q)
        case .readTime(let conversation):
            if q.status != 0 { out.note(.ignored(input: "updRRTime \(conversation)", reason: "refused with \(q.status)")) }
        case .message, .recall, .command:
            break
        }
    }

    private mutating func pullAnswered(_ q: Frame.QueryAck) {
        guard q.status == 0 else {
            syncChange("pullMsg refused with \(q.status)") { $0.pullEnded(synced: false) }
            return
        }
        var page: RMTPDownStreamMessages
        do {
            page = try q.decodeBody(RMTPDownStreamMessages.self)
        } catch {
            syncChange("pullMsg answer undecodable: \(error)") { $0.pullEnded(synced: false) }
            return
        }
        var items: [IncomingMessage] = []
        items.reserveCapacity(page.list.count)
        var newestSent: Int64?
        for k in page.list.indices {
            let m = IncomingMessage(page.takeMessage(at: k))
            let cursor: Int64
            if m.direction == .send {
                newestSent = max(newestSent ?? .min, m.dataTime)
                cursor = sendboxCursor
            } else {
                cursor = inboxCursor
            }
            // At or below the cursor: only in a re-pulled window (asked from below it).
            let inWindow = cursorsUnsure && m.dataTime <= cursor && cursor > 0
            guard m.dataTime > cursor || inWindow else {
                out.note(.skipped(messageUId: m.messageUId, conversation: m.conversation,
                                  reason: "dataTime \(m.dataTime) ≤ \(m.direction == .send ? "sendbox" : "inbox") cursor \(cursor)"))
                continue
            }
            if inWindow, !(m.direction == .send && isOwnDevice(m.clientUniqueId)), storedAlready(m) {
                continue
            }
            if m.direction == .send, isOwnDevice(m.clientUniqueId), !ownCopyReceived(m, path: "pull") {
                continue
            }
            items.append(m)
        }
        guard deliver(items, hasPackage: !page.finished, path: "pull", inbox: page.syncTime, sendbox: newestSent.map(sendboxBound)) else {
            // Not stored: the cursors did not move; the next pull fetches the page again.
            syncChange("pullMsg page not stored") { $0.pullEnded(synced: false) }
            pullAfterStoreFailure = true
            return
        }
        // Stored with the page: the window ends once the pages reach both cursors.
        if cursorsUnsure, !page.finished, let from = repullFrom {
            let next = (inbox: max(from.inbox, page.syncTime), sendbox: max(from.sendbox, newestSent ?? .min))
            repullFrom = next
            if next.inbox >= inboxCursor, next.sendbox >= sendboxCursor { endRepull() }
        } else {
            endRepull()
        }
        if page.finished { pullAfterStoreFailure = false }
        if !page.finished {
            return sendPullRequest()
        }
        if let queued = sync.takeQueuedNotify() {
            if queued > inboxCursor { return sendPullRequest() }
            out.note(.skipped(messageUId: nil, conversation: ConversationKey(.privateChat, userId),
                              reason: "queued s_ntf time \(queued) ≤ inbox cursor \(inboxCursor)"))
        }
        syncChange("finished") { $0.pullEnded(synced: true) }
    }

    mutating func endRepull() {
        cursorsUnsure = false
        repullFrom = nil
    }

    /// A message re-pulled below its cursor whose messageUId a row already holds: not
    /// stored again. A store error keeps it (a duplicate row is recoverable, a loss is not).
    private mutating func storedAlready(_ m: IncomingMessage) -> Bool {
        guard let uid = m.messageUId else { return false }
        do {
            guard try store.countRows(withUId: uid) > 0 else { return false }
        } catch {
            storeError("re-pulled \(uid) below the cursor", error)
            return false
        }
        out.note(.skipped(messageUId: uid, conversation: m.conversation, reason: "re-pulled below the cursor: already stored"))
        return true
    }

    /// Where the sendbox cursor may go: not past an own message whose SENT update is owed. The
    /// cursor's commit would outlive that update's in a power loss (a WAL keeps a prefix of its
    /// commits) and no sendbox pull would return the copy that completes the row again
    /// (everyday-storage --swarm seed 1944: a later send's PUBACK moved it past the owed one).
    func sendboxBound(_ value: Int64) -> Int64 {
        guard !owedSentMarks.isEmpty else { return value }
        return min(value, owedSentMarks.map(\.serverTime).min()! - 1)
    }

    /// An own send's SENT time is recorded: sendbox := that time — only when in sync, so that
    /// messages of the user's other devices with an older dataTime that are still unpulled are not
    /// skipped. Not for a chatroom message (wire-protocol §4: chatroom messages never move the
    /// inbox/sendbox cursors): a room's dataTime is its own sequence, and one bumped past the
    /// millisecond moved the cursor past an own message accepted after it in that millisecond,
    /// whose SENT update a power loss then took back (quickstart-storage --swarm 11394, 12833).
    mutating func ownSendRecorded(in conversation: ConversationKey, at time: Int64, reason: String) {
        guard sync.isInSync, conversation.type != .chatroom else { return }
        moveSendbox(to: time, reason: reason)
    }

    /// Moves the sendbox cursor forward (own sends while in sync).
    mutating func moveSendbox(to target: Int64, reason: String) {
        let value = sendboxBound(target)
        guard value > sendboxCursor else { return }
        do {
            if try store.advanceCursor(.sendbox, to: value) {
                sendboxCursor = value
                out.note(.cursor(name: SyncCursor.sendbox.name, value: value))
            }
        } catch {
            storeError("sendbox cursor (\(reason))", error)
        }
    }
}
