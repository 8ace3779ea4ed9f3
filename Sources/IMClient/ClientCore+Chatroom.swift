import IMStore
import IMWire

// Chatrooms (im-semantics §6, wire-protocol §4): joinChrm + chrmPull{0, count}; `s_ntf` type 2 →
// chrmPull with the in-memory room cursor; joinChrmR after every reconnect; quit clears local
// messages and state; kicks are learned from a refused pull or rejoin.
extension ClientCore {
    /// `messageCount` of a join: -1 → none (the pull still moves the cursor to the newest
    /// message), 0 → 10, 1…50 as is, > 50 → clamped to 50; < -1 → nil (33003).
    func chatroomJoinCount(_ requested: Int32) -> Int32? {
        switch requested {
        case ..<(-1): nil
        case -1: -1
        case 0: 10
        default: min(requested, config.chatroomJoinMaxCount)
        }
    }

    mutating func joinChatroom(_ roomId: String, messageCount: Int32, existing: Bool) {
        guard !roomId.isEmpty, let count = chatroomJoinCount(messageCount) else {
            return out.callback(.chatroomJoinFailed(roomId: roomId, code: IMErrorCode.invalidParameter.rawValue))
        }
        guard hasSession else {
            return out.callback(.chatroomJoinFailed(roomId: roomId, code: ClientErrorCode.notConnected))
        }
        guard !roomCleanupOwed(roomId) else {
            // The room's old rows could not be removed yet (storage fault): the database error.
            return out.callback(.chatroomJoinFailed(roomId: roomId, code: IMErrorCode.databaseError.rawValue))
        }
        // One room at a time: joining another quits the first — only once the new join has
        // succeeded (im-semantics §6; `joinAnswered`). A failed join leaves the old room as it was.
        var input = RMTPChrmInput()
        input.nothing = existing ? 2 : 0
        let kind: JoinKind = existing ? .joinExisting : .join
        let id = query(.joinChrm, target: roomId, body: built(input), .join(roomId: roomId, kind: kind))
        if rooms[roomId]?.isJoined == true {
            // A second join of a room the user is in: it stays in the room meanwhile, still
            // receiving it (im-semantics §6: a pending join leaves the user where it was), so the
            // room stays `.joined` and its notifies keep pulling from the cursor. Cursor, id
            // cache and KV bookkeeping stay.
            rooms.update(roomId) {
                $0.reJoinsInFlight += 1
                $0.joinCount = count
            }
        } else if rooms[roomId] != nil {
            // Joined again while the first join (or the automatic rejoin) is unanswered.
            rooms.update(roomId) {
                $0.phase = .joining(messageId: id, kind: kind)
                $0.joinCount = count
            }
        } else {
            rooms.insert(ChatroomRoom(roomId: roomId, joinCount: count, messageId: id, kind: kind))
        }
    }

    mutating func joinAnswered(_ roomId: String, kind: JoinKind, _ q: Frame.QueryAck) {
        guard q.status == 0 else {
            return joinFailed(roomId, kind: kind, code: Int32(q.status), reason: "refused")
        }
        guard var room = rooms[roomId] else { return }
        // The app's join of a room it was already in (`joinChatroom`): answered below.
        let reJoin = kind != .rejoin && room.isJoined
        if reJoin { room.reJoinsInFlight = max(0, room.reJoinsInFlight - 1) }
        do {
            try store.joinChatroom(roomId, at: now.milliseconds)
        } catch {
            storeError("join chatroom \(roomId)", error)
        }
        room.phase = .joined
        room.needsRejoin = false
        room.rejoinForgotten = false
        rooms.insert(room)
        if kind != .rejoin, !config.allowMultipleChatrooms {
            // The new join succeeded: now the previous room is quit (the server already moved the
            // member; the exitChrm is for a server that allows several rooms).
            for other in rooms.roomIds where other != roomId && !(rooms[other]?.isPendingNewJoin ?? false) { quitChatroom(other) }
        }
        out.note(.chatroomState(roomId: roomId, joined: true))
        if kind == .rejoin {
            // Rejoined after a reconnect: pull what was missed from the room cursor, refresh KV.
            // If a pull already runs (the app's own join of the room was answered first), pull
            // after it: two pulls from one cursor both return the message at the new cursor's
            // time, which is not older than the cursor and so shown twice (everyday seed 10013).
            if room.pullInFlight != nil {
                rooms.update(roomId) { $0.queuedNotify = .max }
            } else {
                sendChatroomPull(roomId, syncTime: room.cursor, count: config.chatroomPullCount, isJoinPull: false)
            }
            if room.kvSynced {
                sendPullKV(roomId, timestamp: room.kvSyncTime)
            } else if room.kvPostJoinPending {
                sendPullKV(roomId, timestamp: 0)
            }
            return
        }
        out.callback(.chatroomJoined(roomId: roomId))
        if reJoin && (room.cursor > 0 || room.pullInFlight != nil) {
            // The user never left: it has the room's history up to the cursor, and a join pull
            // (the newest `count`) would move the cursor past messages not pulled yet. Pull from
            // the cursor (after the pull in flight, if one runs); as the join's pull, the id cache
            // hides what the user was already shown.
            if room.pullInFlight != nil {
                rooms.update(roomId) { $0.queuedNotify = .max }
            } else {
                sendChatroomPull(roomId, syncTime: room.cursor, count: config.chatroomPullCount, isJoinPull: true)
            }
        } else {
            sendChatroomPull(roomId, syncTime: 0, count: room.joinCount, isJoinPull: true)
        }
        startPostJoinKVSync(roomId)
    }

