import IMWire

// Recall (im-semantics §7; Docs/server.md §8).
extension ServerCore {
    /// PUBACK status for a refused recall (not the sender, unknown or already recalled message,
    /// outside the recall window, a conversation that does not match). The spec names no code.
    public static let recallRejectedCode: Int32 = 25101

    /// `recallMsg` with RC:RcCmd `{conversationType, targetId, messageUId, sentTime}`: only the
    /// original sender, within `recallWindowMs` of the original's dataTime. The command becomes a
    /// message of its own in the original conversation (NONE: delivered offline, sync-echoed,
    /// never counted), the original is marked recalled (it stays in inboxes, as the real server
    /// does — clients replace it when the command arrives; cloud history returns RC:RcNtf instead).
    mutating func handleRecall(_ req: SendRequest, now: Int64) {
        guard case .recallCommand(let cmd)? = try? MessageContent.decode(objectName: req.up.classname, bytes: req.content) else {
            return reject(req, IMErrorCode.invalidParameter.rawValue)
        }
        let conversation = ConversationKey(cmd.conversationType, cmd.targetId)
        let failing = SendRequest(connection: req.connection, session: req.session, topic: req.topic, messageId: req.messageId,
                                  wantsAck: req.wantsAck, up: req.up, upBody: req.upBody, content: req.content,
                                  conversation: conversation, clientUniqueId: req.clientUniqueId)
        guard let original = store.message(uid: cmd.messageUId),
              original.senderUserId == req.session.userId, original.senderDeviceId != nil,
              original.conversation == conversation,
              store.recalled[original.uid] == nil,
              now - original.dataTime <= config.recallWindowMs
        else { return reject(failing, Self.recallRejectedCode) }

        store.recalled[original.uid] = now
        let flags = config.registry.flags(for: RecallCommandContent.objectName) ?? .command
        switch conversation.type {
        case .chatroom:
            guard store.rooms[cmd.targetId] != nil else { return reject(failing, IMErrorCode.notInChatroom.rawValue) }
            acceptChatroomMessage(room: cmd.targetId, conversation: conversation, sender: req.session.userId,
                                  senderDevice: req.session.deviceId, senderConnection: req.connection,
                                  objectName: req.up.classname, content: req.content, flags: flags,
                                  clientUniqueId: req.clientUniqueId, mentioned: false, noNotification: false,
                                  extraContent: nil, ack: req.wantsAck ? req.messageId : nil, now: now)
        default:
            let recipients: [String]
            switch conversation.type {
            case .privateChat: recipients = [cmd.targetId]
            case .group: recipients = (groups[cmd.targetId]?.members ?? []).filter { $0 != req.session.userId }
            default: recipients = []
            }
            let m = makeRecord(failing, objectName: req.up.classname, flags: flags, now: now)
            emitAccepted(m, recipients: recipients)
            if req.wantsAck { writePuback(req.connection, messageId: req.messageId, dataTime: m.dataTime, uid: m.uid) }
            deliver(m, to: recipients, now: now)
            syncEcho(m, topic: .recallMsg, upBody: req.upBody, except: req.connection, now: now)
        }
        emit(.recalled(messageUId: original.uid, byUserId: req.session.userId))
    }
}
