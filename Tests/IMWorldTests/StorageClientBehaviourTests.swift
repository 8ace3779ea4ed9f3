import Foundation
import IMClient
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

// Issue 28: the client core's answers to storage faults, driven by scripted storage faults
// (`powerLoss`, `ioError`, `diskFull` script actions) on device stores.

/// Checks, at each callback, the store against what the app is told.
private final class AppVsStore: WorldObserver {
    /// Successful sendResults: (messageId, messageUId, the row's status and UId at that moment).
    var sendOks: [(Int64, String, SentStatus?, String?)] = []
    /// chatroomQuit callbacks with the room's row count at that moment: (room, as the app reads
    /// it, as stored).
    var quits: [(String, Int, Int)] = []
    var storeErrors: [String] = []

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        let store = world.store(ofDevice: d)
        for e in effects {
            switch e {
            case .callback(.sendResult(let id, let uid?, _, nil)) where id != 0:
                let row = (try? store.message(id: id)) ?? nil
                sendOks.append((id, uid, row?.sentStatus, row?.messageUId))
            case .callback(.chatroomQuit(let room)):
                let key = ConversationKey(.chatroom, room)
                quits.append((room, world.appMessageCount(ofDevice: d, key) ?? -1, (try? store.messageCount(in: key)) ?? -1))
            case .note(.storeError(let op, _)):
                storeErrors.append(op)
            default:
                break
            }
        }
    }
}

private func storageScenario(bugs: [String] = [], script: String, duration: String = "60s") throws -> Scenario {
    try scenario("""
    {"name": "storage-client", "duration": "\(duration)",
     "users": [{"id": "alice", "devices": [{"id": "alice-phone", "startAt": "0s"}]},
               {"id": "bob", "devices": [{"id": "bob-phone", "startAt": "0s"}]}],
     "chatrooms": [{"id": "lobby", "members": ["alice", "bob"], "joinCount": 10}],
     "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0},
     "client": {"store": "device", "bugs": \(bugs)},
     "script": [\(script)],
     "liveness": {"deadline": "60s"}}
    """)
}

/// alice sends at 5 s; her store fails every write from 5.02 s (after the insert, before the
/// PUBACK at ~5.1 s) for 2 s; bob writes to her at 8 s.
private let sendScript = """
    {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hello"},
    {"at": "5020ms", "device": "alice-phone", "action": "ioError", "for": "2s"},
    {"at": "8s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "hi"},
    {"at": "20s", "device": "alice-phone", "action": "kill"},
    {"at": "21s", "device": "alice-phone", "action": "restart"}
    """

@Suite struct StorageClientBehaviourTests {
    @Test("a send whose SENT update fails is acknowledged only once the row says SENT")
    func sendAcknowledgedOnlyWhenRecorded() throws {
        let tap = AppVsStore()
        let run = try ScenarioRun(scenario: storageScenario(script: sendScript), seed: 1,
                                  oracles: OracleOptions(scenarioArgument: "storage-client"), observers: [tap])
        run.run()
        #expect(tap.storeErrors.contains("markSent"), "the I/O error window missed the PUBACK: \(tap.storeErrors)")
        let ok = try #require(tap.sendOks.first, "alice's send was never acknowledged")
        #expect(ok.2 == .sent && ok.3 == ok.1, "told sent while the row says \(String(describing: ok.2))")
        #expect(run.violations.isEmpty, "\(run.violations.map { "\($0.oracle): \($0.detail)" })")
    }

    @Test("B16: the send is acknowledged while the row still says SENDING; order and storage oracles see it")
    func b16AcknowledgesBeforeTheRowSaysSent() throws {
        let tap = AppVsStore()
        let run = try ScenarioRun(scenario: storageScenario(bugs: ["B16"], script: sendScript), seed: 1,
                                  oracles: OracleOptions(stopAtFirstViolation: false, scenarioArgument: "storage-client"), observers: [tap])
        run.run()
        let ok = try #require(tap.sendOks.first)
        #expect(ok.2 == .sending)
        #expect(run.violations.contains { $0.oracle == "order" })
        // After the kill the storage oracle finds the app's "sent" message without its messageUId.
        #expect(run.violations.contains { $0.oracle == "storage" && $0.detail.contains("app kill") })
    }

