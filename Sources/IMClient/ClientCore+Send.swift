import IMStore
import IMWire

// Send (im-semantics §4): the row first (SENDING), then PUBLISH qos 1 with a clientUniqueId;
// PUBACK status 0 → SENT with messageUId and the server's sentTime, an error status or the 30 s
// timeout → FAILED; resend reuses the row and its clientUniqueId. STATUS types go qos 0 on the
// `…S` topics, are never stored and get no PUBACK.
extension ClientCore {
    /// Name of the store counter behind clientUniqueIds.
    static let clientUniqueIdCounter = "clientUniqueId"

    mutating func send(to conversation: ConversationKey, objectName: String, content: String, pushText: String?,
                       mentioned: Bool) {
        // Local checks first: no row for a message that can never be sent.
        let flags: MessageTypeFlags
        do {
            flags = try config.registry.checkSendable(objectName)
        } catch {
            return rejectSend(conversation, objectName, code: error.imErrorCode?.rawValue ?? IMErrorCode.unregisteredMessageType.rawValue,
                              reason: "\(objectName) is not registered")
        }
        guard Topic.send(to: conversation.type) != nil, !conversation.targetId.isEmpty else {
            return rejectSend(conversation, objectName, code: IMErrorCode.invalidParameter.rawValue,
                              reason: "cannot send to \(conversation.type)")
        }
        let size = content.utf8.count
        guard size <= MessageContent.maxEncodedSize else {
            return rejectSend(conversation, objectName, code: IMErrorCode.messageTooLarge.rawValue,
                              reason: "content \(size) bytes > \(MessageContent.maxEncodedSize)")
        }
        if flags.isStatus { return sendStatus(to: conversation, objectName: objectName, content: content) }

        let connected = hasSession
        var send = OutgoingSend(messageId: 0, clientUniqueId: 0, conversation: conversation, objectName: objectName,
                                localTime: now.milliseconds)
        do {
            try store.atomicTransaction { store in
                if let floor = owedClientUniqueIdFloor { try store.raiseCounter(Self.clientUniqueIdCounter, toAtLeast: floor) }
                send.clientUniqueId = deviceTag << 31 | (try store.nextCounterValue(Self.clientUniqueIdCounter) & 0x7FFF_FFFF)
                guard flags.isPersisted else { return }
                var key = conversation
                if !connected, config.bugs.contains(.b10) {
                    // B10: the offline-failure path keys the conversation with the un-normalised
                    // target (a trailing separator the online path strips) → a second
                    // conversation row for the same peer (fixed in 2.9.24).
                    key = ConversationKey(conversation.type, conversation.targetId + " ")
                }
                let outgoing = OutgoingMessage(
                    conversation: key, senderUserId: userId, objectName: objectName, content: content,
                    flags: MessageFlags(persistent: flags.persistent, mentioned: mentioned),
                    clientUniqueId: send.clientUniqueId, localTime: now.milliseconds)
                send.messageId = try store.insertOutgoing(outgoing).messageId
                send.conversation = key
            }
            owedClientUniqueIdFloor = nil
        } catch {
            storeError("insert outgoing", error)
            return rejectSend(conversation, objectName, code: IMErrorCode.databaseError.rawValue, reason: "store failed")
        }
        if send.messageId != 0 {
            out.callback(.messageInserted(StoredMessage(
                messageId: send.messageId, messageUId: nil, conversation: send.conversation, senderUserId: userId,
                direction: .send, objectName: objectName, content: content, extra: nil, sentTime: now.milliseconds,
                receivedTime: now.milliseconds, sentStatus: .sending, receivedStatus: .unread,
                flags: MessageFlags(persistent: flags.persistent, mentioned: mentioned), clientUniqueId: send.clientUniqueId)))
        }
        guard connected else {
            return sendFailed(send, code: ClientErrorCode.notConnected)
        }
        publish(send, flags: flags, content: Array(content.utf8), pushText: pushText, mentioned: mentioned)
    }

