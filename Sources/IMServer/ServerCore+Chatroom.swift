import IMWire
import SimKernel

// Chatrooms (im-semantics §6; Docs/server.md §7): join / quit, sends with the drop policy and the
// offline auto-kick, `s_ntf` type 2, `chrmPull`, auto-destroy.
extension ServerCore {
    /// Joined sessions of `user` in `room`, platform order.
    func joinedConnections(room: String, user: String) -> [ConnectionID] {
        store.rooms[room]?.member(user)?.sessions.map(\.connection) ?? []
    }

    // MARK: Send

    mutating func sendChatroom(_ req: SendRequest, flags: MessageTypeFlags, now: Int64) {
        let roomId = req.conversation.targetId
        let me = req.session.userId
        if admin.banned(roomId, me, now: now) { return reject(req, IMErrorCode.kickedAndBannedFromChatroom.rawValue) }
        // (No local copy of the room is kept: it would make the mutations below copy its storage.)
        guard store.rooms[roomId]?.isMember(me) == true else { return reject(req, IMErrorCode.notInChatroom.rawValue) }
        if admin.muted(roomId, me, now: now) { return reject(req, IMErrorCode.mutedInChatroom.rawValue) }
        let recipients = store.rooms[roomId]!.memberIds.filter { $0 != me }
        if rules.containsSensitiveWord(req.content) { return silentDrop(req, flags: flags, recipients: recipients, reason: .sensitiveWord, now: now) }

        // The drop policy.
        let whitelist = admin.whitelist(roomId)
        let priority: ChatroomQuota.Priority =
            admin.chatroomWhitelistTypes.contains(req.up.classname) || whitelist.contains(me) ? .whitelisted
            : (rules.lowPriorityTypes.contains(req.up.classname) || flags.chatroomPriority == .low ? .low : .high)
        let c = config.chatroom
        let slot = store.rooms[roomId]!.quota.admit(priority, now: now, windowMs: c.quotaWindowMs, capacity: c.quotaCapacity,
                                                     reservedHigh: c.quotaReservedHigh, lowMayTakeReserved: config.bugs.contains(.b13))
        if slot == nil {
            if c.dropNotifiesSender || flags.isStatus {
                emit(.dropped(messageUId: nil, conversation: req.conversation, userId: nil, reason: .chatroomQuota))
                if c.dropNotifiesSender { reject(req, c.dropErrorCode) }
            } else {
                silentDrop(req, flags: flags, recipients: recipients, reason: .chatroomQuota, now: now)
            }
            return
        }
        if flags.isStatus { return deliverStatus(req, to: recipients, now: now) }
        acceptChatroomMessage(room: roomId, conversation: req.conversation, sender: me, senderDevice: req.session.deviceId,
                              senderConnection: req.connection, objectName: req.up.classname, content: req.content,
                              flags: flags, clientUniqueId: req.clientUniqueId, mentioned: req.mentioned,
                              noNotification: req.noNotification, extraContent: req.extraContent,
                              ack: req.wantsAck ? req.messageId : nil, now: now)
    }

