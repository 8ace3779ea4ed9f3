import IMStore
import IMWire

// Recall, private read receipts, unread (im-semantics §7).
extension ClientCore {
    /// `recall(messageId)`: only one's own, successfully sent message; RC:RcCmd on `recallMsg`.
    /// On PUBACK 0 the row is replaced by RC:RcNtf (same messageId).
    mutating func recall(_ messageId: Int64) {
        let row: StoredMessage?
        do { row = try store.message(id: messageId) } catch { row = nil; storeError("load row \(messageId)", error) }
        guard let row, row.direction == .send, let uid = row.messageUId, !isHiddenRow(row),
              row.sentStatus == .sent || row.sentStatus == .read || row.sentStatus == .received, !row.isRecalled else {
            out.note(.ignored(input: "recall(\(messageId))", reason: "not a sent own message"))
            return out.callback(.recallResult(messageId: messageId, error: IMErrorCode.invalidParameter.rawValue))
        }
        guard hasSession else {
            return out.callback(.recallResult(messageId: messageId, error: ClientErrorCode.notConnected))
        }
        let target = Self.wireTarget(row.conversation)
        let command = RecallCommandContent(conversationType: row.conversation.type, targetId: target, messageUId: uid,
                                           sentTime: row.sentTime)
        let flags = config.registry.flags(for: RecallCommandContent.objectName) ?? .command
        guard let up = try? RMTPUpStreamMessage(content: .recallCommand(command), flags: flags) else { return }
        let id = messageIds.next()
        let frame = Frame.Publish(flags: .atLeastOnce, topic: .recallMsg, targetId: target, messageId: id,
                                  body: built(up))
        sendRequest(.publish(frame), topic: .recallMsg,
                    .recall(messageId: messageId, conversation: row.conversation, objectName: row.objectName, messageUId: uid))
    }

    mutating func recallAcknowledged(_ messageId: Int64, _ conversation: ConversationKey, objectName: String,
                                     messageUId: String, _ a: Frame.Puback) {
        guard a.status == 0 else {
            return out.callback(.recallResult(messageId: messageId, error: Int32(a.status)))
        }
        let notice = RecallNotificationContent(operatorId: userId, recallTime: a.sentTime, originalObjectName: objectName,
                                               originalMessageUId: messageUId)
        do {
            let r = try store.recall(.messageId(messageId), notificationContent: Self.json(notice.json))
            out.note(.changed(conversation: conversation, messageIds: r.recalledMessageIds, what: "recalled by me → RC:RcNtf"))
        } catch {
            storeError("recall \(messageId)", error)
        }
        out.callback(.recallResult(messageId: messageId, error: nil))
    }

    /// An RC:RcCmd arrived (from the peer, or echoed from my other device): every row with the
    /// messageUId becomes RC:RcNtf, keeping its messageId; `recalled` per row.
    mutating func recallReceived(_ c: RecallCommandContent, _ m: IncomingMessage) throws {
        let rows = try store.messages(withUId: c.messageUId)
        guard let original = rows.first else {
            return out.note(.skipped(messageUId: c.messageUId, conversation: m.conversation,
                                     reason: "RC:RcCmd for a message not in the store"))
        }
        let notice = RecallNotificationContent(operatorId: m.down.fromUserID, recallTime: m.dataTime,
                                               originalObjectName: original.isRecalled ? "" : original.objectName,
                                               originalMessageUId: c.messageUId)
        if config.bugs.contains(.b14) {
            // B14: recalling an unread message leaves the unread count as it was (badge drift).
            store.options.recallDecrementsUnread = false
        } else {
            store.options.recallDecrementsUnread = true
        }
        let r = try store.recall(.messageUId(c.messageUId), notificationContent: Self.json(notice.json))
        for change in r.conversations {
            out.note(.changed(conversation: change.key, messageIds: r.recalledMessageIds,
                              what: "recalled by \(m.down.fromUserID) → RC:RcNtf; unread \(change.unreadCount) (\(change.unreadDelta))"))
        }
        for row in rows where r.recalledMessageIds.contains(row.messageId) {
            out.callback(.recalled(messageId: row.messageId, conversation: row.conversation))
        }
    }

    /// Private read receipt: RC:ReadNtf with the sentTime of the last message read.
    mutating func sendReadReceipt(_ conversation: ConversationKey, lastMessageSentTime: Int64) {
        guard conversation.type == .privateChat else {
            return out.note(.ignored(input: "sendReadReceipt \(conversation)", reason: "private conversations only"))
        }
        guard hasSession else {
            return out.note(.ignored(input: "sendReadReceipt \(conversation)", reason: "not connected"))
        }
        let flags = config.registry.flags(for: ReadNotificationContent.objectName) ?? .command
        guard let topic = Topic.send(to: .privateChat, push: flags.push),
              let up = try? RMTPUpStreamMessage(content: .readNotification(ReadNotificationContent(lastMessageSendTime: lastMessageSentTime)),
                                                flags: flags) else { return }
        let frame = Frame.Publish(flags: .atLeastOnce, topic: topic, targetId: conversation.targetId, messageId: messageIds.next(),
                                  body: built(up))
        sendRequest(.publish(frame), topic: topic, .command(objectName: ReadNotificationContent.objectName, conversation: conversation))
    }

    /// Clears unread up to a sentTime locally, then tells the server (`updRRTime`), which syncs it
    /// to the user's other devices as RC:SRSMsg.
    mutating func clearUnread(_ conversation: ConversationKey, upTo time: Int64) {
        do {
            let r = try store.clearUnread(in: conversation, upTo: time)
            out.note(.changed(conversation: conversation, messageIds: r.markedReadMessageIds,
                              what: "unread cleared up to \(time): \(r.conversation?.unreadCount ?? 0) left"))
        } catch {
            storeError("clearUnread \(conversation)", error)
            // The user read them: the store is told again at every input until it commits.
            // Bounded by the rows there now: one stored while the clear is owed stays unread.
            let newest = (try? store.newestMessageId(in: conversation)).map { $0 ?? 0 } ?? .max
            owedClearUnreads.append(OwedClearUnread(conversation: conversation, upTo: time, throughMessageId: newest))
        }
        guard hasSession else { return }
        var input = RMTPSessionMsgReadInput()
        input.type = RMTPChannelType(conversation.type)
        input.msgTime = time
        input.channelID = conversation.targetId
        query(.updRRTime, target: conversation.targetId, body: built(input), .readTime(conversation))
    }

    static func json(_ value: JSONValue) -> String {
        String(decoding: value.serialized(), as: UTF8.self)
    }
}
