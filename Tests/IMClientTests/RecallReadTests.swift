import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMClient

func recallCommand(uid: String, of original: String, at t: Int64, from: String = "bob", sentTime: Int64 = 0) -> RMTPDownStreamMessage {
    let c = RecallCommandContent(conversationType: .privateChat, targetId: "alice", messageUId: original, sentTime: sentTime)
    return down(from: from, uid: uid, at: t, objectName: RecallCommandContent.objectName,
                content: ClientCore.json(c.json), persistent: .none)
}

@Suite("Recall, receipts, unread, history")
struct RecallReadTests {
    static let bob = ConversationKey(.privateChat, "bob")

    /// In sync with three unread messages from bob (A, B, C at 100, 200, 300).
    static func threeUnread(config: ClientConfig = ClientConfig()) -> Harness {
        var h = Harness(config: config)
        h.connect()
        h.answerPull(page([down(uid: "A", at: 100), down(uid: "B", at: 200), down(uid: "C", at: 300)], syncTime: 300))
        return h
    }

    @Test("recall of an unread message: RC:RcNtf keeps the messageId, recalled callback, unread −1; B14: unread stays",
          arguments: [false, true])
    func recallUnread(b14: Bool) throws {
        var config = ClientConfig()
        if b14 { config.bugs = [.b14] }
        var h = Self.threeUnread(config: config)
        let b = try #require(try h.store.messages(withUId: "B").first)
        #expect(try h.store.conversation(Self.bob)?.unreadCount == 3)
        h.server(sMsg(recallCommand(uid: "R1", of: "B", at: 400), id: 1))
        #expect(h.effects.callbacks.contains { if case .recalled(b.messageId, Self.bob) = $0 { true } else { false } })
        #expect(h.effects.received.isEmpty)
        let after = try #require(try h.store.message(id: b.messageId))
        #expect(after.objectName == "RC:RcNtf" && after.messageUId == "B")
        guard case .recallNotification(let n) = MessageContent.decodeOrRaw(objectName: after.objectName, bytes: Array(after.content.utf8))
        else { Issue.record("RC:RcNtf content"); return }
        #expect(n.operatorId == "bob" && n.originalObjectName == "RC:TxtMsg" && n.originalMessageUId == "B")
        #expect(try h.store.conversation(Self.bob)?.unreadCount == (b14 ? 3 : 2))
        #expect(try h.store.totalMessageCount() == 3)            // the RcCmd itself is not stored
    }

    @Test("recall of a read message leaves unread unchanged (also with B14)", arguments: [false, true])
    func recallRead(b14: Bool) throws {
        var config = ClientConfig()
        if b14 { config.bugs = [.b14] }
        var h = Self.threeUnread(config: config)
        h.api(.clearUnread(conversation: Self.bob, upToSentTime: 200))
        #expect(try h.store.conversation(Self.bob)?.unreadCount == 1)
        h.server(sMsg(recallCommand(uid: "R1", of: "A", at: 400), id: 1))
        #expect(try h.store.conversation(Self.bob)?.unreadCount == 1)
    }

    @Test("own recall: RC:RcCmd on recallMsg; PUBACK 0 → row replaced, recallResult ok")
    func ownRecall() throws {
        var h = Harness()
        h.connectInSync()
        h.api(.send(conversation: Self.bob, objectName: "RC:TxtMsg", content: text("oops"), pushText: nil, mentioned: false))
        let id = h.effects.inserted[0].messageId
        h.server(.puback(Frame.Puback(messageId: h.publishes[0].messageId, sentTime: 5_000, messageUId: "U1")))
        h.api(.recall(messageId: id))
        let p = try #require(h.publishes.first)
        #expect(p.topic == "recallMsg" && p.targetId == "bob")
        guard case .recallCommand(let c) = try p.decodeBody(RMTPUpStreamMessage.self).messageContent else {
            Issue.record("RC:RcCmd"); return
        }
        #expect(c.messageUId == "U1" && c.sentTime == 5_000 && c.conversationType == .privateChat && c.targetId == "bob")
        h.server(.puback(Frame.Puback(messageId: p.messageId, sentTime: 6_000, messageUId: "U2")))
        #expect(h.effects.callbacks.contains { if case .recallResult(id, nil) = $0 { true } else { false } })
        #expect(try h.store.message(id: id)?.objectName == "RC:RcNtf")
        // Recalling an unsent or someone else's message is refused locally.
        h.api(.recall(messageId: 999))
        #expect(h.effects.callbacks.contains { if case .recallResult(999, 33003) = $0 { true } else { false } })
    }

