import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMClient

@Suite("Send")
struct SendTests {
    static let bob = ConversationKey(.privateChat, "bob")

    static func send(_ h: inout Harness, _ body: String = "hello", to c: ConversationKey = bob,
                     objectName: String = "RC:TxtMsg") {
        h.api(.send(conversation: c, objectName: objectName, content: text(body), pushText: nil, mentioned: false))
    }

    @Test("row first (SENDING), PUBLISH qos 1 with clientUniqueId, PUBACK 0 → SENT with messageUId and date*1000+millis")
    func happyPath() throws {
        var h = Harness()
        h.connectInSync()
        Self.send(&h)
        let row = try #require(h.effects.inserted.first)
        #expect(row.sentStatus == .sending && row.messageUId == nil && row.sentTime == h.now)
        // messageInserted comes before the frame goes out (row first).
        let p = try #require(h.publishes.first)
        #expect(p.topic == "ppMsgP" && p.targetId == "bob" && p.flags.qos == .atLeastOnce)
        let up = try p.decodeBody(RMTPUpStreamMessage.self)
        #expect(up.classname == "RC:TxtMsg" && up.clientUniqueID == row.clientUniqueId && up.clientUniqueID > 0)
        #expect(up.flags == [.persisted, .counted])
        #expect(h.effects.timersSet[.requestTimeout(messageId: p.messageId)] == .seconds(30))
        #expect(try h.store.message(id: row.messageId)?.sentStatus == .sending)

        h.server(.puback(Frame.Puback(messageId: p.messageId, date: 1_700_000, millis: 123, messageUId: "U1")))
        let stored = try #require(try h.store.message(id: row.messageId))
        #expect(stored.sentStatus == .sent && stored.messageUId == "U1" && stored.sentTime == 1_700_000_123)
        let r = try #require(h.effects.sendResults.first)
        #expect(r.messageId == row.messageId && r.uid == "U1" && r.sentTime == 1_700_000_123 && r.error == nil)
        #expect(h.effects.cancelled.contains(.requestTimeout(messageId: p.messageId)))
        // In sync: the sendbox cursor follows the own send.
        #expect(h.core.sendboxCursor == 1_700_000_123)
    }

    @Test("PUBACK with an error status → FAILED with the code as is", arguments: [UInt16(20604), 405, 23406, 30016])
    func errorStatus(_ status: UInt16) throws {
        var h = Harness()
        h.connectInSync()
        Self.send(&h)
        let id = h.effects.inserted[0].messageId
        h.server(.puback(Frame.Puback(messageId: h.publishes[0].messageId, status: status)))
        #expect(try h.store.message(id: id)?.sentStatus == .failed)
        #expect(h.effects.sendResults.map(\.error) == [Int32(status)])
    }

    @Test("no PUBACK in 30 s → FAILED 30003; resend reuses the row and the clientUniqueId; a late PUBACK is ignored")
    func timeoutAndResend() throws {
        var h = Harness()
        h.connectInSync()
        Self.send(&h)
        let row = h.effects.inserted[0]
        let first = h.publishes[0]
        h.fire(.requestTimeout(messageId: first.messageId))
        #expect(h.effects.sendResults.map(\.error) == [30003])
        #expect(try h.store.message(id: row.messageId)?.sentStatus == .failed)
        // The PUBACK arrives after the timeout: too late.
        h.server(.puback(Frame.Puback(messageId: first.messageId, sentTime: 5000, messageUId: "U1")))
        #expect(h.effects.sendResults.isEmpty)
        #expect(try h.store.message(id: row.messageId)?.sentStatus == .failed)

        h.api(.resend(messageId: row.messageId))
        #expect(h.effects.inserted.isEmpty)
        #expect(try h.store.message(id: row.messageId)?.sentStatus == .sending)
        let again = try #require(h.publishes.first)
        #expect(try again.decodeBody(RMTPUpStreamMessage.self).clientUniqueID == row.clientUniqueId)
        #expect(again.messageId != first.messageId)
        h.server(.puback(Frame.Puback(messageId: again.messageId, sentTime: 5000, messageUId: "U1")))
        #expect(try h.store.message(id: row.messageId)?.sentStatus == .sent)
        #expect(try h.store.totalMessageCount() == 1)
        // A SENT row cannot be resent.
        h.api(.resend(messageId: row.messageId))
        #expect(h.publishes.isEmpty)
        #expect(h.effects.sendResults.map(\.error) == [33003])
    }

    @Test("a send in flight when the connection drops fails with the code that dropped it")
    func inFlightOnDrop() throws {
        var h = Harness()
        h.connectInSync()
        Self.send(&h)
        let id = h.effects.inserted[0].messageId
        h.fire(.heartbeat)
        h.fire(.pingTimeout)
        #expect(h.effects.sendResults.map(\.error) == [30013])
        #expect(h.effects.cancelled.contains(.requestTimeout(messageId: 2)))
        #expect(try h.store.message(id: id)?.sentStatus == .failed)
        #expect(h.core.requestsInFlight == 0)
    }

    @Test("sending while not connected: FAILED at once with 30002, one conversation row")
    func offline() throws {
        var h = Harness()
        Self.send(&h)
        let row = try #require(h.effects.inserted.first)
        #expect(h.effects.sendResults.map(\.error) == [ClientErrorCode.notConnected])
        #expect(try h.store.message(id: row.messageId)?.sentStatus == .failed)
        #expect(h.frames.isEmpty)
        h.connectInSync()
        Self.send(&h)
        #expect(try h.store.conversationList().map(\.key) == [Self.bob])
    }