    /// A message produced in a room (a member's send, a recall, a KV notification): offline kicks,
    /// dataTime + messageUId, history ring, PUBACK, `s_ntf` type 2 to every joined session but the
    /// sending one. Returns the record.
    @discardableResult
    mutating func acceptChatroomMessage(room roomId: String, conversation: ConversationKey, sender: String, senderDevice: String,
                                        senderConnection: ConnectionID?, objectName: String, content: [UInt8],
                                        flags: MessageTypeFlags, clientUniqueId: Int64, mentioned: Bool, noNotification: Bool,
                                        extraContent: String?, ack: UInt16?, now: Int64) -> MessageRecord {
        let kicked = store.rooms[roomId]!.evaluateOfflineKicks(now: now, config: config.chatroom, whitelist: admin.whitelist(roomId))
        for u in kicked { removeMember(room: roomId, user: u, reason: .offlineKick, now: now) }
        let m = makeRecord(conversation: conversation, sender: sender, senderDevice: senderDevice, objectName: objectName,
                           content: content, flags: flags, clientUniqueId: clientUniqueId, mentioned: mentioned,
                           noNotification: noNotification, pushAllowed: false, extraContent: extraContent, now: now)
        store.rooms[roomId]!.appendHistory(m, limit: config.chatroom.historySize)
        store.rooms[roomId]!.lastActivity = now
        let room = store.rooms[roomId]!
        emitAccepted(m, recipients: room.memberIds.filter { $0 != sender })
        for u in kicked { emit(.dropped(messageUId: m.uid, conversation: conversation, userId: u, reason: .kickedFromRoom)) }
        if let ack, let c = senderConnection { writePuback(c, messageId: ack, dataTime: m.dataTime, uid: m.uid) }
        var n = RMTPNotifyMsg()
        n.type = 2
        n.time = m.dataTime
        n.chrmID = roomId
        let body = built(n)
        for user in room.memberIds {
            for s in room.member(user)!.sessions where s.connection != senderConnection {
                write(s.connection, .publish(Frame.Publish(flags: .none, date: Self.seconds(now), topic: .s_ntf, targetId: roomId,
                                                           messageId: nextMessageId(s.connection), body: body)))
                emit(.fannedOut(messageUId: m.uid, userId: user, deviceId: s.deviceId, s.connection, via: .chatroomNotify))
            }
        }
        return m
    }

    // MARK: Membership

    mutating func createRoom(_ roomId: String, by user: String?, now: Int64) {
        guard store.rooms[roomId] == nil else { return }
        store.rooms[roomId] = Chatroom(id: roomId, now: now)
        emit(.chatroomCreated(roomId: roomId, byUserId: user))
        armAutoDestroy(roomId, now: now)
    }

    /// `joinChrm` / `joinChrmR` (ChrmInput; `nothing == 2` = join an existing room only → 23410).
    mutating func handleJoin(_ q: Frame.Query, on id: ConnectionID, session s: Session, now: Int64) {
        let roomId = q.targetId
        guard !roomId.isEmpty, let input = try? q.decodeBody(RMTPChrmInput.self) else {
            return rejectQuery(id, q, code: IMErrorCode.invalidParameter.rawValue, now: now)
        }
        if admin.banned(roomId, s.userId, now: now) {
            return rejectQuery(id, q, code: IMErrorCode.kickedAndBannedFromChatroom.rawValue, now: now)
        }
        if let room = store.rooms[roomId] {
            let limit = config.chatroom.memberLimit
            if limit > 0, !room.isMember(s.userId), room.memberIds.count >= limit {
                return rejectQuery(id, q, code: IMErrorCode.chatroomMemberLimit.rawValue, now: now)
            }
        } else if input.nothing == 2 {
            return rejectQuery(id, q, code: IMErrorCode.chatroomNotExist.rawValue, now: now)
        }
        if q.topic == Topic.joinChrmR.rawValue, !config.bugs.contains(.b9), let room = store.rooms[roomId],
           let kickedAt = room.offlineKickedAt[s.userId], room.deviceJoinedAt[s.deviceId] ?? .min < kickedAt {
            // This device was in the room when the offline rule removed its user: refuse the
            // automatic rejoin so its SDK reports the kick (B9: let back in without a word). A
            // fresh join always works.
            return rejectQuery(id, q, code: IMErrorCode.notInChatroom.rawValue, now: now)
        }
        if config.chatroom.oneRoomPerUser {
            for other in store.userRooms[s.userId] ?? [] where other != roomId {
                removeMember(room: other, user: s.userId, reason: .switchedRoom, now: now)
            }
        }
        createRoom(roomId, by: s.userId, now: now)
        store.rooms[roomId]!.join(s.userId, session: JoinedSession(connection: id, deviceId: s.deviceId, platformRank: s.platform.rank), now: now)
        store.rooms[roomId]!.lastActivity = now
        store.rooms[roomId]!.deviceJoinedAt[s.deviceId] = now
        SortedStrings.insert(roomId, into: &store.userRooms[s.userId, default: []])
        SortedStrings.insert(roomId, into: &connections.values[connections.index(forKey: id)!].rooms)
        emit(.chatroomJoined(roomId: roomId, userId: s.userId, deviceId: s.deviceId))
        var out = RMTPChrmOutput()
        out.nothing = 0
        queryAck(id, messageId: q.messageId, body: built(out), reliable: false, now: now)
    }

