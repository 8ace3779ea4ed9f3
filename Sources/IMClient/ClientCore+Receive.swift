import IMStore
import IMWire

// Receiving (wire-protocol §1.5, §4): server PUBLISHes (`s_msg`, `s_ntf`, `s_cmd`, sync echoes)
// and the pipeline every received message goes through (store, notify, commands).
extension ClientCore {
    mutating func publishReceived(_ p: Frame.Publish) {
        let topic = p.knownTopic
        if p.isSyncEcho, let topic, topic.kind == .send {
            // No PUBACK for an echo: the server's PUBACK with the same msgId completes it.
            do {
                let up = try p.decodeBody(RMTPUpStreamMessage.self)
                pendingEchoes[p.messageId] = PendingEcho(topic: topic, targetId: p.targetId, message: up)
            } catch {
                out.note(.ignored(input: "sync echo \(p.topic) #\(p.messageId)", reason: "\(error)"))
            }
            return
        }
        if p.flags.qos != .atMostOnce, !p.flags.dup { write(.puback(Frame.Puback(messageId: p.messageId))) }
        switch topic {
        case .s_msg:
            do {
                directDelivery(IncomingMessage(try p.decodeBody(RMTPDownStreamMessage.self)), path: "s_msg")
            } catch {
                out.note(.ignored(input: "s_msg #\(p.messageId)", reason: "\(error)"))
            }
        case .s_ntf:
            guard let n = try? p.decodeBody(RMTPNotifyMsg.self) else {
                return out.note(.ignored(input: "s_ntf #\(p.messageId)", reason: "bad NotifyMsg body"))
            }
            if n.type == 2 { chatroomNotify(n.chrmID.isEmpty ? p.targetId : n.chrmID, time: n.time) } else { inboxNotify(n) }
        case .s_cmd:
            guard let n = try? p.decodeBody(RMTPNotifyMsg.self) else {
                return out.note(.ignored(input: "s_cmd #\(p.messageId)", reason: "bad NotifyMsg body"))
            }
            if n.type == 2 {
                chatroomKVChanged(n.chrmID.isEmpty ? p.targetId : n.chrmID)
            } else {
                out.note(.ignored(input: "s_cmd type \(n.type)", reason: "unknown command notify"))
            }
        default:
            out.note(.ignored(input: "PUBLISH \(p.topic)", reason: "unexpected topic from the server"))
        }
    }

    // MARK: Live deliveries

    /// A sync echo completed by its PUBACK: one's own message sent from another device.
    mutating func echoCompleted(_ e: PendingEcho, _ a: Frame.Puback) {
        var d = RMTPDownStreamMessage()
        d.fromUserID = userId
        d.classname = e.message.classname
        d.content = e.message.content
        d.dataTime = a.sentTime
        d.msgID = a.messageUId
        d.direction = MessageDirection.send.rawValue
        var status = DownStreamStatus(rawValue: 0)
        let f = e.message.flags
        if f.contains(.persisted) { status.insert(.persisted) }
        if f.contains(.counted) { status.insert(.counted) }
        if f.contains(.mentioned) { status.insert(.mentioned) }
        d.status = status.rawValue
        if e.message.hasClientUniqueID { d.clientUniqueID = e.message.clientUniqueID }
        var type = e.topic.conversationType ?? .privateChat
        var target = e.targetId
        if e.topic == .recallMsg, case .recallCommand(let c) = e.message.messageContent {
            type = c.conversationType
            target = c.targetId
        }
        d.type = type.rawValue
        d.groupID = target
        directDelivery(IncomingMessage(d), path: "sync echo")
    }

