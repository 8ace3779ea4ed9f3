import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMClient

/// Chatroom helpers.
extension Harness {
    /// joinChatroom + a successful joinChrm answer; the join pull and pullKV are left in flight.
    mutating func join(_ room: String, count: Int32 = 10) {
        api(.joinChatroom(roomId: room, messageCount: count))
        answer(.joinChrm, body: try! ProtoBody.encode(RMTPChrmOutput.with { $0.nothing = 0 }), qos: .atMostOnce)
    }

    @discardableResult
    mutating func answerChatroomPull(_ list: [RMTPDownStreamMessage], syncTime: Int64, status: UInt16 = 0) -> [ClientEffect] {
        answer(.chrmPull, status: status, body: status == 0 ? try! ProtoBody.encode(page(list, syncTime: syncTime)) : [])
    }

    @discardableResult
    mutating func answerPullKV(_ entries: [(key: String, value: String, deleted: Bool)], syncTime: Int64, full: Bool) -> [ClientEffect] {
        var o = RMTPChrmKVOutput()
        o.entries = entries.map { e in
            var x = RMTPChrmKVEntity()
            x.key = e.key
            x.value = e.value
            x.status = e.deleted ? 4 : 0
            x.timestamp = syncTime
            x.uid = "bob"
            return x
        }
        o.bFullUpdate = full
        o.syncTime = syncTime
        return answer(.pullKV, body: try! ProtoBody.encode(o))
    }

    /// The connection dies by ping timeout; reconnect and answer the pull.
    mutating func pingTimeoutAndReconnect(timestamp: Int64) {
        fire(.heartbeat)
        fire(.pingTimeout)
        reconnect(timestamp: timestamp)
    }
}

extension Harness {
    /// Connected and in sync, joined to r1 with bob's M1 (sentTime 100) pulled.
    static func inRoomR1(config: ClientConfig = ClientConfig()) -> Harness {
        var h = Harness(config: config)
        h.connectInSync()
        h.join("r1")
        h.answerChatroomPull([roomMessage("r1", uid: "M1", at: 100)], syncTime: 100)
        return h
    }
}

func roomMessage(_ room: String, uid: String, at t: Int64, from: String = "bob") -> RMTPDownStreamMessage {
    down(from: from, uid: uid, at: t, type: .chatroom, target: room)
}

@Suite("Chatroom")
struct ChatroomTests {
    static let room = ConversationKey(.chatroom, "r1")

    @Test("join counts: -1 → none (-1 sent), 0 → 10, 10, 50, 51 → clamped to 50; < -1 → 33003",
          arguments: [(Int32(-1), Int32(-1)), (0, 10), (10, 10), (50, 50), (51, 50)])
    func joinCounts(_ requested: Int32, _ sent: Int32) throws {
        var h = Harness()
        h.connectInSync()
        h.join("r1", count: requested)
        let pull = try h.lastQuery(.chrmPull)!.decodeBody(RMTPChrmPullMsg.self)
        #expect(pull.count == sent && pull.syncTime == 0)
        #expect(h.lastQuery(.chrmPull)!.targetId == "r1")
    }

    @Test("join count below -1 → chatroomJoinFailed(33003), nothing sent")
    func joinCountInvalid() {
        var h = Harness()
        h.connectInSync()
        h.api(.joinChatroom(roomId: "r1", messageCount: -2))
        #expect(h.frames.isEmpty)
        #expect(h.effects.callbacks.contains { if case .chatroomJoinFailed("r1", 33003) = $0 { true } else { false } })
    }

    @Test("a room pull that times out on a live connection is pulled again on the heartbeat (everyday-storage --swarm seed 5272)")
    func roomPullTimeoutRepulls() throws {
        var h = Harness.inRoomR1()
        h.server(sNtf(time: 120, id: 1, room: "r1"))
        let pull = try #require(h.lastQuery(.chrmPull))
        h.fire(.requestTimeout(messageId: pull.messageId))
        #expect(h.queries(.chrmPull).isEmpty)          // not at once: the link may be slow
        h.fire(.heartbeat)
        let again = try #require(h.lastQuery(.chrmPull))
        #expect(again.messageId != pull.messageId)
        #expect(try again.decodeBody(RMTPChrmPullMsg.self).syncTime == 100)
        h.answerChatroomPull([roomMessage("r1", uid: "M2", at: 120)], syncTime: 120)
        #expect(h.effects.received.map(\.message.messageUId) == ["M2"])
        // Pulled: the next heartbeat pulls nothing.
        h.fire(.heartbeat)
        #expect(h.queries(.chrmPull).isEmpty)
    }