    /// A join or rejoin that got no success: a failed join forgets the room; a rejoin refused
    /// by the server (kicked, banned, destroyed) loses it; a rejoin cut by the connection waits
    /// for the next one.
    mutating func joinFailed(_ roomId: String, kind: JoinKind, code: Int32, reason: String) {
        switch kind {
        case .join, .joinExisting:
            if var room = rooms[roomId], room.isJoined, room.reJoinsInFlight > 0,
               code != IMErrorCode.notInChatroom.rawValue, code != IMErrorCode.kickedAndBannedFromChatroom.rawValue,
               code != IMErrorCode.chatroomNotExist.rawValue {
                // A second join of a room the user is in failed without ending the membership
                // (timeout, connection lost, member limit): the user stays in the room, still
                // receiving it (im-semantics §6); a lost connection rejoins it as usual.
                room.reJoinsInFlight -= 1
                rooms.insert(room)
                return out.callback(.chatroomJoinFailed(roomId: roomId, code: code))
            }
            rooms.remove(roomId)
            clearRoomLocally(roomId, operation: "forget chatroom \(roomId)", reportQuit: false)
            out.callback(.chatroomJoinFailed(roomId: roomId, code: code))
        case .rejoin:
            guard code == IMErrorCode.requestTimeout.rawValue || !hasSession else { return roomLost(roomId, code: code) }
            rooms.update(roomId) {
                $0.phase = .joined
                $0.needsRejoin = true
            }
            if hasSession {
                // Timed out on a live connection: try again now.
                out.note(.ignored(input: "joinChrmR \(roomId)", reason: "\(reason) (\(code)); rejoining again"))
                rejoinChatrooms()
            } else {
                out.note(.ignored(input: "joinChrmR \(roomId)", reason: "\(reason) (\(code)); rejoined on the next connection"))
            }
        }
    }

    /// CONNACK of a reconnect: joinChrmR for every room that needs it.
    mutating func rejoinChatrooms() {
        for room in rooms.rooms where room.phase == .joined && room.needsRejoin {
            if room.rejoinForgotten {
                out.note(.skipped(messageUId: nil, conversation: ConversationKey(.chatroom, room.roomId),
                                  reason: "B6: rejoin skipped after a ping timeout during connect"))
                continue
            }
            var input = RMTPChrmInput()
            input.nothing = 0
            let id = query(.joinChrmR, target: room.roomId, body: built(input),
                           .join(roomId: room.roomId, kind: .rejoin))
            rooms.update(room.roomId) { $0.phase = .joining(messageId: id, kind: .rejoin) }
        }
    }

    /// A ping timed out. B6: a room whose rejoin has not completed on this connection (the link
    /// check before the first pull, a joinChrmR not answered or timed out) is "during connect":
    /// the SDK forgets that it needs a rejoin.
    mutating func forgetRejoinsAfterPingTimeout() {
        guard config.bugs.contains(.b6) else { return }
        for room in rooms.rooms where room.needsRejoin && !room.rejoinForgotten {
            // B6: the ping timeout during connect clears the "rejoin needed" mark (fixed in
            // 4.0.3 Stable / 4.0.4 Dev): the next reconnect does not rejoin.
            rooms.update(room.roomId) { $0.rejoinForgotten = true }
            out.note(.ignored(input: "ping timeout during connect", reason: "B6: chatroom \(room.roomId) rejoin forgotten"))
        }
    }

