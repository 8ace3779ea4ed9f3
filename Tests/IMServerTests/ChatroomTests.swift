import IMWire
import SimKernel
import Testing
@testable import IMServer

@Suite struct ChatroomTests {
    static func harness(_ configure: (inout ServerConfig) -> Void = { _ in }) -> Harness {
        var cfg = ServerConfig()
        cfg.rateLimitPerSecond = 0
        configure(&cfg)
        return Harness(config: cfg)
    }

    typealias KickCase = (name: String, offsets: [Int64], kickedBy: Int?)

    static func every100ms(_ n: Int, from start: Int64) -> [Int64] { (0..<n).map { start + Int64($0) * 100 } }

    static let specCases: [KickCase] = [
        ("30 messages within 30 s", every100ms(30, from: 100), nil),
        ("31 messages within 30 s", every100ms(31, from: 100), 30),
        ("one message at 29.999 s", [29_999], nil),
        ("one message at 30 s", [30_000], 0),
        ("29.999 s then 30 s", [29_999, 30_000], 1),
        ("no message for an hour, then one", [3_600_000], 0),
    ]

    static let faqCases: [KickCase] = [
        ("29 messages", every100ms(29, from: 10_000), nil),
        ("30 messages", every100ms(30, from: 10_000), 29),
        ("first at +20 s, next at +49.999 s", [20_000, 49_999], nil),
        ("first at +20 s, next at +50 s", [20_000, 50_000], 1),
        ("first message at +1 h does not kick", [3_600_000], nil),
    ]

    /// The offline auto-kick rule, spec variant: bob goes offline at t0; alice sends messages at
    /// the given offsets from t0 (ms); bob is removed by the message with the given index (or never).
    @Test(arguments: specCases)
    func offlineKickSpecVariant(_ c: KickCase) {
        kickCase(variant: .spec, offsets: c.offsets, kickedBy: c.kickedBy)
    }

    /// FAQ variant: 30 messages, the clock starting at the first message after t0.
    @Test(arguments: faqCases)
    func offlineKickFAQVariant(_ c: KickCase) {
        kickCase(variant: .faq, offsets: c.offsets, kickedBy: c.kickedBy)
    }

    func kickCase(variant: ChatroomConfig.KickVariant, offsets: [Int64], kickedBy: Int?) {
        var h = Self.harness { $0.chatroom.kickVariant = variant; $0.chatroom.autoDestroyAfterMs = 86_400_000 }
        let a = h.online("alice")
        let b = h.online("bob")
        _ = h.join(a, room: "r")
        _ = h.join(b, room: "r")
        let t0 = Harness.t0 + 1000
        h.now = t0
        h.close(b)
        #expect(h.core.chatroomOfflineMembers("r").map(\.userId) == ["bob"])
        var kickedAt: Int?
        for (i, off) in offsets.enumerated() {
            h.now = t0 + off
            let out = h.sendText(a, to: "r", "m\(i)", topic: .chatMsg).1
            if out.has(.chatroomLeft(roomId: "r", userId: "bob", reason: .offlineKick)) {
                #expect(kickedAt == nil)
                kickedAt = i
                let uid = out.puback(a)!.messageUId
                #expect(out.has(.dropped(messageUId: uid, conversation: ConversationKey(.chatroom, "r"), userId: "bob", reason: .kickedFromRoom)))
                #expect(out.accepted.first?.recipients == [])
            } else if kickedAt == nil {
                #expect(out.accepted.first?.recipients == ["bob"])
            }
        }
        #expect(kickedAt == kickedBy)
        #expect(h.core.chatroomMembers("r") == (kickedBy == nil ? ["alice", "bob"] : ["alice"]))
    }

