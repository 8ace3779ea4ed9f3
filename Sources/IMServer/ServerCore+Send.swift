import IMWire
import SimKernel

/// A client PUBLISH on a send topic, being routed.
struct SendRequest: Sendable {
    let connection: ConnectionID
    let session: Session
    let topic: Topic
    let messageId: UInt16
    /// qos ≥ 1 and not a status topic: the client wants a PUBACK.
    let wantsAck: Bool
    let up: RMTPUpStreamMessage
    /// The UpStreamMessage bytes as received (reused for sync echoes).
    let upBody: [UInt8]
    let content: [UInt8]
    /// As the sender sees it.
    let conversation: ConversationKey
    let clientUniqueId: Int64

    var mentioned: Bool { up.flags.contains(.mentioned) }
    var noNotification: Bool { up.flags.contains(.noNotification) }
    var extraContent: String? { up.hasExtraContent ? up.extraContent : nil }
}

// The send pipeline (im-semantics §4; Docs/server.md §5): size → idempotent accept → rate →
// authorisation (group/chatroom) → sensitive words → blacklist/whitelist → chatroom quota →
// dataTime + messageUId → PUBACK → delivery.
extension ServerCore {
    mutating func handlePublish(_ p: Frame.Publish, on id: ConnectionID, session: Session, now: Int64) {
        let wantsAck = p.flags.qos != .atMostOnce
        guard let topic = p.knownTopic, topic.kind == .send else {
            emit(.messageRejected(id, userId: session.userId, conversation: ConversationKey(.privateChat, p.targetId),
                                  clientUniqueId: 0, code: IMErrorCode.invalidParameter.rawValue))
            if wantsAck { writePuback(id, messageId: p.messageId, status: IMErrorCode.invalidParameter.rawValue) }
            return
        }
        let up: RMTPUpStreamMessage
        do {
            up = try p.decodeBody(RMTPUpStreamMessage.self)
        } catch {
            protocolViolation(id, "PUBLISH \(p.topic): \(error)", now: now)
            return
        }
        let type = topic.conversationType ?? .privateChat
        let req = SendRequest(connection: id, session: session, topic: topic, messageId: p.messageId,
                              wantsAck: wantsAck && !topic.isStatus, up: up, upBody: p.body, content: up.contentBytes,
                              conversation: ConversationKey(type, p.targetId),
                              clientUniqueId: up.hasClientUniqueID ? up.clientUniqueID : 0)
        guard admitSend(req, now: now) else { return }
        if topic == .recallMsg {
            handleRecall(req, now: now)
            return
        }
        var flags = config.registry.flags(for: up.classname) ?? Self.derivedFlags(up.flags)
        if topic.isStatus { flags = .status }
        switch type {
        case .privateChat: sendPrivate(req, flags: flags, now: now)
        case .group: sendGroup(req, flags: flags, now: now)
        case .chatroom: sendChatroom(req, flags: flags, now: now)
        default: reject(req, IMErrorCode.invalidParameter.rawValue)
        }
    }

    /// Flags of a type the server's registry does not know: what the message's own flag word says.
    static func derivedFlags(_ f: UpStreamFlags) -> MessageTypeFlags {
        let persistent: MessagePersistent = f.contains(.counted) ? .isCounted : (f.contains(.persisted) ? .isPersisted : .none)
        return MessageTypeFlags(persistent: persistent, offline: true, push: persistent.isCounted)
    }

    /// The checks every send passes first: size (30016), idempotent accept, rate (20604).
    /// Returns false when the request was answered already.
    mutating func admitSend(_ req: SendRequest, now: Int64) -> Bool {
        if req.content.count > config.maxBodyBytes {
            reject(req, IMErrorCode.messageTooLarge.rawValue)
            return false
        }
        if req.topic.isStatus { return true }
        if req.clientUniqueId != 0, !config.bugs.contains(.b2),
           let original = store.idempotency[IdempotencyKey(userId: req.session.userId, clientUniqueId: req.clientUniqueId)] {
            emit(.duplicateSendAbsorbed(messageUId: original.uid, userId: req.session.userId, clientUniqueId: req.clientUniqueId))
            if req.wantsAck { writePuback(req.connection, messageId: req.messageId, dataTime: original.dataTime, uid: original.uid) }
            return false
        }
        guard connections.values[connections.index(forKey: req.connection)!].sendRate.allow(now: now, limit: config.rateLimitPerSecond) else {
            reject(req, IMErrorCode.rateLimited.rawValue)
            return false
        }
        return true
    }

