import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMClient

@Suite("Receive and sync")
struct SyncTests {
    static let bob = ConversationKey(.privateChat, "bob")

    @Test("pull paging: finished=false pulls again from the page's syncTime; left, offline, hasPackage; cursors stored")
    func paging() throws {
        var h = Harness()
        h.connect(timestamp: 150)
        let first = try h.lastQuery(.pullMsg)!.decodeBody(RMTPSyncRequestMsg.self)
        #expect(first.syncTime == 0 && first.sendBoxSyncTime == 0)
        h.answerPull(page([down(uid: "A", at: 100), down(uid: "B", at: 120)], syncTime: 120, finished: false))
        #expect(h.effects.received.map(\.message.messageUId) == ["A", "B"])
        #expect(h.effects.received.map(\.left) == [1, 0])
        #expect(h.effects.received.map(\.hasPackage) == [true, true])
        #expect(h.effects.received.map(\.offline) == [true, true])
        #expect(h.queryConfirms.count == 1)
        let second = try h.lastQuery(.pullMsg)!.decodeBody(RMTPSyncRequestMsg.self)
        #expect(second.syncTime == 120)
        #expect(h.core.isPulling && !h.core.isInSync)

        h.answerPull(page([down(uid: "C", at: 160), down(from: "alice", uid: "S1", at: 170, target: "bob", direction: .send)],
                          syncTime: 160))
        #expect(h.effects.received.map(\.message.messageUId) == ["C", "S1"])
        #expect(h.effects.received.map(\.hasPackage) == [false, false])
        #expect(h.effects.received.map(\.offline) == [false, false])
        #expect(h.effects.received[1].message.direction == .send)
        #expect(h.effects.received[1].message.conversation == Self.bob)
        #expect(h.lastQuery(.pullMsg) == nil)
        #expect(h.core.isInSync)
        #expect(try h.store.cursor(.inbox) == 160)
        #expect(try h.store.cursor(.sendbox) == 170)
        #expect(try h.store.conversation(Self.bob)?.unreadCount == 3)
        // A new process starts from the stored cursors.
        var k = Harness(store: h.store)
        k.connect()
        let resumed = try k.lastQuery(.pullMsg)!.decodeBody(RMTPSyncRequestMsg.self)
        #expect(resumed.syncTime == 160 && resumed.sendBoxSyncTime == 170)
    }

    @Test("same-millisecond messages across a page boundary: kept when the server keeps the run whole, lost when it splits it")
    func sameMillisecond() throws {
        // Server that never splits a run of equal dataTimes (the IMServer pager).
        var h = Harness()
        h.connect()
        h.answerPull(page([down(uid: "A", at: 99)], syncTime: 99, finished: false))
        h.answerPull(page([down(uid: "B", at: 100), down(uid: "C", at: 100)], syncTime: 100))
        #expect(try h.store.allMessageUIds() == ["A", "B", "C"])

        // A server that splits the run: the next page starts *after* the cursor, and the client
        // keeps only dataTime > cursor — the second 100 ms message is lost (the protocol hazard).
        var g = Harness()
        g.connect()
        g.answerPull(page([down(uid: "A", at: 99), down(uid: "B", at: 100)], syncTime: 100, finished: false))
        #expect(try g.lastQuery(.pullMsg)!.decodeBody(RMTPSyncRequestMsg.self).syncTime == 100)
        g.answerPull(page([down(uid: "C", at: 100), down(uid: "D", at: 101)], syncTime: 101))
        #expect(try g.store.allMessageUIds() == ["A", "B", "D"])
        #expect(g.effects.skips == ["dataTime 100 ≤ inbox cursor 100"])
    }

    @Test("s_msg during a pull is dropped (PUBACK still sent); the pull returns it once")
    func sMsgDuringPull() throws {
        var h = Harness()
        h.connect()
        h.server(sMsg(down(uid: "X", at: 500), id: 7))
        #expect(h.pubacks == [7])
        #expect(h.effects.received.isEmpty)
        #expect(h.effects.skips == ["s_msg during pull"])
        h.answerPull(page([down(uid: "X", at: 500)], syncTime: 500))
        #expect(try h.store.countRows(withUId: "X") == 1)
        #expect(h.effects.received.count == 1)
    }

