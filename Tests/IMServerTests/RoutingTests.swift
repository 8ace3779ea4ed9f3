import IMWire
import SimKernel
import Testing
@testable import IMServer

@Suite struct RoutingTests {
    /// A private message: PUBACK with date/millis/messageUId = dataTime, `s_msg` to every online
    /// session of the recipient (mobile, desktop, web), inbox entry, accept event with recipients.
    @Test func privateMessageDirectDelivery() throws {
        var h = Harness()
        let a = h.online("alice")
        let bPhone = h.online("bob", device: "bp", platform: .mobile)
        let bWeb = h.online("bob", device: "bw", platform: .web)
        h.advance(ms: 1234)
        let (id, out) = h.sendText(a, to: "bob", "hi", clientUniqueId: 7)
        let ack = try #require(out.puback(a))
        #expect(ack.messageId == id && ack.status == 0)
        #expect(ack.sentTime == h.now)
        #expect(ack.millis == UInt16(h.now % 1000) && ack.date == UInt32(h.now / 1000))
        let acc = try #require(out.accepted.first)
        #expect(acc.messageUId == ack.messageUId)
        #expect(acc.recipients == ["bob"] && acc.senderUserId == "alice" && acc.conversation == ConversationKey(.privateChat, "bob"))
        #expect(acc.clientUniqueId == 7 && acc.dataTime == h.now)
        for c in [bPhone, bWeb] {
            let d = try #require(out.delivered(c).first)
            #expect(d.fromUserID == "alice" && d.msgID == ack.messageUId && d.dataTime == h.now && d.classname == "RC:TxtMsg")
            #expect(d.statusFlags.contains(.counted) && !d.hasDirection && !d.hasGroupID)
            #expect(d.messageContent == .text(TextContent(content: "hi")))
            #expect(out.publishes(c, topic: .s_msg).first?.flags.qos == .atLeastOnce)
            #expect(out.publishes(c, topic: .s_msg).first?.targetId == "alice")
        }
        #expect(out.fanOuts.map { "\($0.user)/\($0.device)/\($0.via)" } == ["bob/bp/direct", "bob/bw/direct"])
        #expect(h.core.inboxMessageUIds(of: "bob") == [ack.messageUId])
        #expect(h.core.inboxMessageUIds(of: "alice").isEmpty)
    }

    /// Notify mode: `s_ntf` (type 1, time = dataTime) instead of `s_msg`; the message waits in the inbox.
    @Test func notifyDelivery() throws {
        var cfg = ServerConfig()
        cfg.delivery = .notify
        var h = Harness(config: cfg)
        let a = h.online("alice")
        let b = h.online("bob")
        let (_, out) = h.sendText(a, to: "bob", "hi")
        #expect(out.delivered(b).isEmpty)
        let n = try #require(out.publishes(b, topic: .s_ntf).first)
        let body = try n.decodeBody(RMTPNotifyMsg.self)
        #expect(body.type == 1 && body.time == out.puback(a)!.sentTime)
        #expect(out.fanOuts.map(\.via) == [.notify])
        let page = try #require(h.pull(b, user: "bob", syncTime: 0).1.pullPage(b))
        #expect(page.list.map(\.msgID) == [out.puback(a)!.messageUId])
    }

    /// Multi-device sync: the sender's other sessions get PUBLISH(dup, send topic, UpStreamMessage)
    /// then PUBACK with the same msgId carrying date/millis/messageUId; the sending session gets
    /// only its PUBACK.
    @Test func syncEchoToSendersOtherDevices() throws {
        var h = Harness()
        let phone = h.online("alice", device: "phone", platform: .mobile)
        let desk = h.online("alice", device: "desk", platform: .desktop)
        _ = h.online("bob")
        let (_, out) = h.sendText(phone, to: "bob", "hello", clientUniqueId: 99)
        let ack = try #require(out.puback(phone))
        let frames = out.frames(desk)
        #expect(frames.count == 2)
        guard case .publish(let echo) = frames[0], case .puback(let echoAck) = frames[1] else {
            Issue.record("expected PUBLISH + PUBACK, got \(frames)")
            return
        }
        #expect(echo.flags.dup && echo.isSyncEcho && echo.flags.qos == .atLeastOnce)
        #expect(echo.topic == "ppMsgP" && echo.targetId == "bob")
        let up = try echo.decodeBody(RMTPUpStreamMessage.self)
        #expect(up.messageContent == .text(TextContent(content: "hello")) && up.clientUniqueID == 99)
        #expect(echoAck.messageId == echo.messageId && echoAck.messageUId == ack.messageUId && echoAck.sentTime == ack.sentTime)
        #expect(out.frames(phone).count == 1)
        #expect(out.fanOuts.contains { $0.user == "alice" && $0.device == "desk" && $0.via == .syncEcho })
        #expect(h.core.sendboxMessageUIds(of: "alice") == [ack.messageUId])

        // Without multi-device sync: no echo, no sendbox.
        var cfg = ServerConfig()
        cfg.multiDeviceSync = false
        var h2 = Harness(config: cfg)
        let p2 = h2.online("alice", device: "phone", platform: .mobile)
        let d2 = h2.online("alice", device: "desk", platform: .desktop)
        let out2 = h2.sendText(p2, to: "bob", "x").1
        #expect(out2.frames(d2).isEmpty)
        #expect(h2.core.sendboxMessageUIds(of: "alice").isEmpty)
    }