    /// `resend(messageId)`: a FAILED own row goes out again with its clientUniqueId.
    mutating func resend(_ messageId: Int64) {
        let row: StoredMessage?
        do { row = try store.message(id: messageId) } catch { row = nil; storeError("load row \(messageId)", error) }
        // A left room's row whose removal is owed is gone for the app.
        guard let row, row.direction == .send, row.sentStatus == .failed, !isHiddenRow(row) else {
            out.callback(.sendResult(messageId: messageId, messageUId: nil, sentTime: 0, error: IMErrorCode.invalidParameter.rawValue))
            out.note(.ignored(input: "resend(\(messageId))", reason: "not a FAILED own message"))
            return
        }
        guard hasSession else {
            out.callback(.sendResult(messageId: messageId, messageUId: nil, sentTime: 0, error: ClientErrorCode.notConnected))
            return
        }
        let flags = config.registry.flags(for: row.objectName)
            ?? MessageTypeFlags(persistent: row.flags.persistent, offline: true, push: true)
        do {
            _ = try store.markResending(messageId: messageId)
            out.note(.changed(conversation: row.conversation, messageIds: [messageId], what: "FAILED → SENDING (resend)"))
        } catch {
            storeError("markResending", error)
        }
        var cuid = row.clientUniqueId ?? 0
        if cuid == 0 {
            if let floor = owedClientUniqueIdFloor, (try? store.raiseCounter(Self.clientUniqueIdCounter, toAtLeast: floor)) != nil {
                owedClientUniqueIdFloor = nil
            }
            cuid = deviceTag << 31 | (((try? store.nextCounterValue(Self.clientUniqueIdCounter)) ?? 0) & 0x7FFF_FFFF)
        }
        let send = OutgoingSend(messageId: messageId, clientUniqueId: cuid, conversation: row.conversation,
                                objectName: row.objectName, localTime: row.sentTime)
        publish(send, flags: flags, content: Array(row.content.utf8), pushText: nil, mentioned: row.flags.contains(.mentioned))
    }

    /// PUBLISH qos 1 of a user message.
    private mutating func publish(_ send: OutgoingSend, flags: MessageTypeFlags, content: [UInt8], pushText: String?,
                                  mentioned: Bool) {
        let type = send.conversation.type
        guard let topic = Topic.send(to: type, status: false, push: flags.push) else { return }
        var up = RMTPUpStreamMessage()
        up.sessionID = UpStreamFlags(persistent: flags.persistent, mentioned: mentioned).rawValue
        up.classname = send.objectName
        up.contentBytes = content
        up.clientUniqueID = send.clientUniqueId
        if let pushText { up.pushText = pushText }
        let id = messageIds.next()
        let body = built(up)
        let frame = Frame.Publish(flags: .atLeastOnce, topic: topic, targetId: Self.wireTarget(send.conversation),
                                  messageId: id, body: body)
        sendRequest(.publish(frame), topic: topic, .message(send))
        if send.messageId != 0 { unsentOwnRows[send.clientUniqueId] = send.messageId }
    }

    /// The SDK sends `RC:TypSts` at most once per 6 s per conversation (im-semantics §2).
    static let typingStatusIntervalMs: Int64 = 6_000

    /// STATUS types (typing): qos 0 on the `…S` topic, never stored, no PUBACK; the result is
    /// reported at once (messageId 0). A typing status within 6 s of the last one to the same
    /// conversation is skipped silently, as the SDK does.
    private mutating func sendStatus(to conversation: ConversationKey, objectName: String, content: String) {
        guard hasSession, let topic = Topic.send(to: conversation.type, status: true) else {
            out.callback(.sendResult(messageId: 0, messageUId: nil, sentTime: 0, error: ClientErrorCode.notConnected))
            return
        }
        if objectName == TypingStatusContent.objectName {
            let t = now.milliseconds
            if let last = lastTypingSentAt[conversation], t - last < Self.typingStatusIntervalMs, t >= last {
                out.note(.ignored(input: "send \(objectName) to \(conversation)",
                                  reason: "typing status at most once per 6 s per conversation (last \(t - last) ms ago)"))
                out.callback(.sendResult(messageId: 0, messageUId: nil, sentTime: 0, error: nil))
                return
            }
            lastTypingSentAt[conversation] = t
        }
        var up = RMTPUpStreamMessage()
        up.sessionID = UpStreamFlags(persistent: .status).rawValue
        up.classname = objectName
        up.contentBytes = Array(content.utf8)
        let frame = Frame.Publish(flags: .none, topic: topic, targetId: conversation.targetId, messageId: messageIds.next(),
                                  body: built(up))
        write(.publish(frame), topic: topic.rawValue)
        out.callback(.sendResult(messageId: 0, messageUId: nil, sentTime: 0, error: nil))
    }