    /// Users on the room's whitelist are never kicked; an offline member who rejoins is safe again.
    @Test func whitelistedAndRejoinedMembersAreNotKicked() {
        var h = Self.harness()
        let a = h.online("alice")
        let b = h.online("bob")
        let c = h.online("carol")
        for x in [a, b, c] { _ = h.join(x, room: "r") }
        h.run(.api(.setChatroomUserWhitelist(roomId: "r", userIds: ["bob"])))
        h.close(b)
        h.close(c)
        h.advance(ms: 10_000)
        let c2 = h.online("carol")
        _ = h.join(c2, room: "r", rejoin: true)
        h.advance(ms: 60_000)
        let out = h.sendText(a, to: "r", "x", topic: .chatMsg).1
        #expect(!out.events.contains { if case .chatroomLeft = $0 { true } else { false } })
        #expect(h.core.chatroomMembers("r") == ["alice", "bob", "carol"])
    }

    /// B9: after an offline kick the SDK's automatic rejoin is refused (23406) so the app is told;
    /// with the switch on it is let back in silently. A fresh join always works.
    @Test(arguments: [false, true])
    func rejoinAfterOfflineKick(b9: Bool) {
        var h = Self.harness { if b9 { $0.bugs = [.b9] } }
        let a = h.online("alice")
        let b = h.online("bob")
        _ = h.join(a, room: "r")
        _ = h.join(b, room: "r")
        h.close(b)
        h.advance(ms: 31_000)
        #expect(h.sendText(a, to: "r", "kicks bob", topic: .chatMsg).1.has(.chatroomLeft(roomId: "r", userId: "bob", reason: .offlineKick)))
        let b2 = h.online("bob")
        let rejoin = h.join(b2, room: "r", rejoin: true)
        #expect(rejoin.queryRejectedCodes == (b9 ? [] : [IMErrorCode.notInChatroom.rawValue]))
        #expect(h.core.chatroomMembers("r") == (b9 ? ["alice", "bob"] : ["alice"]))
        // Refused again until the device joins afresh; after that its rejoins are ordinary.
        #expect(h.join(b2, room: "r", rejoin: true).queryRejectedCodes == (b9 ? [] : [IMErrorCode.notInChatroom.rawValue]))
        #expect(h.join(b2, room: "r").queryRejectedCodes.isEmpty)
        #expect(h.join(b2, room: "r", rejoin: true).queryRejectedCodes.isEmpty)
        #expect(h.core.chatroomMembers("r") == ["alice", "bob"])
    }

    /// The history ring keeps the newest 50; the join pull returns the newest `count`
    /// (-1 → none, 0 → 10, at most 50), oldest first, syncTime = newest returned.
    @Test(arguments: [(Int32(-1), 0), (0, 10), (10, 10), (50, 50), (51, 50)])
    func historyRingJoinPull(count: Int32, expected: Int) throws {
        var h = Self.harness()
        let a = h.online("alice")
        _ = h.join(a, room: "r")
        var uids: [String] = []
        for i in 0..<60 {
            h.now = Harness.t0 + Int64(i) * 10
            uids.append(h.sendText(a, to: "r", "m\(i)", topic: .chatMsg).1.puback(a)!.messageUId)
        }
        #expect(h.core.chatroomHistory("r") == Array(uids.suffix(50)))
        let b = h.online("bob")
        _ = h.join(b, room: "r")
        let out = h.chatroomPull(b, room: "r", syncTime: 0, count: count)
        let page = try #require(out.pullPage(b))
        #expect(page.list.map(\.msgID) == Array(uids.suffix(expected)))
        #expect(page.list.allSatisfy { $0.groupID == "r" && $0.type == ConversationType.chatroom.rawValue })
        #expect(page.syncTime == Harness.t0 + 590) // newest returned, or (count -1) the room's newest
        #expect(out.queryAck(b)?.flags.qos == .atLeastOnce)
    }

