import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The server's answer to a recall (RecallWindowOracle, "recall-window"): a sender's recall of its
/// own message within the window is accepted, one past it is refused (im-semantics §7). The
/// recall oracle judges only successful recalls, so a server that refuses valid ones (the
/// mutants `original.senderDeviceId != nil` → `== nil`, or a broken uid lookup) passed every
/// check. Staged by giving the server core, in the test only, a window other than the scenario's
/// (the oracle reads the scenario's).
@Suite struct RecallWindowOracleTests {
    /// alice sends to bob at 5 s and recalls it at 10 s; `window` is the scenario's recall window.
    func recallAfter5s(window: String = "120s") throws -> Scenario {
        try duo("recall-window", server: "{\"recallWindow\": \"\(window)\"}", script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "oops"},
            {"at": "10s", "device": "alice-phone", "action": "recall"}
            """)
    }

    static func isRecallResult(_ e: ClientEffect) -> Bool {
        if case .callback(.recallResult) = e { true } else { false }
    }

    @Test func recallWithinTheWindowClean() throws {
        let (run, tap) = try runOracles(recallAfter5s())
        expectClean(run)
        // The premise: the recall was answered, and accepted.
        let alice = try run.device("alice-phone")
        let result = try #require(tap.clientEffects(on: alice, Self.isRecallResult).first)
        guard case .callback(.recallResult(_, let error)) = result.effect else { return }
        #expect(error == nil)
    }

    /// A server whose window is 2 s: the recall 5 s after the send is refused, though the
    /// scenario (and the spec's default) allows 120 s.
    @Test func validRecallRefusedIsReported() throws {
        let (run, tap) = try runOracles(recallAfter5s(), prepare: QuotaOracleTests.serverConfig { $0.recallWindowMs = 2_000 })
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let result = try #require(tap.clientEffects(on: alice, Self.isRecallResult).first)
        guard case .callback(.recallResult(_, let error)) = result.effect else { return }
        #expect(error != nil)
        expectReport(v, oracle: "recall-window", device: "alice-phone", conversation: nil, index: result.index, time: result.time,
                     scenario: "recall-window")
        #expect(v.detail.contains("the server refused (status") && v.detail.contains("within the 120000 ms recall window"), "\(v.detail)")
        #expect(v.messageUId == tap.accepted.first?.messageUId)
    }

    /// Without this oracle the refusal passes every other check: the property was unchecked.
    @Test func validRecallRefusedPassesTheOtherOracles() throws {
        let others = Set(OracleOptions.allNames).subtracting([RecallWindowOracle.oracleName])
        let (run, _) = try runOracles(recallAfter5s(), enabled: others, prepare: QuotaOracleTests.serverConfig { $0.recallWindowMs = 2_000 })
        expectClean(run)
    }

    /// The scenario's window is 2 s but the server keeps 120 s: the recall at 10 s is accepted late.
    @Test func lateRecallAcceptedIsReported() throws {
        let (run, tap) = try runOracles(recallAfter5s(window: "2s"), prepare: QuotaOracleTests.serverConfig { $0.recallWindowMs = 120_000 })
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let result = try #require(tap.clientEffects(on: alice, Self.isRecallResult).first)
        expectReport(v, oracle: "recall-window", device: "alice-phone", conversation: nil, index: result.index, time: result.time,
                     scenario: "recall-window")
        #expect(v.detail.contains("the server accepted the recall") && v.detail.contains("outside the 2000 ms recall window"), "\(v.detail)")
    }

    /// With the 2 s window on both sides the late recall is refused: a correct refusal is clean.
    @Test func lateRecallRefusedClean() throws {
        let (run, tap) = try runOracles(recallAfter5s(window: "2s"))
        expectClean(run)
        let alice = try run.device("alice-phone")
        let result = try #require(tap.clientEffects(on: alice, Self.isRecallResult).first)
        guard case .callback(.recallResult(_, let error)) = result.effect else { return }
        #expect(error == ServerCore.recallRejectedCode)
    }
}