    /// Offline recipient: inbox + offlineStored + pushed; `ppMsgN` suppresses the push.
    @Test(arguments: [(Topic.ppMsgP, true), (.ppMsgN, false)])
    func offlineRecipientStoredAndPushed(topic: Topic, push: Bool) throws {
        var h = Harness()
        let a = h.online("alice")
        let (_, out) = h.sendText(a, to: "bob", "hi", topic: topic)
        let uid = try #require(out.puback(a)).messageUId
        #expect(out.has(.offlineStored(messageUId: uid, userId: "bob")))
        #expect(out.has(.pushed(messageUId: uid, userId: "bob")) == push)
        #expect(out.fanOuts.isEmpty)
        #expect(h.core.inboxMessageUIds(of: "bob") == [uid])
    }

    /// Idempotent accept by (sender, clientUniqueId): the repeat is answered with the original
    /// messageUId and dataTime and delivered to nobody; with B2 on it becomes a second message.
    @Test(arguments: [false, true])
    func idempotentAccept(b2: Bool) throws {
        var cfg = ServerConfig()
        if b2 { cfg.bugs = [.b2] }
        var h = Harness(config: cfg)
        let a = h.online("alice")
        let b = h.online("bob")
        let first = h.sendText(a, to: "bob", "once", clientUniqueId: 42).1
        let ack1 = try #require(first.puback(a))
        h.advance(ms: 5000)
        let (id2, second) = h.sendText(a, to: "bob", "once", clientUniqueId: 42)
        let ack2 = try #require(second.puback(a))
        #expect(ack2.messageId == id2)
        if b2 {
            #expect(ack2.messageUId != ack1.messageUId && ack2.sentTime == h.now)
            #expect(second.delivered(b).count == 1)
            #expect(h.core.inboxMessageUIds(of: "bob").count == 2)
        } else {
            #expect(ack2.messageUId == ack1.messageUId && ack2.sentTime == ack1.sentTime)
            #expect(second.delivered(b).isEmpty && second.accepted.isEmpty)
            #expect(second.has(.duplicateSendAbsorbed(messageUId: ack1.messageUId, userId: "alice", clientUniqueId: 42)))
            #expect(h.core.inboxMessageUIds(of: "bob").count == 1)
        }
        // Another user's identical clientUniqueId is another message.
        let c = h.online("carol")
        #expect(h.sendText(c, to: "bob", "once", clientUniqueId: 42).1.puback(c)?.messageUId != ack1.messageUId)
    }

    /// 5 messages per second per connection; the 6th within 1000 ms gets 20604.
    @Test func rateLimit() {
        var h = Harness()
        let a = h.online("alice")
        var statuses: [UInt16] = []
        for i in 0..<7 {
            h.now = Harness.t0 + Int64(i) * 150 // 0, 150, …, 900
            statuses.append(h.sendText(a, to: "bob", "m\(i)").1.puback(a)!.status)
        }
        #expect(statuses == [0, 0, 0, 0, 0, 20604, 20604])
        h.now = Harness.t0 + 999
        #expect(h.sendText(a, to: "bob", "x").1.puback(a)!.status == 20604)
        h.now = Harness.t0 + 1000 // the first send left the window
        #expect(h.sendText(a, to: "bob", "x").1.puback(a)!.status == 0)
        // Another connection has its own budget.
        let a2 = h.online("alice", device: "desk", platform: .desktop)
        #expect(h.sendText(a2, to: "bob", "x").1.puback(a2)!.status == 0)
    }

    /// Content over 128 KB → 30016; exactly 128 KB is accepted.
    @Test(arguments: [(131_072, UInt16(0)), (131_073, 30016)])
    func bodySizeLimit(size: Int, status: UInt16) {
        var h = Harness()
        let a = h.online("alice")
        let out = h.sendRaw(a, to: "bob", objectName: "app:Blob", bytes: [UInt8](repeating: 0x61, count: size), topic: .ppMsgP).1
        #expect(out.puback(a)?.status == status)
        #expect(out.rejectedCodes == (status == 0 ? [] : [30016]))
    }