    /// `s_msg` or a completed sync echo: accepted, or dropped because the pull will return it.
    ///
    /// Correct rule: an offline-cached message is accepted only when the connection is in sync
    /// (its first pull finished and none runs), and then moves its direction's cursor forward.
    /// Online-only types (never in the inbox, so no pull returns them) are always accepted and
    /// never move a cursor. B1 accepts during a pull; B3 accepts whenever no pull is in flight
    /// and moves the cursor even when not in sync.
    mutating func directDelivery(_ m: consuming IncomingMessage, path: String) {
        if m.direction == .send, isOwnDevice(m.clientUniqueId), !ownCopyReceived(m, path: path) { return }
        let offlineType = config.registry.flags(for: m.objectName)?.offline ?? true
        var moveCursor = false
        if !offlineType || m.messageUId == nil {
            // Online-only or STATUS: never in the inbox, no pull returns it, no cursor moves.
        } else if sync.isInSync {
            moveCursor = true
        } else if config.bugs.contains(.b1) {
            // B1: accepted although the sync has not completed; the pull returns it again.
            moveCursor = config.bugs.contains(.b3)
        } else if config.bugs.contains(.b3), !sync.isPulling {
            // B3: "no pull in flight" is taken for "in sync": accepted, and the cursor jumps to
            // its dataTime although older messages are still unpulled.
            moveCursor = true
        } else {
            let why = sync.isPulling ? "\(path) during pull" : "\(path) before the first pull completed"
            out.note(.skipped(messageUId: m.messageUId, conversation: m.conversation, reason: why))
            if pullAfterStoreFailure { startPull(reason: "retry after a store failure") }
            return
        }
        var inbox: Int64?
        var sendbox: Int64?
        if moveCursor {
            if m.direction == .send { sendbox = m.dataTime } else { inbox = m.dataTime }
        }
        let hasUId = m.messageUId != nil
        // `m` is moved into the one-message array, not copied.
        if !deliver([m], hasPackage: false, path: path, inbox: inbox, sendbox: sendbox), offlineType, hasUId {
            // Not stored: it must not be skipped over. Out of sync (later s_msg are not taken, so
            // no cursor jumps past it); a pull from the unmoved cursor fetches it again.
            pullAfterStoreFailure = true
            // An earlier delivery may have moved the cursor to its time or past it.
            if config.repullWindow > 0 { (cursorsUnsure, repullFrom) = (true, nil) }
            if sync.isInSync { syncChange("\(path) not stored") { $0.lostSync() } }
            startPull(reason: "store failed")
        }
    }

    /// A copy of a message this device sent (pulled back through the sendbox, or echoed): never
    /// stored twice. If the row is still unsent (its PUBACK was lost), the copy completes it.
    ///
    /// With `restoreOwnRowsFromCopies` (device stores) a copy that matches no unsent row of this
    /// process is reconciled with the store: an unsent row of an earlier process (its PUBACK or
    /// SENT update was lost) is completed, and when no row holds the message at all (a power
    /// loss took back its insert) the copy is stored like any received message: returns true
    /// then, and the caller delivers it.
    @discardableResult
    mutating func ownCopyReceived(_ m: IncomingMessage, path: String) -> Bool {
        var row = m.clientUniqueId.flatMap { unsentOwnRows[$0] }
        if row == nil, config.restoreOwnRowsFromCopies, let cuid = m.clientUniqueId, let uid = m.messageUId {
            do {
                if try store.countRows(withUId: uid) == 0 {
                    row = try store.unsentOwnMessageId(clientUniqueId: cuid)
                    if row == nil { return true }
                }
            } catch {
                storeError("own copy \(uid) from \(path)", error)
            }
        }
        guard let cuid = m.clientUniqueId, let rowId = row, let uid = m.messageUId else {
            out.note(.skipped(messageUId: m.messageUId, conversation: m.conversation, reason: "\(path): own message from this device"))
            return false
        }
        do {
            let u = try store.markSent(messageId: rowId, messageUId: uid, sentTime: m.dataTime)
            unsentOwnRows[cuid] = nil
            out.note(.changed(conversation: m.conversation, messageIds: [rowId],
                              what: u.updated ? "SENT \(uid) at \(m.dataTime) (completed by \(path))" : "own copy ignored: row not unsent"))
            if u.updated {
                out.callback(.sendResult(messageId: rowId, messageUId: uid, sentTime: m.dataTime, error: nil))
            }
        } catch {
            // The row stays unsent (in unsentOwnRows): the next copy or the PUBACK completes it.
            storeError("markSent from \(path)", error)
        }
        return false
    }