    /// After the join: `s_ntf` type 2 per new message to every other joined session; chrmPull with
    /// the cursor returns what is newer; the sending device never gets its own message back.
    @Test func notifyAndIncrementalPull() throws {
        var h = Self.harness()
        let a = h.online("alice", device: "phone")
        let aDesk = h.online("alice", device: "desk", platform: .desktop)
        let b = h.online("bob")
        for c in [a, aDesk, b] { _ = h.join(c, room: "r") }
        let out = h.sendText(a, to: "r", "hi", topic: .chatMsg).1
        let uid = try #require(out.puback(a)).messageUId
        #expect(out.publishes(a).isEmpty)
        for c in [aDesk, b] {
            let n = try #require(out.publishes(c, topic: .s_ntf).first)
            let body = try n.decodeBody(RMTPNotifyMsg.self)
            #expect(body.type == 2 && body.chrmID == "r" && body.time == out.puback(a)!.sentTime)
        }
        #expect(out.fanOuts.map { "\($0.user)/\($0.device)/\($0.via)" } == ["alice/desk/chatroomNotify", "bob/bob-mobile/chatroomNotify"])
        let onB = try #require(h.chatroomPull(b, room: "r", syncTime: 0, count: 0).pullPage(b))
        #expect(onB.list.map(\.msgID) == [uid] && onB.list[0].direction == 0)
        let onDesk = try #require(h.chatroomPull(aDesk, room: "r", syncTime: 0, count: 0).pullPage(aDesk))
        #expect(onDesk.list.map(\.msgID) == [uid] && onDesk.list[0].direction == 1)
        #expect(h.chatroomPull(a, room: "r", syncTime: 0, count: 0).pullPage(a)?.list.isEmpty == true)
        #expect(h.chatroomPull(b, room: "r", syncTime: onB.syncTime, count: 0).pullPage(b)?.list.isEmpty == true)
    }

    @Test func joinErrorsAndSendErrors() {
        var h = Self.harness { $0.chatroom.memberLimit = 2 }
        let a = h.online("alice")
        let b = h.online("bob")
        let c = h.online("carol")
        #expect(h.join(a, room: "r", existingOnly: true).queryRejectedCodes == [23410])
        #expect(!h.core.chatroomExists("r"))
        let created = h.join(a, room: "r")
        #expect(created.has(.chatroomCreated(roomId: "r", byUserId: "alice")))
        #expect(created.queryAck(a)?.status == 0)
        #expect(h.join(b, room: "r", existingOnly: true).queryAck(b)?.status == 0)
        #expect(h.join(c, room: "r").queryAck(c)?.status == 23411)
        #expect(h.sendText(c, to: "r", "x", topic: .chatMsg).1.puback(c)?.status == 23406)
        h.run(.api(.muteChatroomUser(roomId: "r", userId: "bob", durationMs: 60_000)))
        #expect(h.sendText(b, to: "r", "x", topic: .chatMsg).1.puback(b)?.status == 23408)
        h.advance(ms: 60_000)
        #expect(h.sendText(b, to: "r", "x", topic: .chatMsg).1.puback(b)?.status == 0)
        let ban = h.run(.api(.banChatroomUser(roomId: "r", userId: "bob", durationMs: 30_000)))
        #expect(ban.has(.chatroomLeft(roomId: "r", userId: "bob", reason: .banned)))
        #expect(h.join(b, room: "r").queryAck(b)?.status == 23409)
        #expect(h.sendText(b, to: "r", "x", topic: .chatMsg).1.puback(b)?.status == 23409)
        h.advance(ms: 30_000)
        #expect(h.join(b, room: "r").queryAck(b)?.status == 0)
        #expect(h.chatroomPull(c, room: "r", syncTime: 0, count: 10).queryAck(c)?.status == 23406)
    }

    /// One room per user: joining another room leaves the first.
    @Test func oneRoomPerUser() {
        var h = Self.harness()
        let a = h.online("alice")
        _ = h.join(a, room: "r1")
        let out = h.join(a, room: "r2")
        #expect(out.has(.chatroomLeft(roomId: "r1", userId: "alice", reason: .switchedRoom)))
        #expect(h.core.chatrooms(of: "alice") == ["r2"])
        var h2 = Self.harness { $0.chatroom.oneRoomPerUser = false }
        let a2 = h2.online("alice")
        _ = h2.join(a2, room: "r1")
        _ = h2.join(a2, room: "r2")
        #expect(h2.core.chatrooms(of: "alice") == ["r1", "r2"])
    }

