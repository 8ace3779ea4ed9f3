import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// A room's attributes are readable while the app is in the room (KVReadOracle, "kv-read"). The
/// mutant `room.isJoined || room.needsRejoin` → `&&` (ClientCore.getChatroomKV) answered 23406
/// to every read in a joined room and nothing checked it. Staged by rewriting alice's answer the
/// oracle sees (ConnectOutcomeOracleTests.Rewrite; the core stays correct).
@Suite struct KVReadOracleTests {
    static let room = #", "chatrooms": [{"id": "hall", "members": ["bob"]}]"#

    /// alice joins the hall at 2 s, reads its attributes at 6 s, quits at 8 s and reads again at 10 s.
    func readInAndOut() throws -> Scenario {
        try duo("kv-read", extra: Self.room, script: """
            {"at": "2s", "device": "alice-phone", "action": "join", "room": "hall"},
            {"at": "6s", "device": "alice-phone", "action": "getKV", "room": "hall"},
            {"at": "8s", "device": "alice-phone", "action": "quit", "room": "hall"},
            {"at": "10s", "device": "alice-phone", "action": "getKV", "room": "hall"}
            """)
    }

    static func kvAnswer(_ e: ClientEffect) -> Int32?? {
        if case .callback(.chatroomKV(_, _, let error)) = e { .some(error) } else { nil }
    }

    @Test func readInTheRoomAndAfterQuitClean() throws {
        let (run, tap) = try runOracles(readInAndOut())
        expectClean(run)
        // The premise: the read in the room succeeded, the one after the quit got 23406.
        let alice = try run.device("alice-phone")
        let answers = tap.clientEffects(on: alice) { Self.kvAnswer($0) != nil }.compactMap { Self.kvAnswer($0.effect) }
        #expect(answers == [nil, IMErrorCode.notInChatroom.rawValue])
    }

    @Test func notInRoomWhileInItIsReported() throws {
        let s = try readInAndOut()
        let tap = IndexedTap()
        let run = try ScenarioRun(scenario: s, seed: 1, oracles: OracleOptions(enabled: [KVReadOracle.oracleName], scenarioArgument: s.name), observers: [tap])
        let suite = try #require(run.suite)
        run.world.addObserver(ConnectOutcomeOracleTests.Rewrite(KVReadOracle(suite: suite)) { effects in
            effects.map { e in
                if case .callback(.chatroomKV(let room, _, _)) = e {
                    return .callback(.chatroomKV(roomId: room, entries: [], error: IMErrorCode.notInChatroom.rawValue))
                }
                return e
            }
        })
        run.run(until: nil)
        let v = try #require(run.violations.first)
        #expect(run.violations.count == 1)
        let alice = try run.device("alice-phone")
        let read = try #require(tap.clientEffects(on: alice) { Self.kvAnswer($0) != nil }.first)
        expectReport(v, oracle: "kv-read", device: "alice-phone", conversation: ConversationKey(.chatroom, "hall"),
                     index: read.index, time: read.time, scenario: "kv-read")
        #expect(v.detail.contains("answered 23406") && v.detail.contains("never that it left"), "\(v.detail)")
    }

    /// Re-entering the room (a second join of it) and reading while that join awaits its answer:
    /// the user is still in the room (§6), so the read is answered (everyday seed 37 answered 23406
    /// before the client kept a re-joined room receiving).
    @Test func readDuringReEntryIsAnswered() throws {
        let s = try duo("kv-reentry", extra: Self.room, script: """
            {"at": "2s", "device": "alice-phone", "action": "join", "room": "hall"},
            {"at": "6s", "device": "alice-phone", "action": "join", "room": "hall"},
            {"at": "6.01s", "device": "alice-phone", "action": "getKV", "room": "hall"}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        let alice = try run.device("alice-phone")
        let answers = tap.clientEffects(on: alice) { Self.kvAnswer($0) != nil }.compactMap { Self.kvAnswer($0.effect) }
        #expect(answers == [nil])
    }
}