    /// `exitChrm`: the user leaves (every session). Quitting a room one is not in succeeds.
    mutating func handleExit(_ q: Frame.Query, on id: ConnectionID, session s: Session, now: Int64) {
        if store.rooms[q.targetId]?.isMember(s.userId) == true {
            removeMember(room: q.targetId, user: s.userId, reason: .quit, now: now)
        }
        var out = RMTPChrmOutput()
        out.nothing = 0
        queryAck(id, messageId: q.messageId, body: built(out), reliable: false, now: now)
    }

    /// Removes a member (quit, switch, kick, ban, destroy): its sessions stop getting the room, its
    /// auto-delete keys vanish (not on destroy: the KV goes with the room).
    mutating func removeMember(room roomId: String, user: String, reason: ChatroomLeaveReason, now: Int64) {
        guard let m = store.rooms[roomId]?.remove(user) else { return }
        for s in m.sessions where hasConnection(s.connection) {
            SortedStrings.remove(roomId, from: &connections.values[connections.index(forKey: s.connection)!].rooms)
        }
        if var rooms = store.userRooms[user] {
            SortedStrings.remove(roomId, from: &rooms)
            store.userRooms[user] = rooms.isEmpty ? nil : rooms
        }
        emit(.chatroomLeft(roomId: roomId, userId: user, reason: reason))
        if config.chatroom.autoDestroyCountsLeaving, reason != .destroyed { store.rooms[roomId]!.lastActivity = now }
        if reason == .offlineKick { store.rooms[roomId]!.offlineKickedAt[user] = now }
        if reason != .destroyed { removeAutoDeleteKeys(room: roomId, user: user, now: now) }
    }

    /// A joined session ended: the member is offline from now if it was its last session.
    mutating func detachFromRoom(_ roomId: String, user: String, connection: ConnectionID, now: Int64) {
        guard store.rooms[roomId] != nil else { return }
        if store.rooms[roomId]!.detach(user, connection: connection, now: now) {
            removeAutoDeleteKeys(room: roomId, user: user, now: now)
        }
    }

    mutating func removeAutoDeleteKeys(room roomId: String, user: String, now: Int64) {
        guard store.rooms[roomId] != nil else { return }
        for key in store.rooms[roomId]!.kv.removeAutoDelete(of: user, now: now) {
            emit(.chatroomKVChanged(roomId: roomId, key: key, userId: user, deleted: true))
        }
    }

    mutating func destroyRoom(_ roomId: String, reason: String, now: Int64) {
        guard let room = store.rooms[roomId] else { return }
        for u in room.memberIds { removeMember(room: roomId, user: u, reason: .destroyed, now: now) }
        if room.autoDestroyArmed { effect(.cancelTimer(.chatroomAutoDestroy(roomId: roomId))) }
        store.rooms[roomId] = nil
        emit(.chatroomDestroyed(roomId: roomId, reason: reason))
    }

    // MARK: Auto-destroy

    mutating func armAutoDestroy(_ roomId: String, now: Int64) {
        guard let room = store.rooms[roomId], !room.autoDestroyArmed, !admin.keptAlive.contains(roomId) else { return }
        let due = max(room.lastActivity + config.chatroom.autoDestroyAfterMs, now)
        store.rooms[roomId]!.autoDestroyArmed = true
        effect(.setTimer(.chatroomAutoDestroy(roomId: roomId), after: .milliseconds(due - now)))
    }