    @Test("a pullMsg that times out on a live connection is pulled again (everyday seed 362: the s_msg dropped during it was lost)")
    func pullTimeoutRetried() throws {
        var h = Harness()
        h.connect()
        let first = try #require(h.lastQuery(.pullMsg))
        h.server(sMsg(down(uid: "X", at: 500), id: 7))
        #expect(h.effects.skips == ["s_msg during pull"])
        h.now += 30_000
        h.fire(.requestTimeout(messageId: first.messageId))
        let retry = try #require(h.lastQuery(.pullMsg))
        #expect(retry.messageId != first.messageId)
        #expect(try retry.decodeBody(RMTPSyncRequestMsg.self).syncTime == 0)
        #expect(h.core.isPulling)
        // The late answer of the first pull is ignored; the retry's answer brings X once.
        h.server(.queryAck(try Frame.QueryAck(messageId: first.messageId, date: 1000, message: page([], syncTime: 0))))
        #expect(h.effects.received.isEmpty && h.core.isPulling)
        h.answerPull(page([down(uid: "X", at: 500)], syncTime: 500))
        #expect(try h.store.countRows(withUId: "X") == 1)
        #expect(h.effects.received.map(\.message.messageUId) == ["X"])
        #expect(h.core.isInSync)
    }

    @Test("a pull cut by a lost connection is not retried on the dead link, but after the next CONNACK")
    func pullLostNotRetriedOffline() throws {
        var h = Harness()
        h.connect()
        h.feed(.transport(.closed(.reset)))
        #expect(h.queries(.pullMsg).isEmpty)
        h.reconnect(timestamp: 2_000_000)
        #expect(h.queries(.pullMsg).count == 1)
    }

    @Test("B1: s_msg accepted during a pull → the pull stores it again: duplicate row and duplicate notification")
    func b1Duplicate() throws {
        var config = ClientConfig()
        config.bugs = [.b1]
        var h = Harness(config: config)
        h.connect()
        h.server(sMsg(down(uid: "X", at: 500), id: 7))
        #expect(h.effects.received.map(\.message.messageUId) == ["X"])
        // B1 alone does not move the cursor: the running pull returns X again.
        #expect(h.core.inboxCursor == 0)
        h.answerPull(page([down(uid: "X", at: 500)], syncTime: 500))
        #expect(h.effects.received.map(\.message.messageUId) == ["X"])
        #expect(try h.store.countRows(withUId: "X") == 2)
        #expect(try h.store.duplicateMessageUIds().map { "\($0.messageUId)×\($0.rows)" } == ["X×2"])
        #expect(try h.store.conversation(Self.bob)?.unreadCount == 2)
    }

    @Test("s_msg when in sync: stored, notified, PUBACKed, inbox cursor moves to its dataTime")
    func sMsgInSync() throws {
        var h = Harness()
        h.connectInSync(timestamp: 100)
        h.server(sMsg(down(uid: "X", at: 500, retrieved: true), id: 3))
        #expect(h.pubacks == [3])
        let r = try #require(h.effects.received.first)
        #expect(r.message.messageUId == "X" && r.left == 0 && !r.offline && !r.hasPackage)
        #expect(r.message.receivedStatus.contains(.retrieved))
        #expect(h.core.inboxCursor == 500)
        #expect(try h.store.cursor(.inbox) == 500)
        #expect(h.effects.notes.contains { if case .stored(_, "X", _, 500, .receive, true) = $0 { true } else { false } })
    }

