import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// Every SDK call that promises a result gets one (ApiAnswerOracle, "api-answer"): a send on a
/// link that went silent is answered by the link's death (heartbeat, im-semantics §5) or the
/// request timeout (30 s). A core that never answers — the early returns of `getChatroomKV`,
/// `recall`, `localHistory` … that `imsim bench mutants` generates — is staged by giving alice's
/// core, in the test only, a 10-minute request timeout and heartbeat (the oracle takes the
/// scenario's 30 s), so nothing ends the wait.
@Suite struct ApiAnswerOracleTests {
    /// alice's link goes half-open at 40 s; she sends at 41 s, reads her KV-less history at 42 s.
    func silentLink() throws -> Scenario {
        try duo("api-answer", duration: "3m", script: """
            {"at": "40s", "device": "alice-phone", "action": "halfOpen"},
            {"at": "41s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "anyone?"}
            """, deadline: "2m")
    }

    static func isSendCall(_ i: ClientInput) -> Bool { if case .api(.send) = i { true } else { false } }
    static func isSendResult(_ e: ClientEffect) -> Bool { if case .callback(.sendResult) = e { true } else { false } }

    @Test func answeredByTheLinksDeathClean() throws {
        let (run, tap) = try runOracles(silentLink())
        expectClean(run)
        // The premise: the send was answered (an error: the link died) within 40 s of the call.
        let alice = try run.device("alice-phone")
        let call = try #require(tap.clientInputs(on: alice, Self.isSendCall).first)
        let result = try #require(tap.clientEffects(on: alice, Self.isSendResult).first)
        guard case .callback(.sendResult(_, _, _, let error)) = result.effect else { return }
        #expect(error != nil)
        #expect(result.time - call.time <= .seconds(40))
    }

    @Test func neverAnsweredIsReported() throws {
        let force = HeartbeatOracleTests.ForceConfig { $0.requestTimeout = .seconds(600); $0.heartbeatInterval = .seconds(600) }
        let (run, tap) = try runOracles(silentLink(), enabled: [ApiAnswerOracle.oracleName], observers: [force])
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let call = try #require(tap.clientInputs(on: alice, Self.isSendCall).first)
        #expect(tap.clientEffects(on: alice, Self.isSendResult).isEmpty)
        // Reported at the first event after the call + 30 s request timeout + 10 s margin.
        let due = call.time + .seconds(40)
        let at = try #require(tap.events.first { $0.time > due })
        expectReport(v, oracle: "api-answer", device: "alice-phone", conversation: nil, index: at.index, time: at.time,
                     scenario: "api-answer")
        #expect(v.detail.contains("the app called send(") && v.detail.contains("was never given its result"), "\(v.detail)")
    }
}