    @Test("join → joined, join pull stored (never inbox cursors), s_ntf type 2 pulls from the room cursor")
    func joinAndNotify() throws {
        var h = Harness()
        h.connectInSync()
        h.api(.joinChatroom(roomId: "r1", messageCount: 10))
        let join = try #require(h.lastQuery(.joinChrm))
        #expect(try join.decodeBody(RMTPChrmInput.self).nothing == 0)
        h.answer(.joinChrm, body: try ProtoBody.encode(RMTPChrmOutput.with { $0.nothing = 0 }), qos: .atMostOnce)
        #expect(h.effects.callbacks.contains { if case .chatroomJoined("r1") = $0 { true } else { false } })
        #expect(h.lastQuery(.pullKV) != nil)
        h.answerChatroomPull([roomMessage("r1", uid: "M1", at: 100), roomMessage("r1", uid: "M2", at: 110)], syncTime: 110)
        #expect(h.effects.received.map(\.message.conversation) == [Self.room, Self.room])
        #expect(h.core.chatroomCursor("r1") == 110)
        #expect(h.core.inboxCursor == 0 && h.core.sendboxCursor == 0)
        #expect(try h.store.conversation(Self.room)?.unreadCount == 0)

        h.server(sNtf(time: 120, id: 1, room: "r1"))
        let pull = try h.lastQuery(.chrmPull)!.decodeBody(RMTPChrmPullMsg.self)
        #expect(pull.syncTime == 110 && pull.count == 50)
        // A notify while pulling is queued; an item older than the cursor is dropped. M2 again, at
        // the cursor's own millisecond, is not: the id cache is the join pull's only (issue 22,
        // wire-protocol §4) — the public client's same-ms hazard.
        h.server(sNtf(time: 130, id: 2, room: "r1"))
        #expect(h.queries(.chrmPull).isEmpty)
        h.answerChatroomPull([roomMessage("r1", uid: "M0", at: 90), roomMessage("r1", uid: "M2", at: 110),
                              roomMessage("r1", uid: "M3", at: 120)], syncTime: 120)
        #expect(h.effects.received.map(\.message.messageUId) == ["M2", "M3"])
        #expect(h.effects.skips.count == 1)
        #expect(try h.lastQuery(.chrmPull)!.decodeBody(RMTPChrmPullMsg.self).syncTime == 120)
        #expect(h.core.inboxCursor == 0)
    }

    @Test("a second join of the same room does not show again the newest messages the user already saw")
    func secondJoinDoesNotRepeat() throws {
        var h = Harness.inRoomR1()
        // A later message comes by an incremental pull (s_ntf), not the join pull.
        h.server(sNtf(time: 120, id: 1, room: "r1"))
        h.answerChatroomPull([roomMessage("r1", uid: "M2", at: 120)], syncTime: 120)
        #expect(h.effects.received.map(\.message.messageUId) == ["M2"])
        // The app joins again: the join pull returns the newest ones, M2 at the cursor's time.
        h.join("r1")
        h.answerChatroomPull([roomMessage("r1", uid: "M1", at: 100), roomMessage("r1", uid: "M2", at: 120)], syncTime: 120)
        #expect(h.effects.received.isEmpty)
        #expect(try h.store.countRows(withUId: "M2") == 1)
    }

    @Test("one room at a time: a successful join of another quits the first (exitChrm, local messages deleted)")
    func oneRoomAtATime() throws {
        var h = Harness.inRoomR1()
        #expect(try h.store.messageCount(in: Self.room) == 1)
        h.api(.joinChatroom(roomId: "r2", messageCount: 10))
        #expect(h.lastQuery(.joinChrm)?.targetId == "r2")
        #expect(h.lastQuery(.exitChrm) == nil)               // issue 22: only after r2's join succeeds
        h.answer(.joinChrm, body: try ProtoBody.encode(RMTPChrmOutput.with { $0.nothing = 0 }), qos: .atMostOnce)
        #expect(h.lastQuery(.exitChrm)?.targetId == "r1")
        #expect(h.effects.callbacks.contains { if case .chatroomQuit("r1") = $0 { true } else { false } })
        #expect(try h.store.messageCount(in: Self.room) == 0)
        #expect(try h.store.chatroom("r1") == nil)
        #expect(h.core.joinedChatrooms == ["r2"])
    }

    @Test("quit clears local messages and state")
    func quit() throws {
        var h = Harness.inRoomR1()
        h.api(.quitChatroom(roomId: "r1"))
        #expect(h.lastQuery(.exitChrm) != nil)
        #expect(try h.store.messageCount(in: Self.room) == 0)
        #expect(h.core.joinedChatrooms.isEmpty && h.core.chatroomCursor("r1") == nil)
        h.server(sNtf(time: 200, id: 1, room: "r1"))
        #expect(h.queries(.chrmPull).isEmpty)
    }

