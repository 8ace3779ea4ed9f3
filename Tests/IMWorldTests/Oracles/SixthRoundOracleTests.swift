import Foundation
import IMClient
import IMServer
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The checks added for the sixth round of mutants (Docs/mutants.md, "Sixth round"): one room at a
/// time (`one-room`), the KV refresh after a rejoin of a synced room (the attribute-sync rule of
/// `chatroom` and `imsim replay`), and the token errors against the scenario's token states
/// (`connect-outcome`). Each has a clean run and a violating one that the oracles before this round
/// let pass (the cores stay correct: what the oracle hears is rewritten, or the rule is fed by hand).
@Suite struct SixthRoundOracleTests {
    typealias Feed = FifthRoundOracleTests.Feed

    func fed(_ s: Scenario, _ name: String, _ make: (OracleSuite) -> any Oracle,
             _ feed: (any Oracle) -> Feed) throws -> (ScenarioRun, IndexedTap) {
        try FifthRoundOracleTests().fed(s, name, make, feed)
    }

    // MARK: one-room

    /// alice joins room a; joins it again just as her network goes (the second join fails, she
    /// stays in a, §6); the network comes back (rejoin); she joins room b: a is quit.
    func rooms() throws -> Scenario {
        try duo("one-room", duration: "30s", script: """
            {"at": "1s", "device": "alice-phone", "action": "join", "room": "a", "count": -1},
            {"at": "5s", "device": "alice-phone", "action": "join", "room": "a", "count": -1},
            {"at": "5s", "device": "alice-phone", "action": "network", "state": "none"},
            {"at": "7s", "device": "alice-phone", "action": "network", "state": "wifi"},
            {"at": "12s", "device": "alice-phone", "action": "join", "room": "b", "count": -1}
            """)
    }

    static func callback(_ e: ClientEffect) -> AppCallback? {
        if case .callback(let c) = e { c } else { nil }
    }

    static func isQuit(_ e: ClientEffect, _ room: String) -> Bool {
        if case .callback(.chatroomQuit(let r)) = e { r == room } else { false }
    }

    static func isConnectError(_ e: ClientEffect, _ code: IMErrorCode) -> Bool {
        if case .callback(.connectError(let c)) = e { c == code.rawValue } else { false }
    }

    @Test func joiningAnotherRoomQuitsTheFirstIsClean() throws {
        let (run, tap) = try runOracles(rooms())
        expectClean(run)
        // The premise: the second join of a failed (the network went), a stayed; the join of b
        // told chatroomQuit(a) in the same input as chatroomJoined(b).
        let alice = try run.device("alice-phone")
        let calls = tap.clientEffects(on: alice) { Self.callback($0) != nil }
        #expect(calls.contains { if case .callback(.chatroomJoinFailed("a", _)) = $0.effect { true } else { false } })
        let joinedB = try #require(calls.first { if case .callback(.chatroomJoined("b")) = $0.effect { true } else { false } })
        #expect(calls.contains { $0.index == joinedB.index && Self.isQuit($0.effect, "a") })
    }

    @Test func stayingInTheFirstRoomIsReported() throws {
        // The core is right; the oracle is not told of the quit of a (as with a failed second
        // join never counted down: the room then looks pending and is not quit).
        let (run, _) = try fed(rooms(), OneRoomOracle.oracleName, { OneRoomOracle(suite: $0) }) { inner in
            Feed(inner, client: { $0.filter { !Self.isQuit($0, "a") } })
        }
        let v = try #require(run.violations.first)
        #expect(run.violations.count == 1, "\(run.violations.map(\.text))")
        #expect(v.oracle == OneRoomOracle.oracleName)
        #expect(v.device == "alice-phone")
        #expect(v.detail.contains("told chatroomJoined(b) while in chatroom a"))
    }

    // MARK: attribute refresh after a rejoin (fed by hand)

    static let s: Int64 = 1_000_000_000

    /// A joined and synced room, its connection lost and a new one rejoining it: returns the rule
    /// right after the rejoin's answer was read.
    func rejoinedSynced() -> AttributeSyncRule {
        var r = AttributeSyncRule(requestTimeoutNanoseconds: 30 * Self.s)
        r.input(.api(.joinChatroom(roomId: "r", messageCount: 10)), inbound: [], at: 1 * Self.s)
        _ = r.effects([.callback(.chatroomJoined(roomId: "r")),
                       .send([], frames: [OutgoingFrame(type: .query, messageId: 5, topic: Topic.pullKV.rawValue)])], at: 1 * Self.s)
        r.input(.transport(.bytes([])), inbound: [.queryAck(Frame.QueryAck(messageId: 5, date: 0))], at: 2 * Self.s)
        _ = r.effects([.callback(.chatroomKVSynced(roomId: "r"))], at: 2 * Self.s)
        r.input(.transport(.closed(.reset)), inbound: [], at: 10 * Self.s)
        r.input(.transport(.opened), inbound: [], at: 11 * Self.s)
        _ = r.effects([.send([], frames: [OutgoingFrame(type: .query, messageId: 7, topic: Topic.joinChrmR.rawValue)])], at: 11 * Self.s)
        r.input(.transport(.bytes([])), inbound: [.queryAck(Frame.QueryAck(messageId: 7, date: 0))], at: 12 * Self.s)
        return r
    }

    @Test func rejoinThatRefreshesIsClean() {
        var r = rejoinedSynced()
        _ = r.effects([.send([], frames: [OutgoingFrame(type: .query, messageId: 8, topic: Topic.pullKV.rawValue)])], at: 12 * Self.s)
        #expect(r.nextDue == nil)
        #expect(r.due(at: 100 * Self.s).isEmpty)
    }