    mutating func reject(_ req: SendRequest, _ code: Int32) {
        emit(.messageRejected(req.connection, userId: req.session.userId, conversation: req.conversation,
                              clientUniqueId: req.clientUniqueId, code: code))
        if req.wantsAck { writePuback(req.connection, messageId: req.messageId, status: code) }
    }

    mutating func writePuback(_ id: ConnectionID, messageId: UInt16, status: Int32) {
        write(id, .puback(Frame.Puback(messageId: messageId, sentTime: 0, status: UInt16(truncatingIfNeeded: status), messageUId: "")))
    }

    mutating func writePuback(_ id: ConnectionID, messageId: UInt16, dataTime: Int64, uid: String) {
        write(id, .puback(Frame.Puback(messageId: messageId, sentTime: dataTime, messageUId: uid)))
    }

    // MARK: Private, group

    mutating func sendPrivate(_ req: SendRequest, flags: MessageTypeFlags, now: Int64) {
        let peer = req.conversation.targetId
        let me = req.session.userId
        guard !peer.isEmpty, peer != me else { return reject(req, IMErrorCode.invalidParameter.rawValue) }
        if rules.containsSensitiveWord(req.content) { return silentDrop(req, flags: flags, recipients: [peer], reason: .sensitiveWord, now: now) }
        if rules.blacklists[peer]?.contains(me) == true { return reject(req, IMErrorCode.rejectedByBlacklist.rawValue) }
        if let wl = rules.whitelists[peer], !wl.contains(me) { return reject(req, IMErrorCode.notInWhitelist.rawValue) }
        if flags.isStatus { return deliverStatus(req, to: [peer], now: now) }
        acceptAndDeliver(req, flags: flags, recipients: [peer], now: now)
    }

    mutating func sendGroup(_ req: SendRequest, flags: MessageTypeFlags, now: Int64) {
        let me = req.session.userId
        guard let g = groups[req.conversation.targetId], g.memberSet.contains(me) else {
            return reject(req, IMErrorCode.notInGroup.rawValue)
        }
        if directory.groupMutes[req.conversation.targetId]?.contains(me) == true {
            return reject(req, IMErrorCode.mutedInGroup.rawValue)
        }
        var recipients = g.members.filter { $0 != me }
        if !req.up.userID.isEmpty {
            // A directed group message reaches only the listed members.
            let directed = Set(req.up.userID)
            recipients = recipients.filter { directed.contains($0) }
        }
        if rules.containsSensitiveWord(req.content) { return silentDrop(req, flags: flags, recipients: recipients, reason: .sensitiveWord, now: now) }
        if flags.isStatus { return deliverStatus(req, to: recipients, now: now) }
        acceptAndDeliver(req, flags: flags, recipients: recipients, now: now)
    }

    /// Accepted, answered, delivered (private / group).
    mutating func acceptAndDeliver(_ req: SendRequest, flags: MessageTypeFlags, recipients: [String], now: Int64) {
        let m = makeRecord(req, objectName: req.up.classname, flags: flags, now: now)
        emitAccepted(m, recipients: recipients)
        if req.wantsAck { writePuback(req.connection, messageId: req.messageId, dataTime: m.dataTime, uid: m.uid) }
        deliver(m, to: recipients, now: now)
        syncEcho(m, topic: req.topic, upBody: req.upBody, except: req.connection, now: now)
    }

    /// Sensitive-word filter: the sender is told "sent" (PUBACK with a messageUId), nobody gets it.
    mutating func silentDrop(_ req: SendRequest, flags: MessageTypeFlags, recipients: [String], reason: DropReason, now: Int64) {
        if flags.isStatus {
            emit(.dropped(messageUId: nil, conversation: req.conversation, userId: nil, reason: reason))
            return
        }
        let m = makeRecord(req, objectName: req.up.classname, flags: flags, now: now, keepInHistory: false)
        emitAccepted(m, recipients: recipients, droppedForEveryone: reason)
        if req.wantsAck { writePuback(req.connection, messageId: req.messageId, dataTime: m.dataTime, uid: m.uid) }
    }

    // MARK: Records

    mutating func makeRecord(_ req: SendRequest, objectName: String, flags: MessageTypeFlags, now: Int64,
                             keepInHistory: Bool = true) -> MessageRecord {
        makeRecord(conversation: req.conversation, sender: req.session.userId, senderDevice: req.session.deviceId,
                   objectName: objectName, content: req.content, flags: flags, clientUniqueId: req.clientUniqueId,
                   mentioned: req.mentioned, noNotification: req.noNotification,
                   pushAllowed: req.topic != .ppMsgN && !req.noNotification, extraContent: req.extraContent,
                   keepInHistory: keepInHistory, now: now)
    }

