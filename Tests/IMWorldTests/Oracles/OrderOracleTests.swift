import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// order: every stored or sent message carries the server's dataTime; history pages are the
/// store's pages; at the end each conversation reads in server order.
@Suite struct OrderOracleTests {
    /// B4: alice's clock runs 10 s ahead and her message keeps the device time.
    func b4(_ on: Bool) throws -> Scenario {
        try duo("order-b4", client: bugs(on ? ["B4"] : []), alice: #""startAt": "0s", "clockOffset": "10s""#, script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hello"},
            {"at": "6s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "hi alice"}
            """)
    }

    @Test func b4OwnMessageWithDeviceTimeIsReportedAtItsSendResult() throws {
        let (run, tap) = try runOracles(b4(true))
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let results = tap.clientEffects(on: alice) { if case .callback(.sendResult(_, _?, _, nil)) = $0 { true } else { false } }
        let result = try #require(results.first)
        let m = try #require(tap.accepted.first)
        expectReport(v, oracle: "order", device: "alice-phone", conversation: ConversationKey(.privateChat, "bob"),
                     index: result.index, time: result.time, scenario: "order-b4")
        #expect(v.messageUId == m.messageUId)
        #expect(v.detail.contains("dataTime is \(m.dataTime)"), "\(v.detail)")
        // Before bob's reply: the violation is caught at alice's PUBACK, not at the end.
        #expect(result.time < SimTime.zero + .seconds(6))
        expectPath(v.path, contains: ["send on alice-phone", "server accepted from alice-phone", "sendResult ok on alice-phone"])
    }

    @Test func b4OffOwnMessageTakesServerTime() throws {
        let (run, tap) = try runOracles(b4(false))
        expectClean(run)
        let alice = try run.device("alice-phone")
        let rows = try run.world.store(ofDevice: alice).snapshot(of: ConversationKey(.privateChat, "bob"))
        #expect(rows.map(\.messageUId) == tap.accepted.map(\.messageUId))
        #expect(rows.map(\.sentTime) == tap.accepted.map(\.dataTime))
    }

    /// B5: a live message older than the page boundary arrives between two history pages; the
    /// offset pager skips a row on page 2.
    func b5(_ on: Bool) throws -> Scenario {
        try duo("order-b5", duration: "30s", client: bugs(on ? ["B5"] : []), script: """
            {"at": "9.99s", "device": "alice-phone", "action": "latencySpike", "factor": 160, "for": "9s"},
            {"at": "10s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "A"},
            {"at": "10.5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "mine", "count": 21, "interval": "250ms"},
            {"at": "17s", "device": "alice-phone", "action": "history", "conversation": "private:bob", "count": 20, "pages": 2, "interval": "2s"}
            """, deadline: "1m")
    }

    @Test func b5HistoryGapIsReportedAtThePageThatSkips() throws {
        let (run, tap) = try runOracles(b5(true))
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let pages = tap.clientEffects(on: alice) { if case .callback(.history) = $0 { true } else { false } }
        #expect(pages.count == 2)
        let page2 = try #require(pages.last)
        expectReport(v, oracle: "order", device: "alice-phone", conversation: ConversationKey(.privateChat, "bob"),
                     index: page2.index, time: page2.time, scenario: "order-b5")
        // The skipped row is alice's first message (the oldest of her 21), still unsent then
        // (her link is slow), so it has no messageUId yet: the report names its messageId.
        let mine = tap.clientEffects(on: alice) { if case .callback(.messageInserted) = $0 { true } else { false } }
            .compactMap { (o: IndexedTap.ClientOut) -> StoredMessage? in if case .callback(.messageInserted(let r)) = o.effect { r } else { nil } }
        #expect(mine.count == 21)
        let first = try #require(mine.first)
        #expect(v.detail.contains("skips messageId \(first.messageId): a gap"), "\(v.detail)")
        #expect(v.messageUId == nil)
    }

    @Test func b5OffPagesHaveNoGap() throws {
        let (run, tap) = try runOracles(b5(false))
        expectClean(run)
        let alice = try run.device("alice-phone")
        let pages = tap.clientEffects(on: alice) { if case .callback(.history) = $0 { true } else { false } }
            .map { (o: IndexedTap.ClientOut) -> [Int64] in if case .callback(.history(_, let page)) = o.effect { page.map(\.messageId) } else { [] } }
        // Two pages: the 20 newest, then the 2 oldest of bob's A and alice's 21 — nothing skipped.
        #expect(pages.map(\.count) == [20, 2])
        let all = try run.world.store(ofDevice: alice).snapshot(of: ConversationKey(.privateChat, "bob")).map(\.messageId)
        #expect(all.count == 22)
        #expect(Set(pages.joined()) == Set(all))
        #expect(tap.accepted.count == 22)
    }

    /// The end-of-run check: pages through each conversation and compares with server order.
    /// With only the order oracle on and continuing past the first violation, B4 is also caught
    /// there: alice's own "hello" (server-older) reads after bob's reply.
    @Test func finalCheckFindsHistoryAgainstServerOrder() throws {
        let (run, tap) = try runOracles(b4(true), stop: false, enabled: ["order"])
        #expect(run.world.phase == .finished)
        let finals = run.violations.filter { $0.detail.contains("against server order") }
        let v = try #require(finals.first, "\(run.violations.map(\.text))")
        let last = try #require(tap.events.last)
        expectReport(v, oracle: "order", device: "alice-phone", conversation: ConversationKey(.privateChat, "bob"),
                     index: last.index, time: run.world.now, scenario: "order-b4")
        // Newer-first: bob's reply (dataTime later) shown before alice's hello.
        #expect(v.messageUId == tap.accepted.first?.messageUId)
    }
}
