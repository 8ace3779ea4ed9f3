import IMWire

// The server API (RongCloud's REST API), called by scenarios and tests (Docs/server.md §9).
extension ServerCore {
    mutating func api(_ call: ServerAPICall, now: Int64) {
        switch call {
        case .createChatroom(let roomId):
            createRoom(roomId, by: nil, now: now)
        case .destroyChatroom(let roomId):
            destroyRoom(roomId, reason: "api", now: now)
        case .keepAliveChatroom(let roomId, let enabled):
            if enabled {
                admin.keptAlive.insert(roomId)
                createRoom(roomId, by: nil, now: now)
                if store.rooms[roomId]!.autoDestroyArmed {
                    store.rooms[roomId]!.autoDestroyArmed = false
                    effect(.cancelTimer(.chatroomAutoDestroy(roomId: roomId)))
                }
            } else {
                admin.keptAlive.remove(roomId)
                armAutoDestroy(roomId, now: now)
            }
        case .banChatroomUser(let roomId, let userId, let durationMs):
            let key = RoomUserKey(roomId: roomId, userId: userId)
            if durationMs > 0 {
                admin.chatroomBans[key] = now.addingReportingOverflow(durationMs).overflow ? .max : now + durationMs
                removeMember(room: roomId, user: userId, reason: .banned, now: now)
            } else {
                admin.chatroomBans[key] = nil
            }
        case .muteChatroomUser(let roomId, let userId, let durationMs):
            admin.chatroomMutes[RoomUserKey(roomId: roomId, userId: userId)] =
                durationMs > 0 ? (now.addingReportingOverflow(durationMs).overflow ? .max : now + durationMs) : nil
        case .setChatroomUserWhitelist(let roomId, let userIds):
            admin.chatroomWhitelists[roomId] = userIds.isEmpty ? nil : Set(userIds)
            directory.chatroomWhitelists[roomId] = userIds.isEmpty ? nil : userIds
        case .setChatroomMessageWhitelist(let objectNames):
            admin.chatroomWhitelistTypes = Set(objectNames)
        case .muteGroupUser(let groupId, let userId, let muted):
            if muted { directory.groupMutes[groupId, default: []].insert(userId) } else { directory.groupMutes[groupId]?.remove(userId) }
        case .addGroupMembers(let groupId, let userIds):
            for u in userIds { groups[groupId, default: GroupState()].add(u, at: now) }
            directory.groups[groupId] = groups[groupId]!.members
        case .removeGroupMembers(let groupId, let userIds):
            for u in userIds { groups[groupId]?.remove(u) }
            directory.groups[groupId] = groups[groupId]?.members
        case .blockUser(let userId, let blocked):
            if blocked {
                directory.bannedUsers.insert(userId)
                for c in onlineConnections(userId) {
                    write(c, .disconnect(Frame.Disconnect(status: .blocked)))
                    endConnection(c, reason: .blocked, now: now, closeTransport: true)
                }
            } else {
                directory.bannedUsers.remove(userId)
            }
        case .sendSystemMessage(let toUserId, let objectName, let content):
            sendSystem(to: [toUserId], objectName: objectName, content: content, now: now)
        case .broadcast(let objectName, let content):
            sendSystem(to: Array(Set(directory._tokens.values.map(\.userId))).sorted(), objectName: objectName, content: content, now: now)
        }
    }

    /// A system-conversation message (`system:<systemSenderId>`): one messageUId for all
    /// recipients, inbox + fan-out + push like any offline message; users cannot reply.
    mutating func sendSystem(to recipients: [String], objectName: String, content: [UInt8], now: Int64) {
        let flags = config.registry.flags(for: objectName) ?? .normal
        let m = makeRecord(conversation: ConversationKey(.system, config.systemSenderId), sender: config.systemSenderId,
                           senderDevice: nil, objectName: objectName, content: content, flags: flags, clientUniqueId: 0,
                           mentioned: false, noNotification: false, pushAllowed: true, extraContent: nil, now: now)
        emitAccepted(m, recipients: recipients)
        deliver(m, to: recipients, now: now)
    }
}