    /// A closed session leaves the member offline (still a member); quitting removes it.
    @Test func membershipSurvivesSessionEndButNotQuit() {
        var h = Self.harness()
        let a = h.online("alice")
        _ = h.join(a, room: "r")
        h.now += 500
        h.close(a)
        #expect(h.core.chatroomMembers("r") == ["alice"])
        #expect(h.core.chatroomOfflineMembers("r").map(\.since) == [Harness.t0 + 500])
        let a2 = h.online("alice")
        var quit = RMTPChrmInput()
        quit.nothing = 1
        let out = h.query(a2, .exitChrm, target: "r", quit).1
        #expect(out.queryAck(a2)?.status == 0)
        #expect(out.has(.chatroomLeft(roomId: "r", userId: "alice", reason: .quit)))
        #expect(h.core.chatroomMembers("r").isEmpty)
    }

    /// Auto-destroy after `autoDestroyAfterMs` without messages or joins; members are removed;
    /// kept-alive rooms stay.
    @Test func autoDestroyAndKeepAlive() {
        var h = Self.harness()
        let a = h.online("alice")
        let created = h.join(a, room: "r")
        #expect(created.effects.contains(.setTimer(.chatroomAutoDestroy(roomId: "r"), after: .milliseconds(3_600_000))))
        h.now = Harness.t0 + 1_800_000
        _ = h.sendText(a, to: "r", "x", topic: .chatMsg)
        let early = h.fire(.chatroomAutoDestroy(roomId: "r"), at: Harness.t0 + 3_600_000)
        #expect(early.effects.contains(.setTimer(.chatroomAutoDestroy(roomId: "r"), after: .milliseconds(1_800_000))))
        #expect(h.core.chatroomExists("r"))
        let late = h.fire(.chatroomAutoDestroy(roomId: "r"), at: Harness.t0 + 5_400_000)
        #expect(late.has(.chatroomLeft(roomId: "r", userId: "alice", reason: .destroyed)))
        #expect(late.has(.chatroomDestroyed(roomId: "r", reason: "inactive")))
        #expect(!h.core.chatroomExists("r") && h.core.chatrooms(of: "alice").isEmpty)

        var d = Harness.directory()
        d.chatrooms = ["lobby"]
        var k = Harness(directory: d)
        #expect(k.core.chatroomExists("lobby"))
        let b = k.online("bob")
        #expect(k.join(b, room: "lobby").timersSet.isEmpty)
        k.fire(.chatroomAutoDestroy(roomId: "lobby"), at: Harness.t0 + 100_000_000)
        #expect(k.core.chatroomExists("lobby"))
        k.run(.api(.keepAliveChatroom(roomId: "lobby", enabled: false)))
        k.fire(.chatroomAutoDestroy(roomId: "lobby"), at: Harness.t0 + 200_000_000)
        #expect(!k.core.chatroomExists("lobby"))
    }

    /// Chatroom STATUS messages: quota applies, `s_msg` to joined sessions, never stored.
    @Test func chatroomStatusMessages() throws {
        var h = Self.harness()
        let a = h.online("alice")
        let b = h.online("bob")
        _ = h.join(a, room: "r")
        _ = h.join(b, room: "r")
        let up = try RMTPUpStreamMessage(content: .typingStatus(TypingStatusContent(typingContentType: "RC:TxtMsg")), flags: .status)
        let out = h.publish(a, topic: .chatMsgS, target: "r", up).1
        #expect(out.delivered(b).count == 1 && out.frames(a).isEmpty)
        #expect(h.core.chatroomHistory("r").isEmpty)
    }
}
