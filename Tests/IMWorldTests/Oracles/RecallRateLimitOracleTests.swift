import Foundation
import IMClient
import IMServer
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// A recall is a message (`RC:RcCmd`), so the send rate (im-semantics §2: 5 per second → 20604)
/// applies to it. busy-room seeds 84, 116, 129, 167 and 187 (every switch off) were reported by
/// recall-window for a recall the server refused with 20604 right after five sends.
@Suite struct RecallRateLimitOracleTests {
    /// alice sends five messages at 5 s and recalls the last at 5.2 s: the sixth message within a second.
    func burstThenRecall() throws -> Scenario {
        try duo("recall-rate", script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "1"},
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "2"},
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "3"},
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "4"},
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "5"},
            {"at": "5.2s", "device": "alice-phone", "action": "recall"}
            """)
    }

    /// alice sends one message at 5 s and recalls it at 5.2 s.
    func oneThenRecall() throws -> Scenario {
        try duo("recall-rate", script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "1"},
            {"at": "5.2s", "device": "alice-phone", "action": "recall"}
            """)
    }

    func recallError(_ run: ScenarioRun, _ tap: IndexedTap) throws -> Int32? {
        let alice = try run.device("alice-phone")
        let r = try #require(tap.clientEffects(on: alice, RecallWindowOracleTests.isRecallResult).first)
        guard case .callback(.recallResult(_, let error)) = r.effect else { return nil }
        return error
    }

    @Test func aRecallTheSendRateRefusesIsClean() throws {
        let (run, tap) = try runOracles(burstThenRecall())
        #expect(try recallError(run, tap) == 20604)   // the premise: the limit refused it
        expectClean(run)
    }

    /// A server whose limit is 1 per second (the test changes only the core; the scenario, and the
    /// oracle, say 5): the recall after a single send is refused with 20604 — not explained.
    @Test func a20604WithoutTheSendsIsReported() throws {
        let (run, tap) = try runOracles(oneThenRecall(), prepare: QuotaOracleTests.serverConfig { $0.rateLimitPerSecond = 1 })
        #expect(try recallError(run, tap) == 20604)
        let v = try onlyViolation(run)
        #expect(v.oracle == "recall-window")
        #expect(v.detail.contains("the server refused (status 20604)"), "\(v.detail)")
    }
}