    /// The app is told at once; the rows it can no longer see go once the disk works (everyday-storage --swarm 9039).
    @Test("a chatroom quit whose delete fails is reported at once, the room read as empty, its rows removed later")
    func quitReportedAtOnce() throws {
        let tap = AppVsStore()
        let s = try storageScenario(script: """
            {"at": "5s", "device": "bob-phone", "action": "send", "to": "chatroom:lobby", "text": "one"},
            {"at": "6s", "device": "bob-phone", "action": "send", "to": "chatroom:lobby", "text": "two"},
            {"at": "10s", "device": "alice-phone", "action": "ioError", "for": "3s"},
            {"at": "11s", "device": "alice-phone", "action": "quit", "room": "lobby"},
            {"at": "15s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "still there?"}
            """)
        let run = try ScenarioRun(scenario: s, seed: 1, oracles: OracleOptions(scenarioArgument: "storage-client"), observers: [tap])
        run.run()
        #expect(tap.storeErrors.contains { $0.hasPrefix("quit chatroom") }, "\(tap.storeErrors)")
        #expect(tap.quits.map(\.0) == ["lobby"])
        #expect(tap.quits.allSatisfy { $0.1 == 0 }, "quit reported with rows the app still reads: \(tap.quits)")
        #expect(tap.quits.allSatisfy { $0.2 == 2 }, "the removal did not fail: \(tap.quits)")
        let alice = try #require(run.world.deviceIndex("alice-phone"))
        #expect(try run.world.store(ofDevice: alice).messageCount(in: ConversationKey(.chatroom, "lobby")) == 0)
        #expect(run.violations.isEmpty, "\(run.violations.map { "\($0.oracle): \($0.detail)" })")
    }

    @Test("a room page that could not be stored leaves no id in the join cache (everyday-storage --swarm seed 19)")
    func unstoredRoomPageIsNotRemembered() throws {
        // bob's room message reaches alice while her store fails every write; she re-enters the
        // room before the heartbeat's re-pull: the join pull must bring the message, not skip it
        // as already shown.
        let s = try storageScenario(script: """
            {"at": "4900ms", "device": "alice-phone", "action": "ioError", "for": "1s"},
            {"at": "5s", "device": "bob-phone", "action": "send", "to": "chatroom:lobby", "text": "one"},
            {"at": "8s", "device": "alice-phone", "action": "join", "room": "lobby"}
            """)
        let tap = AppVsStore()
        let run = try ScenarioRun(scenario: s, seed: 1, oracles: OracleOptions(scenarioArgument: "storage-client"), observers: [tap])
        run.run()
        #expect(tap.storeErrors.contains { $0.contains("chrmPull") || $0.contains("lobby") }, "the I/O error missed the pull: \(tap.storeErrors)")
        #expect(run.violations.isEmpty, "\(run.violations.map { "\($0.oracle): \($0.detail)" })")
    }

    @Test("own messages a power loss took back are stored again from their sendbox copies")
    func ownMessagesRestoredAfterPowerLoss() throws {
        let s = try storageScenario(script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "one"},
            {"at": "6s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "two"},
            {"at": "7s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "three"},
            {"at": "9s", "device": "alice-phone", "action": "powerLoss", "downFor": "5s"}
            """)
        let tap = Tap()
        let run = try ScenarioRun(scenario: s, seed: 1, oracles: OracleOptions(scenarioArgument: "storage-client"), observers: [tap])
        run.run()
        #expect(tap.notes.contains { if case .fault(.powerLoss, _, true, let detail) = $0.1 { detail.contains("script") } else { false } })
        #expect(run.violations.isEmpty, "\(run.violations.map { "\($0.oracle): \($0.detail)" })")
        // Every accepted message is on alice's phone, once.
        let store = run.world.store(ofDevice: 0)
        for m in tap.accepted where m.conversation.type == .privateChat {
            #expect(try store.countRows(withUId: m.messageUId) == 1, "\(m.messageUId) from \(m.senderUserId)")
        }
    }

    @Test("scripted storage faults parse, encode and refuse a bad entry")
    func scriptedStorageFaultsRoundTrip() throws {
        let s = try storageScenario(script: """
            {"at": "1s", "device": "alice-phone", "action": "powerLoss", "torn": true, "downFor": "3s"},
            {"at": "2s", "device": "alice-phone", "action": "diskFull", "for": "4s"},
            {"at": "3s", "device": "alice-phone", "action": "ioError", "for": "1s"}
            """)
        #expect(s.script.map(\.action) == [.powerLoss(torn: true, downFor: .seconds(3)),
                                           .storageFault(.diskFull, for: .seconds(4)), .storageFault(.ioError, for: .seconds(1))])
        let again = try Scenario.load(json: try JSONEncoder().encode(s))
        #expect(again.script == s.script)
        #expect(throws: (any Error).self) {
            try storageScenario(script: #"{"at": "1s", "device": "alice-phone", "action": "diskFull"}"#)
        }
        #expect(throws: (any Error).self) {
            try storageScenario(script: #"{"at": "1s", "action": "powerLoss"}"#)
        }
    }
}