    private mutating func rejectSend(_ conversation: ConversationKey, _ objectName: String, code: Int32, reason: String) {
        out.note(.ignored(input: "send \(objectName) to \(conversation)", reason: "\(reason) → \(code)"))
        out.callback(.sendResult(messageId: 0, messageUId: nil, sentTime: 0, error: code))
    }

    // MARK: Replies

    mutating func pubackReceived(_ a: Frame.Puback) {
        // A sync echo's PUBACK follows its PUBLISH directly and carries the server's msgId, which
        // may equal one of ours: the echo is matched first.
        if let echo = pendingEchoes.removeValue(forKey: a.messageId) {
            return echoCompleted(echo, a)
        }
        guard let request = requests.complete(a.messageId, isQuery: false) else {
            out.note(.ignored(input: "PUBACK #\(a.messageId)", reason: "no PUBLISH waiting (late or unknown)"))
            return
        }
        out.cancelTimer(.requestTimeout(messageId: a.messageId))
        switch request {
        case .message(let s):
            if a.status == 0 { sendAcknowledged(s, a) } else { sendFailed(s, code: Int32(a.status)) }
        case .recall(let messageId, let conversation, let objectName, let uid):
            recallAcknowledged(messageId, conversation, objectName: objectName, messageUId: uid, a)
        case .command(let name, let c):
            if a.status != 0 { out.note(.ignored(input: "\(name) to \(c)", reason: "refused with \(a.status)")) }
        default:
            break
        }
    }

    /// PUBACK status 0: SENT with messageUId and `sentTime = date*1000 + millis` (B4: the device
    /// clock's time kept instead).
    private mutating func sendAcknowledged(_ s: OutgoingSend, _ a: Frame.Puback) {
        var sentTime = a.sentTime
        if config.bugs.contains(.b4) {
            // B4: the row keeps the (possibly skewed) device-clock time of the send.
            sentTime = s.localTime
        }
        if s.messageId != 0 {
            do {
                let u = try store.markSent(messageId: s.messageId, messageUId: a.messageUId, sentTime: sentTime)
                var what = "SENT \(a.messageUId) at \(sentTime)"
                if !u.otherRowsWithSameUId.isEmpty { what += "; other rows with this messageUId: \(u.otherRowsWithSameUId)" }
                if !u.updated { what = "markSent refused (status \(u.previousStatus.map { "\($0)" } ?? "none"))" }
                out.note(.changed(conversation: s.conversation, messageIds: [s.messageId], what: what))
            } catch {
                storeError("markSent", error)
                if !config.bugs.contains(.b16) {
                    // On the server, but the row still says SENDING: not acknowledged to the app
                    // until the update commits (retried at every input); a pulled own copy may
                    // complete the row first (it stays in unsentOwnRows). The sendbox cursor
                    // stays, so a sendbox pull can still return that copy.
                    owedSentMarks.append(OwedSentMark(send: s, messageUId: a.messageUId, sentTime: sentTime, serverTime: a.sentTime))
                    return
                }
                // B16: marked SENT in memory and acknowledged to the app although the row update
                // did not commit: the app shows sent, the store keeps SENDING and the local time.
            }
        }
        unsentOwnRows[s.clientUniqueId] = nil
        out.callback(.sendResult(messageId: s.messageId, messageUId: a.messageUId, sentTime: sentTime, error: nil))
        ownSendRecorded(in: s.conversation, at: a.sentTime, reason: "own send acknowledged")
    }

    /// The send failed: the row becomes FAILED (it stays for a resend).
    mutating func sendFailed(_ s: OutgoingSend, code: Int32) {
        if s.messageId != 0 {
            do {
                let u = try store.markFailed(messageId: s.messageId)
                if u.updated { out.note(.changed(conversation: s.conversation, messageIds: [s.messageId], what: "FAILED (\(code))")) }
            } catch {
                storeError("markFailed", error)
            }
        }
        out.callback(.sendResult(messageId: s.messageId, messageUId: nil, sentTime: 0, error: code))
    }

    /// The conversation target as it goes on the wire (B10's un-normalised key trimmed).
    static func wireTarget(_ c: ConversationKey) -> String {
        var t = Substring(c.targetId)
        while t.last == " " { t = t.dropLast() }
        return String(t)
    }
}
