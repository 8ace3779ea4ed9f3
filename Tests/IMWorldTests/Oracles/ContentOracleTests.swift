import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The app reads back what was sent (ContentOracle, "content"): rows shown by `onReceived` and
/// by local history pages carry the accepted message's type, sender, sentTime, content, direction
/// and conversation. A store that hands back another column (the `s.string(7)` → `s.string(8)`
/// kind of mistake in row decoding) is staged by rewriting bob's row before he reads his history.
@Suite struct ContentOracleTests {
    func chat() throws -> Scenario {
        try duo("content", script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "one"},
            {"at": "6s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "two"},
            {"at": "7s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "three"},
            {"at": "10s", "device": "bob-phone", "action": "history", "conversation": "private:alice", "count": 20}
            """)
    }

    /// Rewrites, just before bob asks for his history, the content of his rows (as a decoder that
    /// read the wrong column would return them).
    final class CorruptBeforeHistory: WorldObserver {
        let column: String
        init(column: String) { self.column = column }
        func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
            guard world.deviceId(d) == "bob-phone", case .api(.getHistory) = input else { return }
            try? world.store(ofDevice: d).connection.execute("UPDATE messages SET \(column)")
        }
    }

    static func isHistory(_ e: ClientEffect) -> Bool { if case .callback(.history) = e { true } else { false } }

    @Test func historyShowsWhatWasSentClean() throws {
        let (run, tap) = try runOracles(chat())
        expectClean(run)
        let bob = try run.device("bob-phone")
        let page = try #require(tap.clientEffects(on: bob, Self.isHistory).first)
        guard case .callback(.history(_, let rows)) = page.effect else { return }
        // The premise: the page holds all three messages, with their texts.
        #expect(rows.count == 3)
        #expect(rows.allSatisfy { $0.content.contains("\"content\"") })
    }

    @Test func wrongContentOnAHistoryPageIsReported() throws {
        let (run, tap) = try runOracles(chat(), observers: [CorruptBeforeHistory(column: "content = '{\"content\":\"x\"}'")])
        let v = try onlyViolation(run)
        let bob = try run.device("bob-phone")
        let page = try #require(tap.clientEffects(on: bob, Self.isHistory).first)
        expectReport(v, oracle: "content", device: "bob-phone", conversation: ConversationKey(.privateChat, "alice"),
                     index: page.index, time: page.time, scenario: "content")
        #expect(v.detail.contains("a history page shows") && v.detail.contains("content of 15 bytes differs"), "\(v.detail)")
        #expect(tap.accepted.contains { $0.messageUId == v.messageUId })
    }

    @Test func wrongSentTimeOnAHistoryPageIsReported() throws {
        let (run, _) = try runOracles(chat(), observers: [CorruptBeforeHistory(column: "sentTime = sentTime + 1")])
        let v = try onlyViolation(run)
        #expect(v.oracle == "content" && v.device == "bob-phone")
        #expect(v.detail.contains("accepted at dataTime"), "\(v.detail)")
    }

    /// The other oracles do not read the content back: without this one the same run passes.
    @Test func wrongContentPassesTheOtherOracles() throws {
        let others = Set(OracleOptions.allNames).subtracting([ContentOracle.oracleName])
        let (run, _) = try runOracles(chat(), enabled: others, observers: [CorruptBeforeHistory(column: "content = '{\"content\":\"x\"}'")])
        expectClean(run)
    }
}