    @Test("B3: s_msg before the first pull (link check) moves the inbox cursor → the pull skips older messages; off: dropped",
          arguments: [false, true])
    func b3CursorJump(b3: Bool) throws {
        var config = ClientConfig()
        config.pingBeforeFirstPull = true
        if b3 { config.bugs = [.b3] }
        var h = Harness(config: config)
        h.connect()
        #expect(h.frames == [.pingReq()])                 // link check; no pull yet
        h.server(sMsg(down(uid: "NEW", at: 500), id: 1))
        #expect(h.effects.received.count == (b3 ? 1 : 0))
        h.server(.pingResp())
        let pull = try h.lastQuery(.pullMsg)!.decodeBody(RMTPSyncRequestMsg.self)
        #expect(pull.syncTime == (b3 ? 500 : 0))
        // The server answers from the requested cursor: OLD (dataTime 300) only when it was 0.
        let list = pull.syncTime < 300 ? [down(uid: "OLD", at: 300), down(uid: "NEW", at: 500)] : []
        h.answerPull(page(list, syncTime: max(pull.syncTime, 500)))
        let uids = try h.store.allMessageUIds()
        #expect(uids == (b3 ? ["NEW"] : ["NEW", "OLD"]))
    }

    @Test("s_ntf: pull; while pulling the notify is queued and pulled after; a notify not past the cursor is skipped")
    func notify() throws {
        var h = Harness()
        h.connectInSync()
        h.server(sNtf(time: 200, id: 1))
        #expect(h.pubacks.isEmpty)                         // qos 0
        #expect(h.queries(.pullMsg).count == 1)
        h.server(sNtf(time: 300, id: 2))
        #expect(h.queries(.pullMsg).isEmpty)
        h.answerPull(page([down(uid: "A", at: 200)], syncTime: 200))
        #expect(try h.lastQuery(.pullMsg)!.decodeBody(RMTPSyncRequestMsg.self).syncTime == 200)
        h.answerPull(page([down(uid: "B", at: 300)], syncTime: 300))
        #expect(h.core.isInSync)
        h.server(sNtf(time: 250, id: 3))
        #expect(h.queries(.pullMsg).isEmpty)
        #expect(h.effects.skips == ["s_ntf time 250 ≤ inbox cursor 300"])
        // A notify queued during a pull whose time the pull already covered is skipped too.
        h.server(sNtf(time: 400, id: 4))
        h.server(sNtf(time: 350, id: 5))
        h.answerPull(page([down(uid: "C", at: 400)], syncTime: 400))
        #expect(h.queries(.pullMsg).isEmpty)
        #expect(h.core.isInSync)
    }

    @Test("QUERYCON for a qos 1 QUERYACK, also a repeated one; none for qos 0")
    func queryConfirm() throws {
        var h = Harness()
        h.connect()
        let q = h.lastQuery(.pullMsg)!
        let ack = Frame.queryAck(try Frame.QueryAck(messageId: q.messageId, date: 1, message: page([], syncTime: 0)))
        h.server(ack)
        #expect(h.queryConfirms == [q.messageId])
        h.server(ack)                                       // re-sent by the server: confirm again, ignore
        #expect(h.queryConfirms == [q.messageId])
        #expect(h.effects.received.isEmpty)
        h.api(.clearUnread(conversation: Self.bob, upToSentTime: 10))
        h.answer(.updRRTime, qos: .atMostOnce)
        #expect(h.queryConfirms.isEmpty)
    }

    @Test("sync echo: PUBLISH with the dup bit is not PUBACKed; the server's PUBACK completes it as a SEND message")
    func syncEcho() throws {
        var h = Harness()
        h.connectInSync()
        let up = try RMTPUpStreamMessage(content: .text(TextContent(content: "from my tablet")), flags: .normal,
                                         clientUniqueId: 77)
        let id = h.nextServerId()
        h.server(.publish(try Frame.Publish(flags: FrameFlags(dup: true, qos: .atLeastOnce), date: 9, topic: .ppMsgP,
                                            targetId: "bob", messageId: id, message: up)))
        #expect(h.pubacks.isEmpty && h.effects.received.isEmpty)
        h.server(.puback(Frame.Puback(messageId: id, sentTime: 9_042, messageUId: "E1")))
        let r = try #require(h.effects.received.first)
        #expect(r.message.direction == .send && r.message.conversation == Self.bob)
        #expect(r.message.messageUId == "E1" && r.message.sentTime == 9_042 && r.message.senderUserId == "alice")
        #expect(r.message.sentStatus == .sent)
        #expect(h.core.sendboxCursor == 9_042)
        #expect(try h.store.conversation(Self.bob)?.unreadCount == 0)
    }

