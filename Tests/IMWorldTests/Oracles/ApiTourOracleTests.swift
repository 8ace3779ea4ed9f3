import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The oracles written for the api-tour budget scenario (Docs/mutants.md, fourth round):
/// sensitive-word, remote-history, api-answer's joinExist rule and connect-outcome's time limit.
/// Each is run clean on a small scenario, then staged by rewriting what alice's app is told as the
/// oracle sees it (ConnectOutcomeOracleTests.Rewrite; the cores stay correct).
@Suite struct ApiTourOracleTests {
    /// Runs `s` with the suite's oracles off and one oracle fed alice-phone's rewritten effects.
    func rewritten(_ s: Scenario, _ name: String, _ make: (OracleSuite) -> any Oracle,
                   _ rewrite: @escaping ([ClientEffect]) -> [ClientEffect]) throws -> (ScenarioRun, IndexedTap) {
        let tap = IndexedTap()
        // The suite reports only enabled oracles: enable the one under test (the suite's own
        // instance hears the real effects and stays clean; the rewritten one reports).
        let run = try ScenarioRun(scenario: s, seed: 1, oracles: OracleOptions(enabled: [name], scenarioArgument: s.name),
                                  observers: [tap])
        let suite = try #require(run.suite)
        run.world.addObserver(ConnectOutcomeOracleTests.Rewrite(make(suite), rewrite))
        run.run(until: nil)
        return (run, tap)
    }

    static func received(_ e: ClientEffect) -> StoredMessage? {
        if case .callback(.received(let m, _, _, _)) = e { m } else { nil }
    }

    // MARK: sensitive-word

