import IMWire

// Chatroom attributes: setKV / delKV / pullKV (Docs/server.md §7.4).
extension ServerCore {
    mutating func handleKVChange(_ q: Frame.Query, delete: Bool, on id: ConnectionID, session s: Session, now: Int64) {
        let roomId = q.targetId
        guard store.rooms[roomId]?.isMember(s.userId) == true else {
            return rejectQuery(id, q, code: IMErrorCode.notInChatroom.rawValue, now: now)
        }
        let entity: RMTPChrmKVEntity, notify: Bool, notification: RMTPUpStreamMessage?
        if delete {
            guard let r = try? q.decodeBody(RMTPDeleteChrmKV.self) else {
                return rejectQuery(id, q, code: IMErrorCode.invalidParameter.rawValue, now: now)
            }
            (entity, notify, notification) = (r.entry, r.bNotify, r.hasNotification ? r.notification : nil)
        } else {
            guard let r = try? q.decodeBody(RMTPSetChrmKV.self) else {
                return rejectQuery(id, q, code: IMErrorCode.invalidParameter.rawValue, now: now)
            }
            (entity, notify, notification) = (r.entry, r.bNotify, r.hasNotification ? r.notification : nil)
        }
        let force = entity.status & 2 != 0
        let result: ChatroomKV.Entry
        do throws(ChatroomKV.Failure) {
            if delete {
                result = try store.rooms[roomId]!.kv.delete(key: entity.key, user: s.userId, device: s.deviceId, force: force,
                                                            now: now, config: config.chatroom)
            } else {
                result = try store.rooms[roomId]!.kv.set(key: entity.key, value: entity.value, user: s.userId, device: s.deviceId,
                                                         autoDelete: entity.status & 1 != 0, force: force, now: now,
                                                         config: config.chatroom)
            }
        } catch {
            guard case .code(let code) = error else { return }
            return rejectQuery(id, q, code: code, now: now)
        }
        emit(.chatroomKVChanged(roomId: roomId, key: entity.key, userId: s.userId, deleted: delete))
        var out = RMTPChrmOutput()
        out.nothing = 0
        queryAck(id, messageId: q.messageId, body: built(out), reliable: false, now: now)

        // Announce: `s_cmd` NotifyMsg type 2 to every joined session (→ pullKV) …
        var n = RMTPNotifyMsg()
        n.type = 2
        n.time = result.timestamp
        n.chrmID = roomId
        let body = built(n)
        let r = store.rooms[roomId]!
        for user in r.memberIds {
            for js in r.member(user)!.sessions {
                write(js.connection, .publish(Frame.Publish(flags: .none, date: Self.seconds(now), topic: .s_cmd, targetId: roomId,
                                                            messageId: nextMessageId(js.connection), body: body)))
            }
        }
        // … and, with bNotify, an RC:chrmKVNotiMsg in the room (the request's own notification
        // message if it carries one). It skips the quota: it is part of the KV operation.
        guard notify else { return }
        let objectName: String, content: [UInt8]
        if let up = notification {
            (objectName, content) = (up.classname, up.contentBytes)
        } else {
            let c = ChatroomKVNotificationContent(type: delete ? .remove : .set, key: entity.key, value: delete ? "" : entity.value)
            (objectName, content) = (ChatroomKVNotificationContent.objectName, c.json.serialized())
        }
        let flags = config.registry.flags(for: objectName) ?? MessageTypeFlags(persistent: .isPersisted, offline: false, push: false)
        acceptChatroomMessage(room: roomId, conversation: ConversationKey(.chatroom, roomId), sender: s.userId,
                              senderDevice: s.deviceId, senderConnection: nil, objectName: objectName, content: content,
                              flags: flags, clientUniqueId: 0, mentioned: false, noNotification: false, extraContent: nil,
                              ack: nil, now: now)
    }

    /// `pullKV{timestamp}` → ChrmKVOutput: timestamp 0 = every live key (`bFullUpdate`), otherwise
    /// every change after it (deleted keys with status 4); `syncTime` = the room's newest KV timestamp.
    mutating func handlePullKV(_ q: Frame.Query, on id: ConnectionID, session s: Session, now: Int64) {
        guard let room = store.rooms[q.targetId], room.isMember(s.userId) else {
            return rejectQuery(id, q, code: IMErrorCode.notInChatroom.rawValue, now: now)
        }
        guard let req = try? q.decodeBody(RMTPQueryChrmKV.self) else {
            return rejectQuery(id, q, code: IMErrorCode.invalidParameter.rawValue, now: now)
        }
        var out = RMTPChrmKVOutput()
        out.entries = room.kv.changes(since: req.timestamp).map { k, e in
            var x = RMTPChrmKVEntity()
            x.key = k
            x.value = e.deleted ? "" : e.value
            x.status = (e.autoDelete ? 1 : 0) | (e.deleted ? 4 : 0)
            x.timestamp = e.timestamp
            x.uid = e.creator
            return x
        }
        out.bFullUpdate = req.timestamp <= 0
        out.syncTime = max(req.timestamp, room.kv.lastTimestamp)
        queryAck(id, messageId: q.messageId, body: built(out), reliable: true, now: now)
    }
}
