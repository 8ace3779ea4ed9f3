import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The app-view oracles (issue 21): unread-model, delivery-order, recall, resend — each with a
/// violating and a clean scripted run (seed 1, fixed 50 ms links), and where a hand-made mistake
/// is staged, the older oracle that did not see it.
@Suite struct AppViewOracleTests {
    static let aliceConv = ConversationKey(.privateChat, "alice")

    // MARK: unread-model

    /// B14: alice recalls a message bob has not read; bob's badge stays 2 although the app was
    /// told of 1 unread (the model: +1, +1, recalled −1).
    func b14(_ on: Bool) throws -> Scenario {
        try duo("model-b14", client: bugs(on ? ["B14"] : []), script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "first"},
            {"at": "6s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "oops"},
            {"at": "8s", "device": "alice-phone", "action": "recall"}
            """)
    }

    @Test func unreadModelReportsB14AtTheRecallCallback() throws {
        let (run, tap) = try runOracles(b14(true), enabled: [UnreadModelOracle.oracleName])
        let v = try onlyViolation(run)
        let bob = try run.device("bob-phone")
        let recalled = try #require(tap.clientEffects(on: bob) { if case .callback(.recalled) = $0 { true } else { false } }.first)
        expectReport(v, oracle: "unread-model", device: "bob-phone", conversation: Self.aliceConv,
                     index: recalled.index, time: recalled.time, scenario: "model-b14")
        #expect(v.detail.contains("shown is 2 but the app was told of 1"), "\(v.detail)")
    }

    @Test func unreadModelCleanWithoutB14() throws {
        let (run, _) = try runOracles(b14(false), enabled: [UnreadModelOracle.oracleName])
        expectClean(run)
    }

    /// Three messages; bob reads up to the second newest (`"message": 2`, the new explicit form),
    /// then reads his history. `markAll` stages a store that marks past the time it was asked
    /// (the hand-made mistake: `sentTime <= t` dropped from clearUnread).
    func readUpTo() throws -> Scenario {
        try duo("model-read", script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "one"},
            {"at": "6s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "two"},
            {"at": "7s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "three"},
            {"at": "9s", "device": "bob-phone", "action": "clearUnread", "conversation": "private:alice", "message": 2},
            {"at": "10s", "device": "bob-phone", "action": "history", "conversation": "private:alice", "count": 20}
            """)
    }