    mutating func autoDestroyFired(_ roomId: String, now: Int64) {
        guard let room = store.rooms[roomId], room.autoDestroyArmed else { return }
        store.rooms[roomId]!.autoDestroyArmed = false
        if admin.keptAlive.contains(roomId) { return }
        if now - room.lastActivity >= config.chatroom.autoDestroyAfterMs {
            destroyRoom(roomId, reason: "inactive", now: now)
        } else {
            armAutoDestroy(roomId, now: now)
        }
    }

    // MARK: chrmPull

    /// `chrmPull{syncTime, count}`: the newest `count` messages newer than syncTime from the ring
    /// (-1 → none, 0 → 10, at most `historySize`), oldest first, without the requesting device's
    /// own messages; the response syncTime is the newest returned dataTime.
    mutating func handleChatroomPull(_ q: Frame.Query, on id: ConnectionID, session s: Session, now: Int64) {
        guard let room = store.rooms[q.targetId], room.isMember(s.userId) else {
            return rejectQuery(id, q, code: IMErrorCode.notInChatroom.rawValue, now: now)
        }
        guard let req = try? q.decodeBody(RMTPChrmPullMsg.self) else {
            return rejectQuery(id, q, code: IMErrorCode.invalidParameter.rawValue, now: now)
        }
        let count = req.count < 0 ? 0 : (req.count == 0 ? 10 : min(Int(req.count), config.chatroom.historySize))
        if req.syncTime > 0 {
            // The device asks for everything after its cursor, but the ring already dropped some of
            // it: those messages are lost to this device, and we say so.
            let conv = ConversationKey(.chatroom, room.id)
            for e in room.evicted where e.dataTime > req.syncTime && !s.sent(by: e.senderUserId, e.senderDeviceId) {
                emit(.dropped(messageUId: e.uid, conversation: conv, userId: s.userId, reason: .chatroomRingOverflow))
            }
        }
        var page: [MessageRecord] = []
        if count > 0 {
            for m in room.history.reversed() where m.dataTime > req.syncTime {
                if s.sent(by: m.senderUserId, m.senderDeviceId) { continue }
                page.append(m)
                if page.count == count { break }
            }
            page.reverse()
        }
        if req.syncTime <= 0, let joinedAt = room.deviceJoinedAt[s.deviceId] {
            // A pull without a cursor (the join pull) returns the newest `count`: what was sent
            // after this device joined and is not in the page — left out by the count, or already
            // out of the ring — is lost to it (the protocol's, not a fault), and we say so.
            let conv = ConversationKey(.chatroom, room.id)
            let shown = Set(page.map(\.uid))
            for e in room.evicted where e.dataTime > joinedAt && !s.sent(by: e.senderUserId, e.senderDeviceId) {
                emit(.dropped(messageUId: e.uid, conversation: conv, userId: s.userId, reason: .chatroomJoinCount))
            }
            for m in room.history where m.dataTime > joinedAt && !shown.contains(m.uid)
                && !s.sent(by: m.senderUserId, m.senderDeviceId) {
                emit(.dropped(messageUId: m.uid, conversation: conv, userId: s.userId, reason: .chatroomJoinCount))
            }
        }
        let syncTime: Int64
        if let last = page.last {
            syncTime = last.dataTime
        } else if req.count < 0 {
            // "No history": the cursor jumps to the room's newest message.
            syncTime = max(req.syncTime, room.history.last?.dataTime ?? req.syncTime)
        } else {
            syncTime = req.syncTime
        }
        let items = page.map { $0.encoded(own: $0.senderUserId == s.userId, receivedElsewhere: false) }
        let body = FastProto.downStreamMessages(encoded: items, syncTime: syncTime, finished: true)
        emit(.pulled(id, userId: s.userId, deviceId: s.deviceId, topic: q.topic, messageUIds: page.map(\.uid),
                     syncTime: syncTime, finished: true))
        queryAck(id, messageId: q.messageId, body: body, reliable: true, now: now)
    }
}
