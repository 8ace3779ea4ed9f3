import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// "Sometimes" counters: what a run exercised.
@Suite struct CoverageCounterTests {
    @Test func countsWhatHappened() throws {
        // A reset that loses a PUBACK, a resend absorbed by the server, a quota drop in a room.
        let s = try duo("coverage", server: #"{"multiDeviceSync": false, "chatroom": {"quotaCapacity": 4, "quotaReservedHigh": 2}}"#,
                        extra: #", "chatrooms": [{"id": "hall", "members": ["alice", "bob"], "joinCount": 10}]"#, script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "are you there?"},
            {"at": "5.07s", "device": "alice-phone", "action": "reset"},
            {"at": "8s", "device": "alice-phone", "action": "resend"},
            {"at": "10s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "burst", "count": 5, "interval": "10ms"}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        let c = try #require(run.suite?.coverage.counts)
        #expect(c["fault: reset"] == 1)
        #expect(c["resend"] == 1)
        #expect(c["idempotent accept"] == 1)
        #expect(c["drop: chatroomQuota"] == 1)
        #expect(c["chatroom message"] == 5)
        #expect(c["connection closed: reset"] == 1)
        #expect((c["reconnect scheduled"] ?? 0) >= 1)
        // The counters agree with the events they count.
        #expect(c["chatroom message"] == tap.accepted.filter { $0.conversation.type == .chatroom }.count)
        #expect(c["drop: chatroomQuota"] == tap.drops.filter { $0.reason == .chatroomQuota }.count)
        #expect(c["server restart"] == nil && c["chatroom kicked"] == nil)
    }

    @Test func quietRunCountsNoFaults() throws {
        let s = try duo("coverage-quiet", script: #"{"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hi"}"#)
        let (run, _) = try runOracles(s)
        expectClean(run)
        let suite = try #require(run.suite)
        #expect(!suite.coverage.counts.keys.contains { $0.hasPrefix("fault: ") || $0.hasPrefix("drop: ") })
        #expect(suite.coverage.counts["resend"] == nil)
        // Sorted by name, for a stable print-out.
        let names = suite.coverage.sorted.map(\.0)
        #expect(names == names.sorted())
        #expect(suite.coverage.sorted.allSatisfy { $0.1 > 0 })
    }

    @Test func sameSeedSameCounters() throws {
        let (s, _) = try Scenario.load(pathOrName: "quickstart")
        func counts() throws -> [String: Int] {
            let run = try ScenarioRun(scenario: s, seed: 5, oracles: OracleOptions(scenarioArgument: "quickstart"))
            run.run(until: SimTime.zero + .seconds(60))
            return try #require(run.suite).coverage.counts
        }
        let a = try counts()
        #expect(!a.isEmpty)
        #expect(a == (try counts()))
    }

    /// A skip reason carries times and cursors; the counter is per kind of skip, not per value
    /// (regression: every skipped chatroom message made a counter of its own).
    @Test func skipReasonsAreCountedByKind() throws {
        let s = try duo("coverage-skips", script: #"{"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hi"}"#)
        let hook = Hook()
        let (run, _) = try runOracles(s, observers: [hook]) { run in
            let suite = try #require(run.suite)
            var done = false
            hook.onDispatch = { world, event in
                guard !done, event.time >= SimTime.zero + .seconds(3) else { return }
                done = true
                let room = ConversationKey(.chatroom, "hall")
                suite.world(world, device: 0, applied: AppliedClientEffects([
                    .note(.skipped(messageUId: "U1", conversation: room, reason: "dataTime 1767225679701 older than room cursor 1767225683758")),
                    .note(.skipped(messageUId: "U2", conversation: room, reason: "dataTime 1767225681041 older than room cursor 1767225683760")),
                    .note(.skipped(messageUId: nil, conversation: room, reason: "s_msg during pull")),
                ]))
            }
        }
        expectClean(run)
        let c = try #require(run.suite?.coverage.counts)
        #expect(c["skipped: dataTime N older than room cursor N"] == 2)
        #expect(c["skipped: s_msg during pull"] == 1)
        #expect(!c.keys.contains { $0.contains("1767") })
        #expect(Coverage.shape("chatroom s_ntf time 12 ≤ room cursor 345") == "chatroom s_ntf time N ≤ room cursor N")
    }

    /// The issue's "a reconnect during a pull" and "a same-ms page boundary". carol and bob write
    /// to alice in the same millisecond (equal dataTimes allowed) while she is offline; her pull
    /// pages hold 1 message, but the pager takes the equal-dataTime run whole. The connection is
    /// reset while she is still pulling her backlog.
    @Test func reconnectDuringAPullAndSameMsPageBoundary() throws {
        let s = try duo("coverage-pull", server: #"{"pullPageSize": 1, "allowEqualDataTime": true}"#,
                        alice: #""autoConnect": false"#, extraUsers: #", {"id": "carol", "devices": [{"id": "carol-phone", "startAt": "0s"}]}"#,
                        script: """
            {"at": "2s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "same ms"},
            {"at": "2s", "device": "carol-phone", "action": "send", "to": "private:alice", "text": "same ms"},
            {"at": "3s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "later", "count": 4, "interval": "250ms"},
            {"at": "10s", "device": "alice-phone", "action": "connect"},
            {"at": "10.35s", "device": "alice-phone", "action": "reset"}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        let c = try #require(run.suite?.coverage.counts)
        #expect(tap.accepted.count == 6)
        #expect(tap.accepted[0].dataTime == tap.accepted[1].dataTime)
        #expect((c["same-ms page boundary"] ?? 0) >= 1, "\(c)")
        #expect(c["reconnect during a pull"] == 1, "\(c)")
        let alice = try run.device("alice-phone")
        for m in tap.accepted { #expect(tap.stores(of: m.messageUId, on: alice).count == 1) }
    }

    @Test func plainRunHasNeitherPullCounter() throws {
        let s = try duo("coverage-plain", script: #"{"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hi"}"#)
        let (run, _) = try runOracles(s)
        expectClean(run)
        let c = try #require(run.suite?.coverage.counts)
        #expect(c["same-ms page boundary"] == nil && c["reconnect during a pull"] == nil)
    }
}