    @Test("STATUS s_msg: notified, never stored, no PUBACK for qos 0")
    func statusMessage() throws {
        var h = Harness()
        h.connectInSync()
        var d = down(uid: "", at: 700, objectName: "RC:TypSts", content: #"{"typingContentType":"RC:TxtMsg"}"#,
                     persistent: .status)
        d.clearMsgID()
        h.server(sMsg(d, id: 1, qos: .atMostOnce))
        #expect(h.pubacks.isEmpty)
        #expect(h.effects.received.map(\.message.messageId) == [0])
        #expect(try h.store.totalMessageCount() == 0)
        #expect(h.core.inboxCursor == 0)
    }

    @Test("unread counts counted messages only; persisted-not-counted are stored without unread")
    func unread() throws {
        var h = Harness()
        h.connect()
        h.answerPull(page([down(uid: "A", at: 1), down(uid: "I", at: 2, objectName: "RC:InfoNtf",
                                                        content: #"{"message":"x"}"#, persistent: .isPersisted),
                           down(uid: "C", at: 3, objectName: "App:Cmd", content: "{}", persistent: .none)],
                          syncTime: 3))
        #expect(try h.store.conversation(Self.bob)?.unreadCount == 1)
        #expect(try h.store.allMessageUIds() == ["A", "I"])
        #expect(h.effects.received.map(\.left) == [2, 1, 0])
    }

    @Test("a copy of this device's own message (pulled back) is never stored twice; it completes an unsent row")
    func ownCopy() throws {
        var h = Harness()
        h.connectInSync()
        h.api(.send(conversation: Self.bob, objectName: "RC:TxtMsg", content: text("x"), pushText: nil, mentioned: false))
        let row = h.effects.inserted[0]
        // The connection drops before the PUBACK: FAILED.
        h.feed(.transport(.closed(.reset)))
        #expect(try h.store.message(id: row.messageId)?.sentStatus == .failed)
        h.reconnect(timestamp: 10_000)
        h.answerPull(page([down(from: "alice", uid: "U1", at: 9_000, target: "bob", direction: .send,
                                clientUniqueId: row.clientUniqueId)], syncTime: 0))
        #expect(try h.store.message(id: row.messageId)?.messageUId == "U1")
        #expect(try h.store.message(id: row.messageId)?.sentStatus == .sent)
        #expect(try h.store.totalMessageCount() == 1)
        #expect(h.effects.sendResults.map(\.uid) == ["U1"])
        #expect(h.core.sendboxCursor == 9_000)
    }

    @Test("messageUIdDedup knob: B1's second copy is a store dedup hit — noted with isNew false, not shown again")
    func dedupKnob() throws {
        var config = ClientConfig()
        config.bugs = [.b1]
        config.messageUIdDedup = true
        var h = Harness(config: config)
        h.connect()
        h.server(sMsg(down(uid: "X", at: 500), id: 7))
        h.answerPull(page([down(uid: "X", at: 500)], syncTime: 500))
        #expect(h.effects.received.isEmpty)
        #expect(h.effects.notes.contains { if case .stored(_, "X", _, _, _, false) = $0 { true } else { false } })
        #expect(try h.store.countRows(withUId: "X") == 1)
    }

    @Test("pollInterval: a poll timer pulls when idle and re-arms; none without the knob")
    func poll() throws {
        var config = ClientConfig()
        config.pollInterval = .seconds(180)
        var h = Harness(config: config)
        h.connect()
        #expect(h.effects.timersSet[.poll] == .seconds(180))
        h.answerPull(page([], syncTime: 0))
        h.fire(.poll)
        #expect(h.lastQuery(.pullMsg) != nil)
        #expect(h.effects.timersSet[.poll] == .seconds(180))
        var g = Harness()
        g.connect()
        #expect(g.effects.timersSet[.poll] == nil)
    }
}