    /// bob sends alice a message with a sensitive word at 2 s and a plain one at 3 s.
    func sensitive() throws -> Scenario {
        try duo("sensitive", server: #"{"sensitiveWords": ["forbidden"]}"#, script: """
            {"at": "2s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "a forbidden word"},
            {"at": "3s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "hello"}
            """)
    }

    @Test func sensitiveWordDroppedClean() throws {
        let (run, tap) = try runOracles(sensitive())
        expectClean(run)
        // The premise: bob was told both were sent (with a messageUId); alice received only "hello".
        let bob = try run.device("bob-phone"), alice = try run.device("alice-phone")
        let results = tap.clientEffects(on: bob) { if case .callback(.sendResult) = $0 { true } else { false } }
        #expect(results.count == 2)
        for r in results { if case .callback(.sendResult(_, let uid, _, let error)) = r.effect { #expect(uid != nil && error == nil) } }
        let got = tap.clientEffects(on: alice) { Self.received($0) != nil }.compactMap { Self.received($0.effect)?.content }
        #expect(got.count == 1 && got[0].contains("hello"))
    }

    @Test func sensitiveWordDeliveredIsReported() throws {
        let (run, _) = try rewritten(sensitive(), SensitiveWordOracle.oracleName, { SensitiveWordOracle(suite: $0) }) { effects in
            effects.map { e in
                guard case .callback(.received(var m, let left, let offline, let more)) = e else { return e }
                m.content = m.content.replacingOccurrences(of: "hello", with: "forbidden")
                return .callback(.received(m, left: left, offline: offline, hasPackage: more))
            }
        }
        let v = try #require(run.violations.first)
        #expect(run.violations.count == 1)
        #expect(v.oracle == "sensitive-word" && v.device == "alice-phone", "\(v.text)")
        #expect(v.detail.contains("sensitive word \"forbidden\""), "\(v.detail)")
    }

    // MARK: remote-history

    /// alice sends bob 5 messages (2–6 s), bob one (7 s); alice reads the cloud history: the
    /// newest 3, the 2 before those (scrolling back), 2 before 4.5 s, 2 after 3.5 s, all before 2.5 s.
    func history() throws -> Scenario {
        try duo("remote", script: """
            {"at": "2s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "m", "count": 5, "interval": "1s"},
            {"at": "7s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "back"},
            {"at": "10s", "device": "alice-phone", "action": "remoteHistory", "conversation": "private:bob", "count": 3},
            {"at": "10.5s", "device": "alice-phone", "action": "remoteHistory", "conversation": "private:bob", "count": 2, "before": "previous"},
            {"at": "11s", "device": "alice-phone", "action": "remoteHistory", "conversation": "private:bob", "count": 2, "before": "4.5s"},
            {"at": "12s", "device": "alice-phone", "action": "remoteHistory", "conversation": "private:bob", "count": 2, "after": "3.5s"},
            {"at": "13s", "device": "alice-phone", "action": "remoteHistory", "conversation": "private:bob", "count": 50, "before": "2.5s"}
            """)
    }

    static func remote(_ e: ClientEffect) -> [StoredMessage]? {
        if case .callback(.remoteHistory(_, let msgs, nil)) = e { msgs } else { nil }
    }

    @Test func remoteHistoryClean() throws {
        let (run, tap) = try runOracles(history())
        expectClean(run)
        // The premise: pages of 3, 2 (continuing before the first), 2, 2 and 1 (only the first
        // message is before 2.5 s), ascending; the scroll-back page ends right before the first.
        let alice = try run.device("alice-phone")
        let pages = tap.clientEffects(on: alice) { Self.remote($0) != nil }.compactMap { Self.remote($0.effect) }
        #expect(pages.map(\.count) == [3, 2, 2, 2, 1])
        #expect(pages.count == 5 && pages[1].last!.sentTime < pages[0].first!.sentTime)
        #expect(pages[0].last?.senderUserId == "bob")
        for p in pages { #expect(p.map(\.sentTime) == p.map(\.sentTime).sorted()) }
    }

    @Test func remoteHistoryMissingNewestIsReported() throws {
        let (run, _) = try rewritten(history(), RemoteHistoryOracle.oracleName, { RemoteHistoryOracle(suite: $0) }) { effects in
            effects.map { e in
                guard case .callback(.remoteHistory(let c, let msgs, nil)) = e, msgs.count == 3 else { return e }
                return .callback(.remoteHistory(conversation: c, messages: Array(msgs.dropLast()), error: nil))
            }
        }
        let v = try #require(run.violations.first)
        #expect(run.violations.count == 1)
        #expect(v.oracle == "remote-history" && v.device == "alice-phone", "\(v.text)")
        #expect(v.detail.contains("did not reach the newest message before the cursor"), "\(v.detail)")
    }

    @Test func remoteHistoryBoundCrossedIsReported() throws {
        // The page "after 3.5 s" given one message from before the cursor (the page of 1).
        var first: StoredMessage?
        let (run, _) = try rewritten(history(), RemoteHistoryOracle.oracleName, { RemoteHistoryOracle(suite: $0) }) { effects in
            effects.map { e in
                guard case .callback(.remoteHistory(let c, let msgs, nil)) = e else { return e }
                if msgs.count == 3 { first = msgs.first; return e }
                guard msgs.count == 1, let f = first else { return e }
                return .callback(.remoteHistory(conversation: c, messages: msgs + [f], error: nil))
            }
        }
        let v = try #require(run.violations.first)
        #expect(v.oracle == "remote-history", "\(v.text)")
        #expect(v.detail.contains("outside the requested bound"), "\(v.detail)")
    }

    @Test func previousCursorParses() throws {
        let step = try JSONDecoder().decode(ScriptStep.self, from: Data(#"{"at": "1s", "device": "a", "action": "remoteHistory", "conversation": "private:b", "before": "previous"}"#.utf8))
        #expect(step.action == .remoteHistory(ConversationKey(.privateChat, "b"), count: 20, .previous))
        let again = try JSONDecoder().decode(ScriptStep.self, from: JSONEncoder().encode(step))
        #expect(again == step)
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(ScriptStep.self, from: Data(#"{"at": "1s", "device": "a", "action": "remoteHistory", "conversation": "private:b", "before": "previous", "after": "2s"}"#.utf8))
        }
    }

    // MARK: joinExist (api-answer) and the connect time limit (connect-outcome)

    /// alice joins the existing hall at 2 s and the missing "nowhere" at 4 s (join-existing only).
    func joins() throws -> Scenario {
        try duo("join-exist", extra: #", "chatrooms": [{"id": "hall", "members": ["bob"]}]"#, script: """
            {"at": "2s", "device": "alice-phone", "action": "joinExist", "room": "hall"},
            {"at": "4s", "device": "alice-phone", "action": "joinExist", "room": "nowhere"}
            """)
    }

    @Test func joinExistClean() throws {
        let (run, tap) = try runOracles(joins())
        expectClean(run)
        let alice = try run.device("alice-phone")
        let failed = tap.clientEffects(on: alice) {
            if case .callback(.chatroomJoinFailed("nowhere", IMErrorCode.chatroomNotExist.rawValue)) = $0 { true } else { false }
        }
        let joined = tap.clientEffects(on: alice) { if case .callback(.chatroomJoined("hall")) = $0 { true } else { false } }
        #expect(failed.count == 1 && joined.count == 1)
    }

    @Test func joinExistOfMissingRoomJoinedIsReported() throws {
        let (run, _) = try rewritten(joins(), ApiAnswerOracle.oracleName, { ApiAnswerOracle(suite: $0) }) { effects in
            effects.map { e in
                if case .callback(.chatroomJoinFailed("nowhere", _)) = e { return .callback(.chatroomJoined(roomId: "nowhere")) }
                return e
            }
        }
        let v = try #require(run.violations.first)
        #expect(run.violations.count == 1)
        #expect(v.oracle == "api-answer" && v.conversation == ConversationKey(.chatroom, "nowhere").description, "\(v.text)")
        #expect(v.detail.contains("the answer is 23410"), "\(v.detail)")
    }

    /// alice has no network; she calls connect(timeLimit: 5) at 1 s.
    func timeLimit() throws -> Scenario {
        try duo("time-limit", duration: "30s", alice: #""startAt": "0s", "autoConnect": false"#, script: """
            {"at": "500ms", "device": "alice-phone", "action": "network", "state": "none"},
            {"at": "1s", "device": "alice-phone", "action": "connect", "timeLimit": 5},
            {"at": "20s", "device": "alice-phone", "action": "network", "state": "wifi"}
            """)
    }

    static func isLimit(_ e: ClientEffect) -> Bool {
        if case .callback(.connectError(IMErrorCode.connectTimeLimit.rawValue)) = e { true } else { false }
    }

    @Test func connectTimeLimitClean() throws {
        let (run, tap) = try runOracles(timeLimit())
        expectClean(run)
        let alice = try run.device("alice-phone")
        let err = try #require(tap.clientEffects(on: alice, Self.isLimit).first)
        #expect(err.time >= SimTime.zero + .seconds(6) && err.time < SimTime.zero + .seconds(7))
    }

    @Test func connectTimeLimitNeverAnsweredIsReported() throws {
        let (run, _) = try rewritten(timeLimit(), ConnectOutcomeOracle.oracleName, { ConnectOutcomeOracle(suite: $0) }) { effects in
            // The SDK says nothing: neither the error nor the status that it stopped.
            effects.filter { e in
                if Self.isLimit(e) { return false }
                if case .callback(.connectionStatus) = e { return false }
                return true
            }
        }
        let v = try #require(run.violations.first)
        #expect(run.violations.count == 1)
        #expect(v.oracle == "connect-outcome" && v.detail.contains("has no outcome"), "\(v.detail)")
        // Due after 5 s × 1.1 + 5 s from the call at 1 s.
        #expect(v.timeNanoseconds > (SimTime.zero + .milliseconds(11_500)).nanoseconds)
    }
}