    @Test("KV: read before the post-join sync → 34004; after it → entries; s_cmd → incremental pullKV")
    func kv() throws {
        var h = Harness()
        h.connectInSync()
        h.join("r1")
        #expect(try h.lastQuery(.pullKV)!.decodeBody(RMTPQueryChrmKV.self).timestamp == 0)
        h.api(.getChatroomKV(roomId: "r1"))
        #expect(h.effects.callbacks.contains { if case .chatroomKV("r1", [], 34004) = $0 { true } else { false } })
        h.api(.getChatroomKV(roomId: "r2"))
        #expect(h.effects.callbacks.contains { if case .chatroomKV("r2", [], 23406) = $0 { true } else { false } })

        var h2 = Harness()
        h2.connectInSync()
        h2.join("r1")
        h2.answerPullKV([("k1", "v1", false), ("k2", "v2", false)], syncTime: 50, full: true)
        #expect(h2.effects.callbacks.contains { if case .chatroomKVSynced("r1") = $0 { true } else { false } })
        h2.api(.getChatroomKV(roomId: "r1"))
        #expect(h2.effects.callbacks.contains { if case .chatroomKV("r1", let e, nil) = $0 { e.map(\.key) == ["k1", "k2"] } else { false } })
        // A KV change notice: incremental pull from the sync time; a deletion removes the key.
        let id = h2.nextServerId()
        var n = RMTPNotifyMsg()
        n.type = 2
        n.chrmID = "r1"
        h2.server(.publish(try Frame.Publish(flags: .none, topic: .s_cmd, targetId: "r1", messageId: id, message: n)))
        #expect(try h2.lastQuery(.pullKV)!.decodeBody(RMTPQueryChrmKV.self).timestamp == 50)
        h2.answerPullKV([("k1", "", true)], syncTime: 60, full: false)
        #expect(h2.effects.callbacks.contains { if case .chatroomKVRemoved("r1", ["k1"]) = $0 { true } else { false } })
        #expect(try h2.store.chatroomKV("r1").map(\.key) == ["k2"])
    }

    @Test("B8: joining twice in a row — the second join never gets attributes (34004 forever); off: synced again",
          arguments: [false, true])
    func b8SecondJoin(b8: Bool) throws {
        var config = ClientConfig()
        if b8 { config.bugs = [.b8] }
        var h = Harness(config: config)
        h.connectInSync()
        h.join("r1")
        h.answerPullKV([("k1", "v1", false)], syncTime: 50, full: true)
        h.join("r1")                                         // the second join
        #expect((h.lastQuery(.pullKV) == nil) == b8)
        if !b8 { h.answerPullKV([("k1", "v1", false)], syncTime: 50, full: true) }
        h.api(.getChatroomKV(roomId: "r1"))
        let error: Int32? = h.effects.callbacks.compactMap { if case .chatroomKV(_, _, let e) = $0 { e } else { nil } }.first ?? nil
        #expect(error == (b8 ? 34004 : nil))
        // Later KV changes keep arriving but never make the room "synced" again.
        h.now += 60_000
        h.api(.getChatroomKV(roomId: "r1"))
        #expect(h.core.chatroomKVSynced("r1") == !b8)
    }

    @Test("ping timeout → reconnect → joinChrmR → chrmPull from the room cursor")
    func rejoinAfterPingTimeout() throws {
        var h = Harness.inRoomR1()
        h.pingTimeoutAndReconnect(timestamp: 2_000)
        let rejoin = try #require(h.lastQuery(.joinChrmR))
        #expect(rejoin.targetId == "r1")
        #expect(h.core.joinedChatrooms == ["r1"])
        h.answer(.joinChrmR, body: try ProtoBody.encode(RMTPChrmOutput.with { $0.nothing = 0 }), qos: .atMostOnce)
        let pull = try h.lastQuery(.chrmPull)!.decodeBody(RMTPChrmPullMsg.self)
        #expect(pull.syncTime == 100 && pull.count == 50)
        #expect(!h.effects.callbacks.contains { if case .chatroomJoined = $0 { true } else { false } })
    }