    @Test("B10: the send that failed offline lands in a second conversation row for the same peer")
    func b10DuplicateConversation() throws {
        var config = ClientConfig()
        config.bugs = [.b10]
        var h = Harness(config: config)
        Self.send(&h, "offline")
        h.connectInSync()
        Self.send(&h, "online")
        let keys = try h.store.conversationList().map(\.key)
        #expect(keys.count == 2)
        #expect(Set(keys.map { ClientCore.wireTarget($0) }) == ["bob"])
        // The failed row still resends to the right peer.
        let failed = try #require(try h.store.conversationList().first { $0.key.targetId != "bob" }?.latestMessageId)
        h.api(.resend(messageId: failed))
        #expect(h.publishes.first?.targetId == "bob")
    }

    @Test("unregistered custom type → 34021, content over 128 KB → 30016; neither inserts a row")
    func localRejections() throws {
        var h = Harness()
        h.connectInSync()
        Self.send(&h, objectName: "App:Gift")
        #expect(h.effects.sendResults.map(\.error) == [34021])
        Self.send(&h, String(repeating: "x", count: 128 * 1024))
        #expect(h.effects.sendResults.map(\.error) == [30016])
        #expect(h.effects.inserted.isEmpty && h.publishes.isEmpty)
        #expect(try h.store.totalMessageCount() == 0)
        // Registered, it goes.
        var config = ClientConfig()
        try config.registry.register("App:Gift", flags: .normal)
        var g = Harness(config: config)
        g.connectInSync()
        Self.send(&g, objectName: "App:Gift")
        #expect(g.publishes.count == 1)
    }

    @Test("STATUS types go qos 0 on the …S topic, are never stored and expect no PUBACK")
    func status() throws {
        var h = Harness()
        h.connectInSync()
        h.api(.send(conversation: Self.bob, objectName: "RC:TypSts", content: #"{"typingContentType":"RC:TxtMsg"}"#,
                    pushText: nil, mentioned: false))
        let p = try #require(h.publishes.first)
        #expect(p.topic == "ppMsgS" && p.flags.qos == .atMostOnce)
        #expect(h.effects.inserted.isEmpty)
        #expect(h.effects.timersSet.isEmpty)
        #expect(h.core.requestsInFlight == 0)
        #expect(try h.store.totalMessageCount() == 0)
    }

    @Test("B4: the SENT row keeps the device-clock time instead of the server's; off: server time", arguments: [false, true])
    func b4DeviceClock(b4: Bool) throws {
        var config = ClientConfig()
        if b4 { config.bugs = [.b4] }
        var h = Harness(config: config)
        h.connectInSync()
        h.now = 9_000_000                     // device clock 10 s ahead of the server
        Self.send(&h)
        let id = h.effects.inserted[0].messageId
        h.server(.puback(Frame.Puback(messageId: h.publishes[0].messageId, sentTime: 8_990_000, messageUId: "U1")))
        #expect(try h.store.message(id: id)?.sentTime == (b4 ? 9_000_000 : 8_990_000))
        // A message received later from bob with server time 8_995_000 sorts after ours only
        // with the server's clock.
        h.server(sMsg(down(uid: "U2", at: 8_995_000), id: 1))
        let latest = try h.store.conversation(Self.bob)?.latestMessageId
        #expect((latest == id) == b4)
    }

    @Test("clientUniqueId comes from a store counter: unique across an app kill")
    func clientUniqueIdSurvivesKill() throws {
        var h = Harness()
        Self.send(&h)
        let a = try #require(h.effects.inserted.first?.clientUniqueId)
        var k = Harness(store: h.store)          // app killed, new process, same database
        Self.send(&k)
        let b = try #require(k.effects.inserted.first?.clientUniqueId)
        #expect(b == a + 1)
        let tablet = Harness(store: try IMStore.inMemory(), device: "tablet")
        #expect(k.core.isOwnDevice(b) && !tablet.core.isOwnDevice(b))
    }
}

extension SendTests {
    /// wire-protocol §4: chatroom messages never move the inbox/sendbox cursors. A room's
    /// dataTime is its own sequence: a Like bumped past the millisecond moved the sendbox cursor
    /// past an own private message accepted after it in that millisecond, whose SENT update a
    /// power loss then took back — the restart's sendbox pull skipped it (quickstart-storage
    /// --swarm seeds 11394, 12833).
    @Test("a chatroom send's PUBACK leaves the sendbox cursor; the private send after it moves it")
    func roomSendLeavesTheSendbox() throws {
        var h = Harness.inRoomR1()
        let before = h.core.sendboxCursor
        Self.send(&h, "in the room", to: ConversationKey(.chatroom, "r1"))
        let room = try #require(h.publishes.first)
        Self.send(&h, "to bob")
        let bob = try #require(h.publishes.first)
        h.server(.puback(Frame.Puback(messageId: room.messageId, sentTime: 9_001, messageUId: "R1")),
                 .puback(Frame.Puback(messageId: bob.messageId, sentTime: 9_000, messageUId: "U1")))
        #expect(h.effects.sendResults.map(\.uid) == ["R1", "U1"])
        #expect(before < 9_000)
        #expect(h.core.sendboxCursor == 9_000)
        #expect(try h.store.cursor(.sendbox) == 9_000)
        #expect(!h.effects.contains { if case .note(.cursor(let name, 9_001)) = $0 { name == SyncCursor.sendbox.name } else { false } })
    }
}