    // MARK: Pipeline

    /// Writes the cursors that move forward, in the caller's transaction (the cached values are
    /// the stored ones, so a plain upsert will do).
    /// Static, with the cached cursors passed in: called as a method from the store closure of a
    /// `mutating` function, it made Swift copy the whole core for each call (65k copies, ~0.9 %
    /// of the mixed-1k hour).
    private static func saveAdvancedCursors(
        _ store: IMStore, inbox: Int64?, sendbox: Int64?, past cached: (inbox: Int64, sendbox: Int64)
    ) throws {
        if let inbox, inbox > cached.inbox { try store.setCursor(.inbox, to: inbox) }
        if let sendbox, sendbox > cached.sendbox { try store.setCursor(.sendbox, to: sendbox) }
    }

    /// Once the transaction that saved them committed: the cached cursors follow the store, each
    /// move noted.
    private mutating func cacheSavedCursors(inbox: Int64?, sendbox: Int64?) {
        if let inbox, inbox > inboxCursor {
            inboxCursor = inbox
            out.note(.cursor(name: SyncCursor.inbox.name, value: inbox))
        }
        if let sendbox, sendbox > sendboxCursor {
            sendboxCursor = sendbox
            out.note(.cursor(name: SyncCursor.sendbox.name, value: sendbox))
        }
    }

    /// Stores, notifies and interprets `items` in order, in one store transaction together with
    /// the cursor moves (forward only). `left` counts down over the notified items. If the
    /// transaction fails (a storage fault), nothing it reported reaches the app and the cursors
    /// stay (the server sends the rows again); returns false then. `path` names the delivery in
    /// error reports only, so it is built only for one (a chatroom pull's cost every pull a String).
    @discardableResult
    mutating func deliver(
        _ items: [IncomingMessage], hasPackage: Bool, path: @autoclosure () -> String, inbox: Int64?, sendbox: Int64?
    ) -> Bool {
        // Messages read through the buffer (borrowed): `items.map` and `items[i]` copied each.
        let kinds = items.withUnsafeBufferPointer { buf in
            var kinds: [ReceiveKind] = []
            kinds.reserveCapacity(buf.count)
            for i in buf.indices { kinds.append(ReceiveKind.of(at: buf.baseAddress! + i)) }
            return kinds
        }
        var left = kinds.reduce(0) { $0 + ($1.notifies ? 1 : 0) }
        let offlineBefore = session?.sessionTimestamp ?? 0
        var run: [(message: ReceivedMessage, index: Int)] = []
        // Nothing to write (only transient messages — likes, typing — or an empty page, and no
        // cursor move): skip BEGIN/COMMIT of an empty transaction. A closed store still goes
        // through `transaction` so its error is reported as before.
        let writes = !store.isOpen || (inbox ?? .min) > inboxCursor || (sendbox ?? .min) > sendboxCursor
            || kinds.contains { if case .transient = $0 { false } else { true } }
        if config.bugs.contains(.b15), (inbox ?? .min) > inboxCursor || (sendbox ?? .min) > sendboxCursor {
            // B15: the cursors are saved in their own transaction before the rows' one commits:
            // a fault between the two (the rows' transaction fails, or a power loss keeps only
            // the first commit) leaves the cursor past messages that were never stored.
            do {
                let cached = (inbox: inboxCursor, sendbox: sendboxCursor)
                try store.atomicTransaction { store in
                    try Self.saveAdvancedCursors(store, inbox: inbox, sendbox: sendbox, past: cached)
                }
                cacheSavedCursors(inbox: inbox, sendbox: sendbox)
            } catch {
                storeError("\(path()): save cursors (B15)", error)
            }
        }
        let mark = out.mark
        var committed = true
        let cached = (inbox: inboxCursor, sendbox: sendboxCursor)
        do {
            // Every error below escapes the body (one rollback of all), so no nested savepoints.
            try store.atomicTransaction(if: writes) { store in
                func flush() throws {
                    guard !run.isEmpty else { return }
                    let results = try store.storeReceived(run.map(\.message))
                    for (k, r) in results.enumerated() {
                        let msg = run[k].message
                        let dataTime = items[run[k].index].dataTime
                        out.note(.stored(messageId: r.messageId, messageUId: msg.messageUId, conversation: msg.conversation,
                                         sentTime: msg.sentTime, direction: msg.direction, isNew: r.isNew))
                        left -= 1
                        guard r.isNew else { continue }     // a dedup hit (messageUIdDedup): not shown again
                        out.callback(.received(ReceiveKind.row(msg, messageId: r.messageId), left: left,
                                               offline: dataTime < offlineBefore, hasPackage: hasPackage))
                    }
                    run.removeAll(keepingCapacity: true)
                }
                for i in items.indices {
                    switch kinds[i] {
                    case .stored(let flags):
                        let localTime = now.milliseconds
                        run.append((items.withUnsafeBufferPointer { ReceiveKind.received(at: $0.baseAddress! + i, flags: flags, localTime: localTime) }, i))
                    case .transient:
                        try flush()
                        left -= 1
                        let r = ReceiveKind.received(items[i], flags: [], localTime: now.milliseconds)
                        out.callback(.received(ReceiveKind.row(r, messageId: 0), left: left,
                                               offline: items[i].dataTime < offlineBefore, hasPackage: hasPackage))
                    case .command(let command):
                        try flush()
                        try apply(command, items[i])
                    }
                }
                try flush()
                try Self.saveAdvancedCursors(store, inbox: inbox, sendbox: sendbox, past: cached)
            }
            cacheSavedCursors(inbox: inbox, sendbox: sendbox)
        } catch {
            out.discardReports(since: mark)
            committed = false
            storeError("\(path()): store \(items.count) messages", error)
        }
        if config.bugs.contains(.b5), !historyPagers.isEmpty {
            // B5: every live insert shifts the offset pager of its conversation.
            for k in kinds.indices {
                if case .stored = kinds[k], historyPagers[items[k].conversation] != nil {
                    historyPagers[items[k].conversation]! += 1
                }
            }
        }
        return committed
    }

