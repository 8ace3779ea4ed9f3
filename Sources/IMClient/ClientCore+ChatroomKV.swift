import IMStore
import IMWire

// Chatroom attributes (im-semantics §6): a full pullKV after every join, incremental pullKV on a
// KV change notice (`s_cmd` type 2), reads refused with 34004 until the post-join sync finished.
extension ClientCore {
    /// Entity status bits (wire-protocol §3).
    static let kvAutoDelete: Int32 = 1
    static let kvOverwrite: Int32 = 2
    static let kvDeleted: Int32 = 4

    /// After a join: the cache is "not synced" until a full pullKV answers.
    mutating func startPostJoinKVSync(_ roomId: String) {
        guard var room = rooms[roomId] else { return }
        room.kvGeneration += 1
        room.kvSynced = false
        do { try store.setChatroomKVSync(roomId, synced: false, syncTime: room.kvSyncTime) } catch { storeError("KV sync state", error) }
        if config.bugs.contains(.b8), room.kvSyncRequestedOnce {
            // B8: the first join's "sync requested" flag is still set, so this join believes its
            // sync is under way and never pulls: reads stay 34004 (fixed in 4.0.1).
            rooms.insert(room)
            out.note(.ignored(input: "join \(roomId)", reason: "B8: post-join KV sync skipped (already requested once)"))
            return
        }
        room.kvSyncRequestedOnce = true
        room.kvPostJoinPending = true
        rooms.insert(room)
        sendPullKV(roomId, timestamp: 0)
    }

    mutating func sendPullKV(_ roomId: String, timestamp: Int64) {
        guard let room = rooms[roomId] else { return }
        if room.kvPullInFlight != nil, !room.kvPostJoinPending || timestamp != 0 {
            rooms.update(roomId) { $0.kvNotifyQueued = true }
            return
        }
        var q = RMTPQueryChrmKV()
        q.timestamp = timestamp
        let id = query(.pullKV, target: roomId, body: built(q),
                       .pullKV(roomId: roomId, generation: room.kvGeneration))
        rooms.update(roomId) { $0.kvPullInFlight = id }
    }

    /// `s_cmd` type 2: the room's attributes changed → incremental pullKV.
    mutating func chatroomKVChanged(_ roomId: String) {
        guard let room = rooms[roomId], room.isJoined else {
            return out.note(.ignored(input: "s_cmd KV \(roomId)", reason: "room not joined"))
        }
        sendPullKV(roomId, timestamp: room.kvSyncTime)
    }

    mutating func pullKVAnswered(_ roomId: String, generation: Int, _ q: Frame.QueryAck) {
        guard var room = rooms[roomId] else { return }
        if room.kvPullInFlight == q.messageId { room.kvPullInFlight = nil }
        guard generation == room.kvGeneration else {
            rooms.insert(room)
            return out.note(.ignored(input: "pullKV \(roomId)", reason: "answer of an earlier join (generation \(generation))"))
        }
        guard q.status == 0 else {
            room.kvPostJoinPending = false
            rooms.insert(room)
            return chatroomRequestRefused(roomId, what: "pullKV", status: q.status)
        }
        let output: RMTPChrmKVOutput
        do {
            output = try q.decodeBody(RMTPChrmKVOutput.self)
        } catch {
            rooms.insert(room)
            return out.note(.ignored(input: "pullKV \(roomId)", reason: "\(error)"))
        }
        var updated: [ChatroomKVEntry] = []
        var removed: [String] = []
        for e in output.entries {
            if e.status & Self.kvDeleted != 0 {
                removed.append(e.key)
            } else {
                updated.append(ChatroomKVEntry(key: e.key, value: e.value, userId: e.uid,
                                               autoDelete: e.status & Self.kvAutoDelete != 0, updateTime: e.timestamp))
            }
        }
        let postJoin = room.kvPostJoinPending
        room.kvPostJoinPending = false
        if postJoin { room.kvSynced = true }
        room.kvSyncTime = max(room.kvSyncTime, output.syncTime)
        let queued = room.kvNotifyQueued
        room.kvNotifyQueued = false
        rooms.insert(room)
        do {
            if output.bFullUpdate {
                // A full answer replaces the cache: keys it does not list are gone.
                let listed = Set(output.entries.map(\.key))
                let stale = try store.chatroomKV(roomId).map(\.key).filter { !listed.contains($0) }
                removed += stale
            }
            if !updated.isEmpty { try store.upsertChatroomKV(roomId, updated) }
            if !removed.isEmpty { removed = try store.removeChatroomKV(roomId, keys: removed) }
            try store.setChatroomKVSync(roomId, synced: room.kvSynced, syncTime: room.kvSyncTime)
        } catch {
            storeError("KV cache of \(roomId)", error)
        }
        out.note(.changed(conversation: ConversationKey(.chatroom, roomId), messageIds: [],
                          what: "KV: \(updated.count) set, \(removed.count) removed, sync time \(room.kvSyncTime)\(postJoin ? ", synced" : "")"))
        if postJoin { out.callback(.chatroomKVSynced(roomId: roomId)) }
        if !updated.isEmpty { out.callback(.chatroomKVUpdated(roomId: roomId, entries: updated)) }
        if !removed.isEmpty { out.callback(.chatroomKVRemoved(roomId: roomId, keys: removed)) }
        if queued { sendPullKV(roomId, timestamp: room.kvSyncTime) }
    }

