import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMClient

/// `ClientConfig.repullCursorTies` (issue 28): a direct delivery moves the inbox cursor to its
/// dataTime, which says nothing of another message of the same millisecond in another
/// conversation. When that one was never stored (a power loss kept the first commit and took back
/// the second: quickstart-storage --swarm seed 20), a pull from the cursor never returns it.
@Suite("Cursor ties: the cursor's own millisecond asked for again")
struct CursorTieTests {
    static let family = ConversationKey(.group, "family")

    /// A process that stored X (bob, private) by direct delivery at 500: the cursor is 500. Y
    /// (carol in group family) was accepted in the same millisecond and never stored here.
    static func storeAfterOneOfTwo(_ config: ClientConfig) throws -> IMStore {
        var h = Harness(config: config)
        h.connectInSync(timestamp: 100)
        h.server(sMsg(down(uid: "X", at: 500), id: 3))
        #expect(h.core.inboxCursor == 500)
        #expect(try h.store.allMessageUIds() == ["X"])
        return h.store
    }

    static var pageAfter499: RMTPDownStreamMessages {
        page([down(uid: "X", at: 500), down(from: "carol", uid: "Y", at: 500, type: .group, target: "family")], syncTime: 500)
    }

    @Test("on: the next process pulls from cursor − 1, stores the lost same-ms message once and skips the stored one")
    func repullsTheTie() throws {
        var config = ClientConfig()
        config.repullCursorTies = true
        let store = try Self.storeAfterOneOfTwo(config)
        var k = Harness(config: config, store: store)
        k.connect()
        let asked = try k.lastQuery(.pullMsg)!.decodeBody(RMTPSyncRequestMsg.self)
        #expect(asked.syncTime == 499 && asked.sendBoxSyncTime == 0)
        k.answerPull(Self.pageAfter499)
        #expect(k.effects.received.map(\.message.messageUId) == ["Y"])
        #expect(k.effects.skips == ["re-pulled at the cursor's millisecond: already stored"])
        #expect(try store.countRows(withUId: "X") == 1 && store.countRows(withUId: "Y") == 1)
        #expect(try store.conversation(Self.family)?.unreadCount == 1)
        #expect(k.core.isInSync && k.core.inboxCursor == 500)
        // Once a page is stored the cursor means what it says again: the next pull asks from it.
        k.server(sNtf(time: 600, id: 9))
        #expect(try k.lastQuery(.pullMsg)!.decodeBody(RMTPSyncRequestMsg.self).syncTime == 500)
    }

    @Test("off (the public client, :memory: runs): the next process pulls from the cursor; a tie the server sends is skipped")
    func offPullsFromTheCursor() throws {
        let store = try Self.storeAfterOneOfTwo(ClientConfig())
        var k = Harness(store: store)
        k.connect()
        #expect(try k.lastQuery(.pullMsg)!.decodeBody(RMTPSyncRequestMsg.self).syncTime == 500)
        // Even handed the same-ms page, the client keeps only dataTime > cursor: Y is lost.
        k.answerPull(Self.pageAfter499)
        #expect(k.effects.received.isEmpty)
        #expect(try store.allMessageUIds() == ["X"])
    }

    @Test("on: the sendbox cursor too — a copy sent from another device at the cursor's millisecond is stored once")
    func ownMessageFromAnotherDevice() throws {
        var config = ClientConfig()
        config.repullCursorTies = true
        var h = Harness(config: config)
        h.connect(timestamp: 100)
        // A pulled copy of a send from another device moved the sendbox cursor to 700.
        h.answerPull(page([down(from: "alice", uid: "S1", at: 700, target: "bob", direction: .send)], syncTime: 0))
        #expect(try h.store.cursor(.sendbox) == 700)
        var k = Harness(config: config, store: h.store)
        k.connect()
        let asked = try k.lastQuery(.pullMsg)!.decodeBody(RMTPSyncRequestMsg.self)
        #expect(asked.sendBoxSyncTime == 699)
        k.answerPull(page([down(from: "alice", uid: "S1", at: 700, target: "bob", direction: .send),
                           down(from: "alice", uid: "S2", at: 700, target: "carol", direction: .send)], syncTime: 0))
        #expect(k.effects.received.map(\.message.messageUId) == ["S2"])
        #expect(try k.store.countRows(withUId: "S1") == 1 && k.store.countRows(withUId: "S2") == 1)
    }
}