    /// Assigns dataTime (strictly increasing per conversation unless `allowEqualDataTime`) and the
    /// messageUId, encodes the recipients' DownStreamMessage once, and files the record in the
    /// uid index, the idempotency table and (stored types) the conversation's cloud history.
    mutating func makeRecord(conversation: ConversationKey, sender: String, senderDevice: String?, objectName: String,
                             content: [UInt8], flags: MessageTypeFlags, clientUniqueId: Int64, mentioned: Bool,
                             noNotification: Bool, pushAllowed: Bool, extraContent: String?, keepInHistory: Bool = true,
                             now: Int64) -> MessageRecord {
        let clock = ConversationClockKey(type: conversation.type, user: sender, target: conversation.targetId)
        store.uidCounter += 1
        let seq = MessageUId.sequence(generation: generation, counter: store.uidCounter)
        let uid = MessageUId.make(seq)
        let cloud = keepInHistory && config.cloudHistory
            && (conversation.type == .chatroom ? flags.isPersisted : (flags.isPersisted && flags.offline))
        // One access to the conversation: advance its clock, build the record, log it.
        var incomplete: IncompleteBody?
        let m = Self.record(in: &store.conversations[clock, default: ConversationLog()], now: now,
                            allowEqual: config.allowEqualDataTime, log: cloud) { dataTime in
            var d = RMTPDownStreamMessage()
            d.fromUserID = sender
            d.type = conversation.type.rawValue
            if conversation.type == .group || conversation.type == .chatroom { d.groupID = conversation.targetId }
            d.classname = objectName
            d.contentBytes = content
            d.dataTime = dataTime
            d.status = DownStreamStatus(persistent: flags.persistent, mentioned: mentioned, noNotification: noNotification).rawValue
            d.msgID = uid
            if clientUniqueId != 0 { d.clientUniqueID = clientUniqueId }
            if let extraContent { d.extraContent = extraContent }
            return MessageRecord(uid: uid, seq: seq, conversation: conversation, senderUserId: sender, senderDeviceId: senderDevice,
                                 objectName: objectName, dataTime: dataTime, flags: flags, clientUniqueId: clientUniqueId,
                                 pushAllowed: pushAllowed && flags.push, downBytes: Self.built(d, &incomplete),
                                 contentLength: content.count, contentHash: StableHash.fnv1a(content))
        }
        if let incomplete { emit(.incompleteBody(incomplete)) }
        if clientUniqueId != 0, senderDevice != nil {
            store.idempotency[IdempotencyKey(userId: sender, clientUniqueId: clientUniqueId)] = m
        }
        store.acceptLog.append(m)
        return m
    }

    /// The conversation's next dataTime — `now`, or just after the last one (strictly increasing
    /// unless `allowEqual`, then non-decreasing) — and the record made with it, appended to the
    /// conversation's cloud history when `log`.
    static func record(in conversation: inout ConversationLog, now: Int64, allowEqual: Bool, log: Bool,
                       make: (Int64) -> MessageRecord) -> MessageRecord {
        let last = conversation.lastDataTime
        let t = allowEqual ? max(now, last) : (last == .min ? now : max(now, last + 1))
        conversation.lastDataTime = t
        let m = make(t)
        if log { conversation.messages.append(m) }
        return m
    }

    mutating func emitAccepted(_ m: MessageRecord, recipients: [String], droppedForEveryone: DropReason? = nil) {
        emit(.messageAccepted(AcceptedMessage(
            messageUId: m.uid, conversation: m.conversation, senderUserId: m.senderUserId, senderDeviceId: m.senderDeviceId,
            objectName: m.objectName, dataTime: m.dataTime, flags: m.flags, clientUniqueId: m.clientUniqueId,
            recipients: recipients, contentLength: m.contentLength, contentHash: m.contentHash,
            droppedForEveryone: droppedForEveryone)))
    }

    // MARK: Delivery

