import Foundation
import Testing
@testable import IMStore

/// A sweep worker hands the in-memory connection of a finished seed's device store to the next
/// seed (`IMStore(recycling:)`): the recycled store must answer exactly as a fresh copy of the
/// empty template, and keep its prepared statements.
@Suite struct StoreRecyclingTests {
    /// Every operation kind that writes a table.
    func use(_ s: IMStore) throws {
        let id = try s.insertOutgoing(outgoing("mine", at: 250)).messageId
        _ = try s.markSent(messageId: id, messageUId: "M", sentTime: 260)
        _ = try store(s, incoming("A", at: 100))
        _ = try store(s, incoming("B", in: team, at: 120, from: "bob"))
        _ = try s.nextCounterValue("clientUniqueId")
        _ = try s.joinChatroom("room1", at: 300)
        _ = try s.setChatroomKVSync("room1", synced: true, syncTime: 310)
        _ = try s.upsertChatroomKV("room1", [ChatroomKVEntry(key: "k", value: "v", userId: "bob", updateTime: 305)])
        _ = try store(s, incoming("C", in: room, at: 320, from: "carol"))
    }

    func contents(_ s: IMStore) throws -> [String] {
        var out: [String] = []
        for key in [alice, team, room] {
            out += try s.snapshot(of: key).map { "\($0)" }
            out.append("\(try s.conversation(key).map { "\($0)" } ?? "none")")
        }
        out += try s.chatroomKV("room1").map { "\($0)" }
        out.append("\(try s.nextCounterValue("clientUniqueId"))")
        return out
    }

    @Test func recycledStoreAnswersAsAFreshCopy() throws {
        let template = try memoryStore()
        let used = try IMStore(copyOf: template)
        try use(used)
        let prepared = used.connection.cachedStatementCount
        let connection = try #require(used.retireForReuse())
        // The old object is retired: its calls throw.
        #expect(throws: StoreError.self) { try used.conversation(alice) }
        #expect(used.retireForReuse() == nil)

        let recycled = try IMStore(recycling: connection, options: .init(dedupByMessageUId: false))
        #expect(recycled.options.dedupByMessageUId == false)
        #expect(recycled.connection.cachedStatementCount >= prepared, "statements kept")
        let fresh = try IMStore(copyOf: template, options: .init(dedupByMessageUId: false))
        #expect(try contents(recycled) == (try contents(fresh)))
        #expect(try scalar(recycled, "SELECT COUNT(*) FROM messages") == 0)
        // Same ids again (AUTOINCREMENT forgotten), same rows after the same operations.
        try use(recycled)
        try use(fresh)
        #expect(try contents(recycled) == (try contents(fresh)))
        #expect(try recycled.snapshot(of: alice).map(\.messageId) == (try fresh.snapshot(of: alice).map(\.messageId)))
        #expect(try recycled.integrityProblems().isEmpty)
    }

    /// `Schema.emptyEveryTable` names every table of the schema (a new table must be emptied too).
    @Test func everyTableIsEmptied() throws {
        let s = try memoryStore()
        let st = try s.connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        var tables: [String] = []
        while try st.step() { tables.append(st.string(0)) }
        let emptied = Schema.emptyEveryTable.map { $0.description.replacingOccurrences(of: "DELETE FROM ", with: "") }.sorted()
        #expect(tables == emptied)
    }

    @Test func onlyAnOpenInMemoryStoreIsHandedOver() throws {
        let s = try memoryStore()
        s.close()
        #expect(s.retireForReuse() == nil)
    }
}