    /// The connection dropped: every room in it needs a rejoin; its pulls are gone.
    mutating func chatroomsLinkLost(wasConnected: Bool) {
        for roomId in rooms.roomIds {
            rooms.update(roomId) {
                $0.needsRejoin = true
                $0.pullInFlight = nil
                $0.queuedNotify = nil
                $0.kvPullInFlight = nil
                $0.kvNotifyQueued = false
            }
        }
    }

    /// Forgets every room (disconnect, logout, fatal stop).
    mutating func clearChatrooms(reason: String, callback: Bool) {
        for room in rooms.removeAll() {
            clearRoomLocally(room.roomId, operation: "clear chatroom \(room.roomId)", reportQuit: callback) {
                "chatroom state cleared by \(reason) (\($0.deletedMessageCount) messages, \($0.removedKVCount) KV)"
            }
        }
    }

    mutating func quitChatroom(_ roomId: String) {
        if hasSession {
            var input = RMTPChrmInput()
            input.nothing = 0
            query(.exitChrm, target: roomId, body: built(input), .quit(roomId: roomId))
        }
        rooms.remove(roomId)
        // `chatroomQuit` once the room's rows are gone (owed after a storage fault).
        clearRoomLocally(roomId, operation: "quit chatroom \(roomId)", reportQuit: true) {
            "quit: \($0.deletedMessageCount) messages, \($0.removedKVCount) KV removed"
        }
    }

    /// The server no longer has us in the room (kicked, banned: 23406/23409; gone: 23410): local
    /// state goes. The wire has no kick notice: the client learns it from a refused request.
    mutating func roomLost(_ roomId: String, code: Int32) {
        guard rooms.remove(roomId) != nil else { return }
        clearRoomLocally(roomId, operation: "lost chatroom \(roomId)", reportQuit: false)
        if code == IMErrorCode.chatroomNotExist.rawValue {
            out.callback(.chatroomDestroyed(roomId: roomId))
        } else {
            out.callback(.chatroomKicked(roomId: roomId))
        }
    }

    // MARK: Pulls

    /// `s_ntf` type 2: pull the room from its cursor (or remember the notify while a pull runs).
    mutating func chatroomNotify(_ roomId: String, time: Int64) {
        guard let room = rooms[roomId], room.isJoined else {
            return out.note(.skipped(messageUId: nil, conversation: ConversationKey(.chatroom, roomId),
                                     reason: "chatroom s_ntf for a room not joined"))
        }
        if time > 0, time <= room.cursor {
            return out.note(.skipped(messageUId: nil, conversation: ConversationKey(.chatroom, roomId),
                                     reason: "chatroom s_ntf time \(time) ≤ room cursor \(room.cursor)"))
        }
        if room.pullInFlight != nil {
            rooms.update(roomId) { $0.queuedNotify = max($0.queuedNotify ?? .min, time > 0 ? time : .max) }
        } else {
            sendChatroomPull(roomId, syncTime: room.cursor, count: config.chatroomPullCount, isJoinPull: false)
        }
    }

    mutating func sendChatroomPull(_ roomId: String, syncTime: Int64, count: Int32, isJoinPull: Bool) {
        var pull = RMTPChrmPullMsg()
        pull.syncTime = syncTime
        pull.count = count
        let id = query(.chrmPull, target: roomId, body: built(pull),
                       .chatroomPull(roomId: roomId, isJoinPull: isJoinPull))
        rooms.update(roomId) { $0.pullInFlight = id }
    }