    @Test func rejoinWithoutRefreshIsReported() throws {
        var r = rejoinedSynced()
        _ = r.effects([], at: 12 * Self.s)
        #expect(r.nextDue == 12 * Self.s + AttributeSyncRule.grace)
        #expect(r.due(at: 12 * Self.s + AttributeSyncRule.grace - 1).isEmpty)
        let f = try #require(r.due(at: 12 * Self.s + AttributeSyncRule.grace).first)
        #expect(f.room == "r" && f.refreshMissing && !f.readRefused && f.since == 12 * Self.s)
        #expect(f.detail(sinceText: "12s").contains("no pullKV followed"))
    }

    @Test func rejoinRefreshNotOwedWhenTheConnectionEnds() {
        var r = rejoinedSynced()
        _ = r.effects([], at: 12 * Self.s)
        r.input(.transport(.closed(.reset)), inbound: [], at: 20 * Self.s)
        #expect(r.due(at: 100 * Self.s).isEmpty)
    }

    /// A real run: alice's synced room survives a network loss and the rejoin refreshes it.
    @Test func realRejoinOfASyncedRoomIsClean() throws {
        let s = try duo("kv-refresh", duration: "60s", script: """
            {"at": "1s", "device": "alice-phone", "action": "join", "room": "r", "count": -1},
            {"at": "5s", "device": "alice-phone", "action": "network", "state": "none"},
            {"at": "7s", "device": "alice-phone", "action": "network", "state": "wifi"}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        let alice = try run.device("alice-phone")
        let synced = tap.clientEffects(on: alice) { if case .callback(.chatroomKVSynced("r")) = $0 { true } else { false } }
        #expect(synced.count == 1)
        let pullKVs = tap.clientEffects(on: alice) {
            if case .send(_, let frames) = $0 { frames.contains { $0.topic == Topic.pullKV.rawValue } } else { false }
        }
        // The post-join sync, and the refresh after the rejoin.
        #expect(pullKVs.count == 2)
        #expect(pullKVs.last.map { $0.time > .zero + .seconds(7) } == true)
    }

    // MARK: network loss heard before the socket fails (`noneNotified`)

    /// alice is connected when her network goes, the OS telling her app first (`noneNotified`);
    /// it comes back 2 s later.
    @Test func networkLossNotifiedFirstIsHandledAndClean() throws {
        let s = try duo("none-notified", duration: "20s", script: """
            {"at": "5s", "device": "alice-phone", "action": "network", "state": "noneNotified"},
            {"at": "7s", "device": "alice-phone", "action": "network", "state": "wifi"},
            {"at": "9s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "back"}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        let alice = try run.device("alice-phone")
        // The premise: the SDK heard of the network on a live connection (no socket error read)
        // and closed it itself in that input; it reconnected at once when the network came back.
        let heard = try #require(tap.clientInputs(on: alice) { if case .networkChanged(false) = $0 { true } else { false } }.first)
        #expect(heard.time == .zero + .seconds(5))
        #expect(tap.clientInputs(on: alice) { if case .transport(.closed) = $0 { true } else { false } }.isEmpty)
        #expect(tap.clientEffects(on: alice) { if case .closeConnection = $0 { true } else { false } }.contains { $0.index == heard.index })
        let opens = tap.clientEffects(on: alice) { isOpen($0) }.map(\.time)
        #expect(opens.count == 2 && opens.last == .zero + .seconds(7))
    }

    // MARK: connect-outcome: token errors

    /// carol's token is expired (the scenario says so): she is refused with 31020.
    func tokens() throws -> Scenario {
        try duo("tokens", extraUsers: #", {"id": "carol", "token": "expired", "devices": [{"id": "carol-phone"}]}"#,
                script: #"{"at": "2s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hi"}"#)
    }

    @Test func tokenErrorsAsTheScenarioSaysAreClean() throws {
        let (run, tap) = try runOracles(tokens())
        expectClean(run)
        let carol = try run.device("carol-phone")
        #expect(tap.clientEffects(on: carol) { Self.isConnectError($0, .tokenExpired) }.count == 1)
    }

    @Test func validTokenRefusedIsReported() throws {
        // alice's valid token answered as incorrect (as a length check off by one would).
        let (run, _) = try fed(tokens(), ConnectOutcomeOracle.oracleName, { ConnectOutcomeOracle(suite: $0) }) { inner in
            Feed(inner, client: { $0.map { if case .callback(.connected) = $0 { .callback(.connectError(code: IMErrorCode.tokenIncorrect.rawValue)) } else { $0 } } })
        }
        let v = try #require(run.violations.first)
        #expect(run.violations.count == 1, "\(run.violations.map(\.text))")
        #expect(v.oracle == ConnectOutcomeOracle.oracleName && v.device == "alice-phone")
        #expect(v.detail.contains("31004") && v.detail.contains("alice's token is a valid one"))
    }

    @Test func expiredTokenCalledIncorrectIsReported() throws {
        let (run, _) = try fed(tokens(), ConnectOutcomeOracle.oracleName, { ConnectOutcomeOracle(suite: $0) }) { inner in
            Feed(inner, device: "carol-phone", client: { $0.map {
                Self.isConnectError($0, .tokenExpired)
                    ? .callback(.connectError(code: IMErrorCode.tokenIncorrect.rawValue)) : $0 } })
        }
        let v = try #require(run.violations.first)
        #expect(v.device == "carol-phone" && v.detail.contains("carol's token is expired"))
    }
}