    @Test("B6: a ping timeout during connect (link check) → the reconnect does not rejoin; off: it does",
          arguments: [false, true])
    func b6NoRejoin(b6: Bool) throws {
        var config = ClientConfig()
        config.pingBeforeFirstPull = true
        if b6 { config.bugs = [.b6] }
        var h = Harness(config: config)
        h.connect()
        h.server(.pingResp())
        h.answerPull(page([], syncTime: 0))
        h.join("r1")
        h.feed(.transport(.closed(.reset)))                  // drop: the room needs a rejoin
        h.reconnect(timestamp: 2_000)                        // link check PINGREQ outstanding
        #expect(h.frames == [.pingReq()])
        h.fire(.pingTimeout)                                 // ping timeout during connect
        h.reconnect(timestamp: 3_000)
        h.server(.pingResp())
        #expect((h.lastQuery(.joinChrmR) != nil) == !b6)
        #expect(h.lastQuery(.pullMsg) != nil)
        // With B6 the SDK still believes it is in the room: silent loss of room messages.
        #expect(h.core.joinedChatrooms == ["r1"])
    }

    @Test("B6 trigger is precise: a ping timeout after the rejoin completed still rejoins; a rejoin that timed out is retried")
    func b6OnlyDuringConnect() throws {
        var config = ClientConfig()
        config.bugs = [.b6]
        var h = Harness(config: config)
        h.connectInSync()
        h.join("r1")
        h.pingTimeoutAndReconnect(timestamp: 2_000)         // the room had no pending rejoin
        #expect(h.lastQuery(.joinChrmR) != nil)
        let first = h.lastQuery(.joinChrmR)!
        h.fire(.requestTimeout(messageId: first.messageId))  // the rejoin is not answered: retried
        let retry = try #require(h.lastQuery(.joinChrmR))
        #expect(retry.messageId != first.messageId)
        h.answer(.joinChrmR, body: try ProtoBody.encode(RMTPChrmOutput.with { $0.nothing = 0 }), qos: .atMostOnce)
        h.pingTimeoutAndReconnect(timestamp: 3_000)         // established: not "during connect"
        #expect(h.lastQuery(.joinChrmR) != nil)
    }

    @Test("B7: disconnect keeps stale room state and KV (no rejoin after connect); off: cleared with chatroomQuit",
          arguments: [false, true])
    func b7StaleState(b7: Bool) throws {
        var config = ClientConfig()
        if b7 { config.bugs = [.b7] }
        var h = Harness(config: config)
        h.connectInSync()
        h.join("r1")
        h.answerPullKV([("k1", "v1", false)], syncTime: 50, full: true)
        h.api(.disconnect)
        #expect(h.effects.callbacks.contains { if case .chatroomQuit("r1") = $0 { true } else { false } } == !b7)
        h.connect(timestamp: 5_000)
        #expect(h.lastQuery(.joinChrmR) == nil && h.lastQuery(.joinChrm) == nil)
        #expect(h.core.joinedChatrooms == (b7 ? ["r1"] : []))
        h.api(.getChatroomKV(roomId: "r1"))
        let error: Int32? = h.effects.callbacks.compactMap { if case .chatroomKV(_, _, let e) = $0 { e } else { nil } }.first ?? nil
        #expect(error == (b7 ? nil : 23406))                 // B7: stale entries served as current
        #expect(try h.store.chatroomKV("r1").isEmpty == !b7)
    }

    @Test("kicked: a refused chrmPull (23406) ends the membership, local messages deleted")
    func kicked() throws {
        var h = Harness.inRoomR1()
        h.server(sNtf(time: 200, id: 1, room: "r1"))
        h.answerChatroomPull([], syncTime: 0, status: 23406)
        #expect(h.effects.callbacks.contains { if case .chatroomKicked("r1") = $0 { true } else { false } })
        #expect(h.core.joinedChatrooms.isEmpty)
        #expect(try h.store.messageCount(in: Self.room) == 0)
    }

    @Test("a rejoin refused with 23410 reports the room destroyed")
    func destroyed() throws {
        var h = Harness()
        h.connectInSync()
        h.join("r1")
        h.feed(.transport(.closed(.reset)))
        h.reconnect(timestamp: 2)
        h.answer(.joinChrmR, status: 23410, qos: .atMostOnce)
        #expect(h.effects.callbacks.contains { if case .chatroomDestroyed("r1") = $0 { true } else { false } })
        #expect(h.core.joinedChatrooms.isEmpty)
    }