    /// Recipient blacklist 405, recipient whitelist 407.
    @Test(arguments: [
        ("bob", "alice", UInt16(405)), // bob blocks alice
        ("bob", "carol", 0),
    ])
    func blacklist(owner: String, sender: String, status: UInt16) {
        var cfg = ServerConfig()
        cfg.blacklists = ["bob": ["alice"]]
        cfg.whitelists = ["dave": ["carol"]]
        var h = Harness(config: cfg)
        let s = h.online(sender)
        #expect(h.sendText(s, to: owner, "x").1.puback(s)?.status == status)
        #expect(h.core.inboxCount(of: owner) == (status == 0 ? 1 : 0))
    }

    @Test(arguments: [("carol", UInt16(0)), ("alice", 407)])
    func whitelist(sender: String, status: UInt16) {
        var cfg = ServerConfig()
        cfg.whitelists = ["dave": ["carol"]]
        var h = Harness(config: cfg)
        let s = h.online(sender)
        #expect(h.sendText(s, to: "dave", "x").1.puback(s)?.status == status)
    }

    /// The sensitive-word filter is silent: PUBACK success with a messageUId, nobody gets it.
    @Test func sensitiveWordsAreSilentlyDropped() throws {
        var cfg = ServerConfig()
        cfg.sensitiveWords = ["badword"]
        var h = Harness(config: cfg)
        let a = h.online("alice")
        let b = h.online("bob")
        let out = h.sendText(a, to: "bob", "a badword here").1
        let ack = try #require(out.puback(a))
        #expect(ack.status == 0 && !ack.messageUId.isEmpty)
        #expect(out.delivered(b).isEmpty)
        #expect(out.drops.map { "\($0.uid ?? "-")/\($0.user ?? "*")/\($0.reason)" } == ["\(ack.messageUId)/*/sensitiveWord"])
        #expect(h.core.inboxCount(of: "bob") == 0)
        #expect(h.sendText(a, to: "bob", "fine").1.delivered(b).count == 1)
    }

    /// Group: members only (22406), mutes (22408), fan-out to the other members, sorted.
    @Test func groupRouting() throws {
        var h = Harness()
        let a = h.online("alice")
        let b = h.online("bob")
        let c = h.online("carol")
        let d = h.online("dave")
        let out = h.sendText(a, to: "g1", "hey", topic: .pgMsgP).1
        #expect(out.accepted.first?.recipients == ["bob", "carol"])
        let msg = try #require(out.delivered(b).first)
        #expect(msg.groupID == "g1" && msg.fromUserID == "alice" && msg.type == ConversationType.group.rawValue)
        #expect(out.delivered(c).count == 1 && out.delivered(d).isEmpty)
        #expect(out.publishes(b, topic: .s_msg).first?.targetId == "g1")
        #expect(h.sendText(d, to: "g1", "x", topic: .pgMsgP).1.puback(d)?.status == 22406)
        h.run(.api(.muteGroupUser(groupId: "g1", userId: "bob", muted: true)))
        #expect(h.sendText(b, to: "g1", "x", topic: .pgMsgP).1.puback(b)?.status == 22408)
        h.run(.api(.muteGroupUser(groupId: "g1", userId: "bob", muted: false)))
        #expect(h.sendText(b, to: "g1", "x", topic: .pgMsgP).1.puback(b)?.status == 0)
        h.run(.api(.addGroupMembers(groupId: "g1", userIds: ["dave"])))
        #expect(h.sendText(d, to: "g1", "x", topic: .pgMsgP).1.accepted.first?.recipients == ["alice", "bob", "carol"])
        h.run(.api(.removeGroupMembers(groupId: "g1", userIds: ["bob"])))
        #expect(h.core.groupMembers("g1") == ["alice", "carol", "dave"])
    }

    /// STATUS messages (`…S` topics): online recipients only, no PUBACK, no messageUId, never stored.
    @Test func statusMessages() throws {
        var h = Harness()
        let a = h.online("alice")
        let up = try RMTPUpStreamMessage(content: .typingStatus(TypingStatusContent(typingContentType: "RC:TxtMsg")), flags: .status)
        let offline = h.publish(a, topic: .ppMsgS, target: "bob", up).1
        #expect(offline.frames(a).isEmpty)
        #expect(offline.drops.map { "\($0.uid ?? "-")/\($0.user ?? "*")/\($0.reason)" } == ["-/bob/statusToOffline"])
        let b = h.online("bob")
        let online = h.publish(a, topic: .ppMsgS, target: "bob", up).1
        let d = try #require(online.delivered(b).first)
        #expect(!d.hasMsgID && d.classname == "RC:TypSts")
        #expect(online.publishes(b, topic: .s_msg).first?.flags.qos == .atMostOnce)
        #expect(online.accepted.isEmpty && online.frames(a).isEmpty)
        #expect(h.core.inboxCount(of: "bob") == 0)
    }