    /// Commands: recall, private read receipt, multi-device read sync.
    private mutating func apply(_ command: ReceiveKind.Command, _ m: IncomingMessage) throws {
        switch command {
        case .recall(let c):
            try recallReceived(c, m)
        case .readReceipt(let c):
            guard m.direction == .receive, m.conversation.type == .privateChat else {
                // My other device's receipt to the peer: nothing to do here.
                return out.note(.skipped(messageUId: m.messageUId, conversation: m.conversation, reason: "own RC:ReadNtf"))
            }
            let r = try store.applyReadReceipt(in: m.conversation, upTo: c.lastMessageSendTime)
            out.note(.changed(conversation: m.conversation, messageIds: r.markedReadMessageIds,
                              what: r.advanced ? "read receipt up to \(c.lastMessageSendTime)" : "stale read receipt \(c.lastMessageSendTime) ≤ \(r.highWaterMark)"))
            if r.advanced {
                out.callback(.readReceipt(conversation: m.conversation, lastMessageSentTime: c.lastMessageSendTime))
            }
        case .syncReadStatus(let c):
            guard m.direction == .send else {
                return out.note(.skipped(messageUId: m.messageUId, conversation: m.conversation, reason: "peer's RC:SRSMsg"))
            }
            let r = try store.clearUnread(in: m.conversation, upTo: c.lastMessageSendTime)
            out.note(.changed(conversation: m.conversation, messageIds: r.markedReadMessageIds,
                              what: "read on another device up to \(c.lastMessageSendTime)"))
            out.callback(.syncReadStatus(conversation: m.conversation, upToSentTime: c.lastMessageSendTime))
        case .ignored(let why):
            out.note(.skipped(messageUId: m.messageUId, conversation: m.conversation, reason: "\(m.objectName): \(why)"))
        }
    }
}