    /// Reads the cached attributes: 23406 when not in the room, 34004 before the post-join sync.
    mutating func getChatroomKV(_ roomId: String) {
        guard let room = rooms[roomId], room.isJoined || room.needsRejoin else {
            return out.callback(.chatroomKV(roomId: roomId, entries: [], error: IMErrorCode.notInChatroom.rawValue))
        }
        guard room.kvSynced else {
            return out.callback(.chatroomKV(roomId: roomId, entries: [], error: IMErrorCode.chatroomKVNotSynced.rawValue))
        }
        do {
            out.callback(.chatroomKV(roomId: roomId, entries: try store.chatroomKV(roomId), error: nil))
        } catch {
            storeError("read KV of \(roomId)", error)
            out.callback(.chatroomKV(roomId: roomId, entries: [], error: IMErrorCode.databaseError.rawValue))
        }
    }

    /// setKV / delKV. Keys: 1…128 characters of `[A-Za-z0-9+=_-]`; values ≤ 4096 (33003
    /// locally); ownership, quota and rate are the server's (23423…23431).
    mutating func changeChatroomKV(_ roomId: String, key: String, value: String, autoDelete: Bool, force: Bool, remove: Bool) {
        let validKey = (1...128).contains(key.unicodeScalars.count) && key.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "+=_-".unicodeScalars.contains($0)
        }
        guard validKey, value.unicodeScalars.count <= 4096 else {
            return out.callback(.chatroomKVResult(roomId: roomId, key: key, error: IMErrorCode.invalidParameter.rawValue))
        }
        guard hasSession else {
            return out.callback(.chatroomKVResult(roomId: roomId, key: key, error: ClientErrorCode.notConnected))
        }
        guard rooms[roomId]?.isJoined == true else {
            return out.callback(.chatroomKVResult(roomId: roomId, key: key, error: IMErrorCode.notInChatroom.rawValue))
        }
        var entity = RMTPChrmKVEntity()
        entity.key = key
        entity.value = value
        entity.status = (autoDelete ? Self.kvAutoDelete : 0) | (force ? Self.kvOverwrite : 0)
        let body: [UInt8]
        if remove {
            var m = RMTPDeleteChrmKV()
            m.entry = entity
            m.bNotify = false
            m.type = RMTPChannelType(.chatroom)
            body = built(m)
        } else {
            var m = RMTPSetChrmKV()
            m.entry = entity
            m.bNotify = false
            m.type = RMTPChannelType(.chatroom)
            body = built(m)
        }
        query(remove ? .delKV : .setKV, target: roomId, body: body, .changeKV(roomId: roomId, key: key, remove: remove))
    }
}