    /// Inbox + fan-out to every online session of every recipient (sorted userIds, then mobile,
    /// desktop, web). Offline recipients: the inbox keeps it (offline types) with a push event, or
    /// it is dropped (online-only types).
    mutating func deliver(_ m: MessageRecord, to recipients: [String], now: Int64) {
        let target = m.conversation.type == .privateChat ? m.senderUserId : m.conversation.targetId
        var notifyBody: [UInt8]?
        for user in recipients {
            var entry: Int?
            if m.flags.offline {
                entry = store.users[user, default: UserRecord()].inbox.insert(m)
                armExpiry(for: m.dataTime, now: now)
            }
            guard let slots = online[user]?.slots else {
                if m.flags.offline {
                    emit(.offlineStored(messageUId: m.uid, userId: user))
                    if m.pushAllowed { emit(.pushed(messageUId: m.uid, userId: user)) }
                } else {
                    emit(.dropped(messageUId: m.uid, conversation: m.conversation, userId: user, reason: .onlineOnly))
                }
                continue
            }
            for case let c? in slots {
                let (msgId, s) = nextMessageIdAndDevice(c)
                if config.delivery == .direct || !m.flags.offline {
                    write(c, .publish(Frame.Publish(flags: .atLeastOnce, date: Self.seconds(m.dataTime), topic: .s_msg,
                                                    targetId: target, messageId: msgId, body: m.downBytes)))
                    if let e = entry { store.users[user]!.inbox.markReceived(e, by: s.deviceIndex) }
                    emit(.fannedOut(messageUId: m.uid, userId: user, deviceId: s.deviceId, c, via: .direct))
                } else {
                    if notifyBody == nil {
                        var n = RMTPNotifyMsg()
                        n.type = 1
                        n.time = m.dataTime
                        notifyBody = built(n)
                    }
                    write(c, .publish(Frame.Publish(flags: .none, date: Self.seconds(now), topic: .s_ntf, targetId: user,
                                                    messageId: msgId, body: notifyBody!)))
                    emit(.fannedOut(messageUId: m.uid, userId: user, deviceId: s.deviceId, c, via: .notify))
                }
            }
        }
    }

    /// Multi-device sync: the sender's sendbox, and to each of its *other* online sessions a
    /// PUBLISH with the dup bit on the send topic carrying the UpStreamMessage, then a PUBACK with
    /// the same message id carrying date/millis/messageUId (wire-protocol §1.5).
    mutating func syncEcho(_ m: MessageRecord, topic: Topic, upBody: [UInt8], except: ConnectionID?, now: Int64) {
        guard config.multiDeviceSync, m.flags.offline, m.senderDeviceId != nil else { return }
        store.users[m.senderUserId, default: UserRecord()].sendbox.insert(m)
        armExpiry(for: m.dataTime, now: now)
        for c in onlineConnections(m.senderUserId) where c != except {
            let s = session(of: c)!
            let msgId = nextMessageId(c)
            write(c, [
                .publish(Frame.Publish(flags: FrameFlags(dup: true, qos: .atLeastOnce), date: Self.seconds(m.dataTime),
                                       topic: topic, targetId: m.conversation.targetId, messageId: msgId, body: upBody)),
                .puback(Frame.Puback(messageId: msgId, sentTime: m.dataTime, messageUId: m.uid)),
            ])
            emit(.fannedOut(messageUId: m.uid, userId: m.senderUserId, deviceId: s.deviceId, c, via: .syncEcho))
        }
    }

    /// STATUS messages (`…S` topics): online recipients only, `s_msg` qos 0, never stored, no
    /// messageUId, no PUBACK; offline recipients → dropped(statusToOffline).
    mutating func deliverStatus(_ req: SendRequest, to recipients: [String], now: Int64) {
        var d = RMTPDownStreamMessage()
        d.fromUserID = req.session.userId
        d.type = req.conversation.type.rawValue
        if req.conversation.type != .privateChat { d.groupID = req.conversation.targetId }
        d.classname = req.up.classname
        d.contentBytes = req.content
        d.dataTime = now
        d.status = DownStreamStatus(persistent: .status).rawValue
        let body = built(d)
        let target = req.conversation.type == .privateChat ? req.session.userId : req.conversation.targetId
        for user in recipients {
            let conns = req.conversation.type == .chatroom ? joinedConnections(room: req.conversation.targetId, user: user)
                                                          : onlineConnections(user)
            if conns.isEmpty {
                emit(.dropped(messageUId: nil, conversation: req.conversation, userId: user, reason: .statusToOffline))
                continue
            }
            for c in conns {
                let s = session(of: c)!
                write(c, .publish(Frame.Publish(flags: .none, date: Self.seconds(now), topic: .s_msg, targetId: target,
                                                messageId: nextMessageId(c), body: body)))
                emit(.fannedOut(messageUId: "", userId: user, deviceId: s.deviceId, c, via: .direct))
            }
        }
    }
}