    @Test("read receipts form a high-water mark: every SENT row with sentTime ≤ t becomes READ; stale receipts change nothing")
    func receiptsHighWaterMark() throws {
        var h = Harness()
        h.connectInSync()
        var ids: [Int64] = []
        for (k, t) in [Int64(100), 200, 300].enumerated() {
            h.api(.send(conversation: Self.bob, objectName: "RC:TxtMsg", content: text("m\(k)"), pushText: nil, mentioned: false))
            ids.append(h.effects.inserted[0].messageId)
            h.server(.puback(Frame.Puback(messageId: h.publishes[0].messageId, sentTime: t, messageUId: "U\(k)")))
        }
        let receipt = { (uid: String, t: Int64, at: Int64) -> RMTPDownStreamMessage in
            down(uid: uid, at: at, objectName: ReadNotificationContent.objectName,
                 content: ClientCore.json(ReadNotificationContent(lastMessageSendTime: t).json), persistent: .none)
        }
        h.server(sMsg(receipt("RR1", 200, 400), id: 1))
        #expect(try ids.map { try h.store.message(id: $0)!.sentStatus } == [.read, .read, .sent])
        #expect(h.effects.callbacks.contains { if case .readReceipt(Self.bob, 200) = $0 { true } else { false } })
        h.server(sMsg(receipt("RR2", 100, 500), id: 2))           // stale
        #expect(!h.effects.callbacks.contains { if case .readReceipt = $0 { true } else { false } })
        #expect(try ids.map { try h.store.message(id: $0)!.sentStatus } == [.read, .read, .sent])
        h.server(sMsg(receipt("RR3", 300, 600), id: 3))
        #expect(try ids.map { try h.store.message(id: $0)!.sentStatus } == [.read, .read, .read])
        #expect(try h.store.conversation(Self.bob)?.readReceiptTime == 300)
    }

    @Test("sendReadReceipt writes RC:ReadNtf; clearUnread clears locally and sends updRRTime")
    func sendingReceipts() throws {
        var h = Self.threeUnread()
        h.api(.sendReadReceipt(conversation: Self.bob, lastMessageSentTime: 300))
        let p = try #require(h.publishes.first)
        guard case .readNotification(let n) = try p.decodeBody(RMTPUpStreamMessage.self).messageContent else {
            Issue.record("RC:ReadNtf"); return
        }
        #expect(n.lastMessageSendTime == 300 && p.targetId == "bob")
        h.api(.clearUnread(conversation: Self.bob, upToSentTime: 300))
        #expect(try h.store.conversation(Self.bob)?.unreadCount == 0)
        let q = try #require(h.lastQuery(.updRRTime)).decodeBody(RMTPSessionMsgReadInput.self)
        #expect(q.msgTime == 300 && q.channelID == "bob" && q.type == .person)
    }