    /// dataTime strictly increases per conversation even within one ms; with allowEqualDataTime
    /// same-ms messages share it.
    @Test(arguments: [false, true])
    func dataTimePerConversation(allowEqual: Bool) {
        var cfg = ServerConfig()
        cfg.allowEqualDataTime = allowEqual
        cfg.rateLimitPerSecond = 0
        var h = Harness(config: cfg)
        let a = h.online("alice")
        let c = h.online("carol")
        let times = (0..<3).map { _ in h.sendText(a, to: "bob", "x").1.puback(a)!.sentTime }
        let t0 = Harness.t0
        #expect(times == (allowEqual ? [t0, t0, t0] : [t0, t0 + 1, t0 + 2]))
        // Another conversation has its own clock; bob→alice shares alice→bob's.
        #expect(h.sendText(c, to: "bob", "x").1.puback(c)!.sentTime == t0)
        let b = h.online("bob")
        #expect(h.sendText(b, to: "alice", "x").1.puback(b)!.sentTime == (allowEqual ? t0 : t0 + 3))
    }

    @Test func messageUIdsAreDeterministicOrderedAndWellFormed() {
        var h = Harness()
        let a = h.online("alice")
        let uids = (0..<3).map { _ in h.sendText(a, to: "bob", "x").1.puback(a)!.messageUId }
        #expect(uids == ["BK00-0000-0000-0001", "BK00-0000-0000-0002", "BK00-0000-0000-0003"])
        #expect(MessageUId.make(MessageUId.sequence(generation: 1, counter: 1)) == "BK00-0080-0000-0001")
        let seqs: [UInt64] = [0, 1, 31, 32, 1 << 48, (3 << 48) | 123_456_789, .max >> 1]
        for s in seqs { #expect(MessageUId.parse(MessageUId.make(s)) == s) }
        let sorted = seqs.sorted()
        #expect(sorted.map(MessageUId.make) == sorted.map(MessageUId.make).sorted())
        #expect(MessageUId.parse("BK00-0000-0000-000I") == nil)
    }

    /// System messages from the server API: one messageUId, inbox + fan-out + push.
    @Test func systemMessagesAndBroadcast() throws {
        var h = Harness()
        let b = h.online("bob")
        let out = h.run(.api(.sendSystemMessage(toUserId: "bob", objectName: "RC:TxtMsg", content: Array(#"{"content":"sys"}"#.utf8))))
        let d = try #require(out.delivered(b).first)
        #expect(d.fromUserID == "__system__" && d.type == ConversationType.system.rawValue)
        let all = h.run(.api(.broadcast(objectName: "RC:TxtMsg", content: Array(#"{"content":"all"}"#.utf8))))
        let acc = try #require(all.accepted.first)
        #expect(acc.recipients == ["alice", "bob", "carol", "dave", "erin"] && acc.senderDeviceId == nil)
        #expect(acc.conversation == ConversationKey(.system, "__system__"))
        #expect(all.events.filter { if case .pushed = $0 { true } else { false } }.count == 4)
    }

    /// Receipts: RC:ReadNtf relays like a message; updRRTime is acknowledged and synced to the
    /// user's other devices as RC:SRSMsg.
    @Test func receipts() throws {
        var h = Harness()
        let a = h.online("alice", device: "phone", platform: .mobile)
        let aDesk = h.online("alice", device: "desk", platform: .desktop)
        let b = h.online("bob")
        let read = try RMTPUpStreamMessage(content: .readNotification(ReadNotificationContent(lastMessageSendTime: 123)), flags: .command)
        let out = h.publish(b, topic: .ppMsgP, target: "alice", read).1
        #expect(out.puback(b)?.status == 0)
        let got = try #require(out.delivered(a).first)
        #expect(got.classname == "RC:ReadNtf" && !got.statusFlags.contains(.counted))
        var r = RMTPSessionMsgReadInput()
        r.type = .person
        r.msgTime = 777
        r.channelID = "bob"
        let (qid, upd) = h.query(a, .updRRTime, target: "alice", r)
        let ack = try #require(upd.queryAck(a))
        #expect(ack.messageId == qid && ack.status == 0 && ack.body.isEmpty)
        #expect(h.core.readTime(of: "alice", conversation: ConversationKey(.privateChat, "bob")) == 777)
        let echo = upd.publishes(aDesk).first
        #expect(echo?.flags.dup == true && echo?.topic == "ppMsgP" && echo?.targetId == "bob")
        let content = try #require(echo).decodeBody(RMTPUpStreamMessage.self).messageContent
        #expect(content == .syncReadStatus(SyncReadStatusContent(lastMessageSendTime: 777)))
        #expect(upd.frames(b).isEmpty)
    }
}