    mutating func chatroomPullAnswered(_ roomId: String, isJoinPull: Bool, _ q: Frame.QueryAck) {
        // The room is updated in place (`rooms.update`): a copy taken out and put back made every
        // pull copy the join cache on its first append (issue 30).
        guard let r = rooms.index(of: roomId) else { return }
        rooms.update(at: r) { if $0.pullInFlight == q.messageId { $0.pullInFlight = nil } }
        guard q.status == 0 else {
            return chatroomRequestRefused(roomId, what: "chrmPull", status: q.status)
        }
        guard var page = chatroomPullPage(roomId, q) else { return }
        let cursorBefore = rooms.update(at: r) { $0.cursor }
        // Ids shown from this page, in order. They join the cache only once the page is stored
        // (a page that is not stored leaves the cache as it was); meanwhile the cache a join
        // pull checks is the ring `joinCacheBefore + shown` would be. Only a join pull holds on to
        // the cache (a second reference would make the appends copy it).
        let joinCacheBefore = isJoinPull ? rooms.update(at: r) { $0.joinCache } : []
        var shown: [String] = []
        var items: [IncomingMessage] = []
        items.reserveCapacity(page.list.count)
        for k in page.list.indices {
            let m = IncomingMessage(page.takeMessage(at: k))
            if m.dataTime < cursorBefore {
                out.note(.skipped(messageUId: m.messageUId, conversation: m.conversation,
                                  reason: "dataTime \(m.dataTime) older than room cursor \(cursorBefore)"))
                continue
            }
            // The id cache is the join pull's only (wire-protocol §4): incremental pulls rely on
            // the cursor alone, as the public client does.
            if isJoinPull, let uid = m.messageUId,
               ChatroomRoom.ringContains(uid, cache: joinCacheBefore, then: shown) {
                out.note(.skipped(messageUId: uid, conversation: m.conversation, reason: "in the join pull's id cache"))
                continue
            }
            // The cache holds the newest ids shown from this room, so a join pull (first or a
            // second join of the same room) never shows again what the user just saw.
            if let uid = m.messageUId { shown.append(uid) }
            items.append(m)
        }
        let cursorMoved = page.syncTime > cursorBefore
        if cursorMoved {
            out.note(.cursor(name: SyncCursor.chatroom(roomId).name, value: page.syncTime))
        }
        let (queued, cursor) = rooms.update(at: r) { room in
            if cursorMoved { room.cursor = page.syncTime }
            let queued = room.queuedNotify
            room.queuedNotify = nil
            return (queued, room.cursor)
        }
        // Chatroom messages never move the inbox/sendbox cursors.
        guard deliver(items, hasPackage: false, path: "chrmPull \(roomId)", inbox: nil, sendbox: nil) else {
            // Not stored (storage fault): the room cursor goes back, so the room's next pull
            // fetches these messages again.
            // Nor were they shown: their ids never join the cache, or the next join pull would
            // skip them as seen (everyday-storage --swarm seed 19).
            if let i = rooms.index(of: roomId) {
                let movedBack = rooms.update(at: i) { room -> Bool in
                    guard room.cursor == page.syncTime, cursorBefore < page.syncTime else { return false }
                    room.cursor = cursorBefore
                    return true
                }
                if movedBack {
                    out.note(.changed(conversation: ConversationKey(.chatroom, roomId), messageIds: [],
                                      what: "room cursor back to \(cursorBefore): page not stored"))
                }
            }
            // Pulled again on the heartbeat if no s_ntf comes first (a quiet room would
            // otherwise never bring these messages back).
            roomsToRepull.insert(roomId)
            return
        }
        if !shown.isEmpty, let i = rooms.index(of: roomId) {
            rooms.update(at: i) { for uid in shown { $0.remember(uid) } }
        }
        if !roomsToRepull.isEmpty { roomsToRepull.remove(roomId) }
        if let queued, queued > cursor, rooms[roomId]?.isJoined == true {
            sendChatroomPull(roomId, syncTime: cursor, count: config.chatroomPullCount, isJoinPull: false)
        }
    }

    /// The answer's page, or nil (noted) when its body does not decode.
    private mutating func chatroomPullPage(_ roomId: String, _ q: Frame.QueryAck) -> RMTPDownStreamMessages? {
        do {
            return try q.decodeBody(RMTPDownStreamMessages.self)
        } catch {
            out.note(.ignored(input: "chrmPull \(roomId)", reason: "\(error)"))
            return nil
        }
    }

    /// A room request refused by the server: 23406 (not in room) / 23409 (kicked and banned) /
    /// 23410 (gone) mean the membership is over.
    mutating func chatroomRequestRefused(_ roomId: String, what: String, status: UInt16) {
        let code = Int32(status)
        out.note(.ignored(input: "\(what) \(roomId)", reason: "refused with \(code)"))
        if code == IMErrorCode.notInChatroom.rawValue || code == IMErrorCode.kickedAndBannedFromChatroom.rawValue
            || code == IMErrorCode.chatroomNotExist.rawValue {
            roomLost(roomId, code: code)
        }
    }

    /// Heartbeat: rooms whose last page could not be stored, or whose pull timed out, pull again
    /// from their cursor.
    mutating func repullRoomsAfterStoreFailure() {
        for roomId in roomsToRepull.sorted() {
            guard let room = rooms[roomId], room.isJoined else {
                roomsToRepull.remove(roomId)
                continue
            }
            if room.pullInFlight == nil {
                sendChatroomPull(roomId, syncTime: room.cursor, count: config.chatroomPullCount, isJoinPull: false)
            }
        }
    }
}