    @Test("RC:SRSMsg echoed from my other device clears unread here; the peer's is ignored")
    func multiDeviceReadSync() throws {
        var h = Self.threeUnread()
        let srs = ClientCore.json(SyncReadStatusContent(lastMessageSendTime: 200).json)
        h.server(sMsg(down(uid: "P", at: 350, objectName: "RC:SRSMsg", content: srs, persistent: .none), id: 1))
        #expect(try h.store.conversation(Self.bob)?.unreadCount == 3)
        var up = RMTPUpStreamMessage()
        up.classname = "RC:SRSMsg"
        up.contentBytes = Array(srs.utf8)
        up.sessionID = 0
        let id = h.nextServerId()
        h.server(.publish(try Frame.Publish(flags: FrameFlags(dup: true, qos: .atLeastOnce), topic: .ppMsgP, targetId: "bob",
                                            messageId: id, message: up)),
                 .puback(Frame.Puback(messageId: id, sentTime: 360, messageUId: "S")))
        #expect(try h.store.conversation(Self.bob)?.unreadCount == 1)
        #expect(h.effects.callbacks.contains { if case .syncReadStatus(Self.bob, 200) = $0 { true } else { false } })
    }

    /// 30 messages m1…m30 (sentTime 10…300) in sync, then a page of local history.
    static func thirty(config: ClientConfig) -> (Harness, [StoredMessage]) {
        var h = Harness(config: config)
        h.connect()
        h.answerPull(page((1...30).map { down(uid: "m\($0)", at: Int64($0) * 10) }, syncTime: 300))
        let all = try! h.store.snapshot(of: bob)
        return (h, all)
    }

    @Test("B5: a live message inserted while history is paged leaves a gap; off: server-order pages are complete",
          arguments: [false, true])
    func b5HistoryGap(b5: Bool) throws {
        var config = ClientConfig()
        if b5 { config.bugs = [.b5] }
        var (h, all) = Self.thirty(config: config)
        h.api(.getHistory(conversation: Self.bob, beforeMessageId: -1, count: 20))
        let first = h.effects.callbacks.compactMap { if case .history(_, let m) = $0 { m } else { nil } }[0]
        #expect(first.map(\.messageUId) == (11...30).reversed().map { "m\($0)" })
        // A live message older than the page boundary arrives (sentTime 55: e.g. delayed in the
        // server's pipeline of another conversation clock).
        h.server(sMsg(down(uid: "late", at: 55), id: 1))
        #expect(try h.store.countRows(withUId: "late") == 1)
        h.api(.getHistory(conversation: Self.bob, beforeMessageId: first.last!.messageId, count: 20))
        let second = h.effects.callbacks.compactMap { if case .history(_, let m) = $0 { m } else { nil } }[0]
        let seen = Set((first + second).compactMap(\.messageUId))
        let missing = all.compactMap(\.messageUId).filter { !seen.contains($0) }
        #expect(missing == (b5 ? ["m10"] : []))
        // Fixed pager: the late message shows in its server-order place on the second page.
        #expect(second.count == (b5 ? 10 : 11))
        #expect(second.contains { $0.messageUId == "late" })
    }

    @Test("cloud history: qryPMsg with count 1…200; answered messages are returned, not stored")
    func remoteHistory() throws {
        var h = Harness()
        h.connectInSync()
        h.api(.getRemoteHistory(conversation: Self.bob, beforeTime: 0, count: 201))
        #expect(h.effects.callbacks.contains { if case .remoteHistory(_, [], 33003) = $0 { true } else { false } })
        h.api(.getRemoteHistory(conversation: Self.bob, beforeTime: 900, count: 20))
        let q = try #require(h.lastQuery(.qryPMsg)).decodeBody(RMTPHistoryMsgInput.self)
        #expect(q.time == 900 && q.count == 20 && q.targetID == "bob")
        var o = RMTPHistoryMsgOuput()
        o.list = [down(uid: "H1", at: 10), down(uid: "H2", at: 20)]
        o.syncTime = 10
        o.hasMsg = 0
        h.answer(.qryPMsg, body: try ProtoBody.encode(o))
        #expect(h.effects.callbacks.contains { if case .remoteHistory(_, let m, nil) = $0 { m.map(\.messageUId) == ["H1", "H2"] } else { false } })
        #expect(try h.store.totalMessageCount() == 0)
    }
}