    @Test("a join cut by the connection fails; joinExist sends nothing=2 and reports 23410")
    func joinFailures() throws {
        var h = Harness()
        h.connectInSync()
        h.api(.joinChatroom(roomId: "r1", messageCount: 10))
        h.feed(.transport(.closed(.reset)))
        #expect(h.effects.callbacks.contains { if case .chatroomJoinFailed("r1", 30011) = $0 { true } else { false } })
        h.reconnect(timestamp: 1)
        #expect(h.lastQuery(.joinChrmR) == nil)
        h.api(.joinExistChatroom(roomId: "r9", messageCount: 10))
        #expect(try h.lastQuery(.joinChrm)!.decodeBody(RMTPChrmInput.self).nothing == 2)
        h.answer(.joinChrm, status: 23410, qos: .atMostOnce)
        #expect(h.effects.callbacks.contains { if case .chatroomJoinFailed("r9", 23410) = $0 { true } else { false } })
    }
}

/// After a reconnect the app joins the room it is in before the SDK's rejoin is answered: the
/// app's join is answered first and pulls from the cursor; the rejoin's answer must not start a
/// second pull from the same cursor (both would return the message at the new cursor's time, and
/// it is not older than the cursor: shown twice — everyday seed 10013, every switch off).
@Suite struct ChatroomRejoinWhilePullingTests {
    @Test func theRejoinPullsAfterThePullInFlight() throws {
        var h = Harness.inRoomR1()
        h.pingTimeoutAndReconnect(timestamp: 2_000)
        #expect(h.lastQuery(.joinChrmR) != nil)
        h.api(.joinChatroom(roomId: "r1", messageCount: 10))
        h.answer(.joinChrm, body: try ProtoBody.encode(RMTPChrmOutput.with { $0.nothing = 0 }), qos: .atMostOnce)
        // The app's join (the room is still rejoining: a fresh join) pulls the newest ones.
        #expect(h.lastQuery(.chrmPull) != nil)
        h.answer(.joinChrmR, body: try ProtoBody.encode(RMTPChrmOutput.with { $0.nothing = 0 }), qos: .atMostOnce)
        #expect(h.queries(.chrmPull).isEmpty, "a second chrmPull from the same cursor while one is in flight")
        h.answerChatroomPull([roomMessage("r1", uid: "M1", at: 100), roomMessage("r1", uid: "M2", at: 150)], syncTime: 150)
        #expect(h.effects.received.map(\.message.messageUId) == ["M2"])
        // The rejoin's pull follows, from the new cursor.
        let next = try #require(h.lastQuery(.chrmPull)).decodeBody(RMTPChrmPullMsg.self)
        #expect(next.syncTime == 150)
        h.answerChatroomPull([], syncTime: 150)
        #expect(try h.store.countRows(withUId: "M2") == 1)
    }
}

/// The join pull checks each id against the cache as it would be after remembering the ids shown
/// before it in the same page; the ids join the room's cache only once the page is stored.
@Suite struct ChatroomJoinCacheTests {
    /// `ringContains` against the ring built by `remember`, for every split of short id lists.
    @Test func ringContainsMatchesTheRememberedRing() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<3_000 {
            let cache = (0..<Int(rng.next() % 11)).map { _ in "u\(rng.next() % 14)" }
            let shown = (0..<Int(rng.next() % 14)).map { _ in "u\(rng.next() % 14)" }
            var room = ChatroomRoom(roomId: "r", joinCount: 10, messageId: 1, kind: .join)
            for uid in cache { room.remember(uid) }
            let before = room.joinCache
            for uid in shown { room.remember(uid) }
            for k in 0..<14 {
                let uid = "u\(k)"
                #expect(ChatroomRoom.ringContains(uid, cache: before, then: shown) == room.joinCache.contains(uid),
                        "cache \(before) shown \(shown) id \(uid)")
            }
        }
    }

    @Test func aJoinPullSkipsAnIdRepeatedWithinTheRing() throws {
        var h = Harness()
        h.connectInSync()
        h.join("r1", count: 50)
        // M0 again right after itself: in the ring. M0 once more, 11 ids later: out of it, shown.
        var list = [roomMessage("r1", uid: "M0", at: 100), roomMessage("r1", uid: "M0", at: 100)]
        list += (1...11).map { roomMessage("r1", uid: "M\($0)", at: 100 + Int64($0)) }
        list.append(roomMessage("r1", uid: "M0", at: 200))
        h.answerChatroomPull(list, syncTime: 200)
        let skipped = h.effects.notes.compactMap {
            if case .skipped(let uid, _, "in the join pull's id cache") = $0 { uid } else { nil }
        }
        #expect(skipped == ["M0"])
        #expect(h.effects.received.map(\.message.messageUId) == ["M0"] + (1...11).map { "M\($0)" } + ["M0"])
        #expect(h.core.rooms["r1"]?.joinCache == (3...11).map { "M\($0)" } + ["M0"])
    }
}