    /// Marks every message of the conversation read when the app asks for less.
    final class MarkAllRead: WorldObserver {
        func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
            if case .api(.clearUnread(let conv, _)) = input { _ = try? world.store(ofDevice: d).clearUnread(in: conv, upTo: .max) }
        }
    }

    @Test func readUpToAnExplicitMessageMarksExactlyTheMessagesUpToIt() throws {
        let (run, tap) = try runOracles(readUpTo())
        expectClean(run)
        let bob = try run.device("bob-phone")
        #expect(try run.world.store(ofDevice: bob).conversation(Self.aliceConv)?.unreadCount == 1)
        let page = tap.clientEffects(on: bob) { if case .callback(.history) = $0 { true } else { false } }
        guard case .callback(.history(_, let rows))? = page.first?.effect else { Issue.record("no history page"); return }
        #expect(rows.map { $0.receivedStatus.contains(.read) } == [false, true, true])
    }

    @Test func unreadModelCatchesAStoreMarkingPastTheTimeTheOldOracleMissed() throws {
        let (old, _) = try runOracles(readUpTo(), enabled: ["unread"], observers: [MarkAllRead()])
        expectClean(old)
        let (run, tap) = try runOracles(readUpTo(), enabled: [UnreadModelOracle.oracleName], observers: [MarkAllRead()])
        let v = try onlyViolation(run)
        let bob = try run.device("bob-phone")
        let call = try #require(tap.clientInputs(on: bob) { if case .api(.clearUnread) = $0 { true } else { false } }.first)
        expectReport(v, oracle: "unread-model", device: "bob-phone", conversation: Self.aliceConv,
                     index: call.index, time: call.time, scenario: "model-read")
        #expect(v.detail.contains("shown is 0 but the app was told of 1"), "\(v.detail)")
    }

    // MARK: delivery-order

    /// alice comes online at 10 s to three offline messages pulled one per page; bob keeps
    /// sending (5 messages, the send-rate limit) while she pulls. With B1 an `s_msg` accepted during the pull is shown before the
    /// older messages the next pages bring.
    func pullRace(_ b1: Bool) throws -> Scenario {
        try duo("order-b1", client: bugs(b1 ? ["B1"] : []), server: #"{"pullPageSize": 1}"#,
                alice: #""startAt": "10s""#, script: """
            {"at": "2s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "old", "count": 3, "interval": "1s"},
            {"at": "10s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "new", "count": 5, "interval": "40ms"}
            """)
    }

    @Test func deliveryOrderReportsAMessageShownAfterANewerOne() throws {
        let (old, _) = try runOracles(pullRace(true), enabled: ["order"])
        expectClean(old)
        let (run, tap) = try runOracles(pullRace(true), enabled: [DeliveryOrderOracle.oracleName])
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let received = tap.clientEffects(on: alice) { if case .callback(.received) = $0 { true } else { false } }
        // The violating callback: the first one older than one before it.
        var newest = Int64.min
        var at: IndexedTap.ClientOut?
        for r in received {
            guard case .callback(.received(let m, _, _, _)) = r.effect else { continue }
            if m.sentTime < newest { at = r; break }
            newest = m.sentTime
        }
        let bad = try #require(at)
        expectReport(v, oracle: "delivery-order", device: "alice-phone", conversation: ConversationKey(.privateChat, "bob"),
                     index: bad.index, time: bad.time, scenario: "order-b1")
        #expect(v.detail.contains("out of server order"))
    }

    @Test func deliveryOrderCleanWithoutB1() throws {
        let (run, tap) = try runOracles(pullRace(false))
        expectClean(run)
        let alice = try run.device("alice-phone")
        let times = tap.clientEffects(on: alice) { if case .callback(.received) = $0 { true } else { false } }
            .compactMap { if case .callback(.received(let m, _, _, _)) = $0.effect { m.sentTime } else { nil } }
        #expect(times.count == 8 && times == times.sorted(), "\(times)")
    }

    // MARK: recall

    /// alice sends from her phone (her pad gets the sync copy) and recalls it: bob's copy and
    /// the pad's copy must both become recall notices.
    func recallWorld() throws -> Scenario {
        try scenario("""
        {"name": "recall-copies", "duration": "20s",
         "users": [{"id": "alice", "devices": [{"id": "alice-phone", "startAt": "0s"}, {"id": "alice-pad", "startAt": "0s", "platform": "desktop"}]},
                   {"id": "bob", "devices": [{"id": "bob-phone", "startAt": "0s"}]}],
         "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0,
                     "bandwidthBytesPerSecond": null},
         "server": {"multiDeviceSync": true},
         "script": [
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "one"},
            {"at": "6s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "two"},
            {"at": "8s", "device": "alice-phone", "action": "recall", "conversation": "private:bob", "message": 2}],
         "liveness": {"deadline": "30s"}}
        """)
    }

    @Test func recallOfAnExplicitMessageReachesEveryCopy() throws {
        let (run, tap) = try runOracles(recallWorld())
        expectClean(run)
        let phone = try run.device("alice-phone"), pad = try run.device("alice-pad"), bob = try run.device("bob-phone")
        let first = try #require(tap.accepted.first { $0.objectName == "RC:TxtMsg" })
        // The explicit form recalled the older of the two ("message": 2), not the last sent.
        let recalls = tap.serverEvents { if case .recalled = $0 { true } else { false } }
        guard case .event(.recalled(let uid, _))? = recalls.first?.effect else { Issue.record("no recall"); return }
        #expect(recalls.count == 1 && uid == first.messageUId)
        for d in [phone, pad, bob] {
            let rows = try run.world.store(ofDevice: d).messages(withUId: uid)
            #expect(rows.count == 1 && rows.allSatisfy(\.isRecalled), "\(run.world.deviceId(d))")
        }
        #expect(!tap.clientEffects(on: pad) { if case .callback(.recalled) = $0 { true } else { false } }.isEmpty)
    }

    /// A copy the app was shown and never told was recalled is reported at the end (staged: the
    /// oracle is told of one more copy on the pad than the core had).
    @Test func recallReportsACopyNeverToldOfTheRecall() throws {
        let (run, tap) = try runOracles(recallWorld(), enabled: [RecallCopiesOracle.oracleName])
        expectClean(run)
        let suite = try #require(run.suite)
        let pad = try run.device("alice-pad")
        let uid = try #require(tap.accepted.first { $0.objectName == "RC:TxtMsg" }?.messageUId)
        let o = RecallCopiesOracle(suite: suite)
        var row = try #require(try run.world.store(ofDevice: pad).messages(withUId: uid).first)
        row.messageId = 999
        row.objectName = "RC:TxtMsg"
        o.world(run.world, device: pad, applied: AppliedClientEffects([.callback(.received(row, left: 0, offline: false, hasPackage: false))]))
        o.world(run.world, serverApplied: AppliedServerEffects([.event(.recalled(messageUId: uid, byUserId: "alice"))]))
        o.finalCheck(run.world)
        let v = try #require(run.violations.last)
        #expect(v.oracle == "recall" && v.device == "alice-pad" && v.messageUId == uid)
        #expect(v.detail.contains("still shows it as messageId 999"), "\(v.detail)")
    }

    // MARK: resend

    /// B2 (server idempotency off): the PUBACK is lost to a reset and the resend is accepted as a
    /// second message.
    func resend(_ b2: Bool) throws -> Scenario {
        try duo("resend-b2", server: bugs(b2 ? ["B2"] : [], "\"multiDeviceSync\": false"), script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "are you there?"},
            {"at": "5.07s", "device": "alice-phone", "action": "reset"},
            {"at": "8s", "device": "alice-phone", "action": "resend"}
            """)
    }

    @Test func resendThatBecomesASecondMessageIsReported() throws {
        let (run, tap) = try runOracles(resend(true), enabled: [ResendIdentityOracle.oracleName])
        let v = try onlyViolation(run)
        let accepts = tap.serverEvents { if case .messageAccepted = $0 { true } else { false } }
        let second = try #require(accepts.dropFirst().first)
        expectReport(v, oracle: "resend", device: "alice-phone", conversation: ConversationKey(.privateChat, "bob"),
                     index: second.index, time: second.time, scenario: "resend-b2")
        #expect(v.detail.contains("accepted 2 RC:TxtMsg") && v.detail.contains("created only 1"), "\(v.detail)")
    }

    @Test func resendAbsorbedIsClean() throws {
        let (run, tap) = try runOracles(resend(false))
        expectClean(run)
        #expect(tap.accepted.count == 1)
    }
}
