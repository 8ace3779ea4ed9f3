import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// chatroom: join pull size, rejoin after every reconnect, local messages gone after quit, KV
/// synced after a join, and the quota never letting low priority into the reserved high slots.
@Suite struct ChatroomOracleTests {
    static let room = #", "chatrooms": [{"id": "hall", "members": ["alice", "bob"], "joinCount": 10}]"#
    static let hall = ConversationKey(.chatroom, "hall")

    static func connected(_ e: ClientEffect) -> Bool { if case .callback(.connectionStatus(.connected)) = e { true } else { false } }
    static func rejoinSent(_ e: ClientEffect) -> Bool {
        if case .send(_, let frames) = e { frames.contains { $0.topic == Topic.joinChrmR.rawValue } } else { false }
    }

    /// B6: a ping timeout during connect; the next reconnect sends no joinChrmR.
    func b6(_ on: Bool) throws -> Scenario {
        try duo("room-b6", duration: "40s", client: bugs(on ? ["B6"] : [], #""pingBeforeFirstPull": true"#), extra: Self.room, script: """
            {"at": "10s", "device": "alice-phone", "action": "network", "state": "none"},
            {"at": "10.5s", "device": "alice-phone", "action": "network", "state": "wifi"},
            {"at": "10.72s", "device": "alice-phone", "action": "halfOpen"},
            {"at": "25s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "anyone here?", "count": 3, "interval": "2s"}
            """)
    }

    /// The rejoin check fires at the first event 10 s after the session began.
    func expectNoRejoinReport(_ run: ScenarioRun, _ tap: IndexedTap, scenario: String) throws {
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let session = try #require(tap.clientEffects(on: alice, Self.connected).last { $0.time < SimTime(nanoseconds: v.timeNanoseconds) })
        #expect(tap.clientEffects(on: alice, Self.rejoinSent).allSatisfy { $0.time < session.time })
        let due = try #require(tap.firstEvent(atOrAfter: session.time + .seconds(10)))
        expectReport(v, oracle: "chatroom", device: "alice-phone", conversation: Self.hall, index: due.index, time: due.time, scenario: scenario)
        #expect(v.detail.contains("connected again at \(session.time) but never rejoined chatroom hall"), "\(v.detail)")
    }

    @Test func b6NoRejoinIsReported10sAfterTheSessionBegan() throws {
        let (run, tap) = try runOracles(b6(true))
        try expectNoRejoinReport(run, tap, scenario: "room-b6")
    }

    @Test func b6OffRejoinsAndReceives() throws {
        let (run, tap) = try runOracles(b6(false))
        expectClean(run)
        let alice = try run.device("alice-phone")
        #expect(!tap.clientEffects(on: alice, Self.rejoinSent).isEmpty)
        #expect(tap.accepted.count == 3)
        for m in tap.accepted { #expect(tap.stores(of: m.messageUId, on: alice).count == 1) }
    }

    /// B7: disconnect keeps the room state; the fresh connect never rejoins.
    func b7(_ on: Bool) throws -> Scenario {
        try duo("room-b7", duration: "40s", client: bugs(on ? ["B7"] : []), extra: Self.room, script: """
            {"at": "10s", "device": "alice-phone", "action": "disconnect"},
            {"at": "15s", "device": "alice-phone", "action": "connect"},
            {"at": "20s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "welcome back", "count": 3, "interval": "2s"}
            """)
    }

    @Test func b7StaleMembershipIsReported() throws {
        let (run, tap) = try runOracles(b7(true))
        try expectNoRejoinReport(run, tap, scenario: "room-b7")
    }

    @Test func b7OffQuitsAndJoinsAgain() throws {
        let (run, tap) = try runOracles(b7(false))
        expectClean(run)
        let alice = try run.device("alice-phone")
        #expect(!tap.clientEffects(on: alice) { if case .callback(.chatroomQuit("hall")) = $0 { true } else { false } }.isEmpty)
        for m in tap.accepted { #expect(tap.stores(of: m.messageUId, on: alice).count == 1) }
    }

    /// B8: a second join of the same room never pulls the attributes.
    func b8(_ on: Bool) throws -> Scenario {
        try duo("room-b8", duration: "60s", client: bugs(on ? ["B8"] : []), extra: Self.room, script: """
            {"at": "5s", "device": "bob-phone", "action": "setKV", "room": "hall", "key": "topic", "value": "launch day"},
            {"at": "10s", "device": "alice-phone", "action": "join", "room": "hall", "count": 10},
            {"at": "12s", "device": "alice-phone", "action": "getKV", "room": "hall"}
            """)
    }

    @Test func b8AttributesNeverSyncedIsReported40sAfterTheJoin() throws {
        let (run, tap) = try runOracles(b8(true))
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let join = try #require(tap.clientEffects(on: alice) { if case .callback(.chatroomJoined("hall")) = $0 { true } else { false } }.last)
        #expect(join.time > SimTime.zero + .seconds(10))
        let due = try #require(tap.firstEvent(atOrAfter: join.time + .seconds(40)))
        expectReport(v, oracle: "chatroom", device: "alice-phone", conversation: Self.hall, index: due.index, time: due.time, scenario: "room-b8")
        #expect(v.detail.contains("attributes still not synced"), "\(v.detail)")
    }

    @Test func b8OffSecondJoinSyncs() throws {
        let (run, tap) = try runOracles(b8(false))
        expectClean(run)
        let alice = try run.device("alice-phone")
        let reads = tap.clientEffects(on: alice) { if case .callback(.chatroomKV("hall", _, _)) = $0 { true } else { false } }
        let read = try #require(reads.first)
        guard case .callback(.chatroomKV(_, let entries, let error)) = read.effect else { return }
        #expect(error == nil)
        #expect(entries.map(\.key) == ["topic"])
    }

    /// B13: 4 slots per 200 ms (2 reserved high, 2 shared). Three likes (low) then two texts
    /// (high) in one window: the third like took a reserved slot, the second text is dropped.
    func b13(_ on: Bool) throws -> Scenario {
        try duo("room-b13", server: bugs(on ? ["B13"] : [], #""chatroom": {"quotaCapacity": 4, "quotaReservedHigh": 2, "lowPriorityTypes": ["App:Like"]}"#),
                extra: Self.room, script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "type": "App:Like", "content": "{\\"like\\":1}", "count": 3, "interval": "10ms"},
            {"at": "5.05s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "text": "important", "count": 2, "interval": "10ms"}
            """)
    }

    @Test func b13HighPriorityDropIsReportedAtItsAccept() throws {
        // The quota oracle reports B13 one message earlier (the third like let in); this test is about the chatroom oracle's own report.
        let (run, tap) = try runOracles(b13(true), enabled: Set(OracleOptions.allNames).subtracting([ChatroomQuotaOracle.oracleName]))
        let v = try onlyViolation(run)
        let quotaDrops = tap.serverEvents { if case .messageAccepted(let m) = $0 { m.droppedForEveryone == .chatroomQuota } else { false } }
        let drop = try #require(quotaDrops.first)
        guard case .event(.messageAccepted(let dropped)) = drop.effect else { return }
        let uid = dropped.messageUId
        let m = try #require(tap.accepted.first { $0.messageUId == uid })
        #expect(m.objectName == "RC:TxtMsg")
        #expect(m == tap.accepted.last)
        expectReport(v, oracle: "chatroom", device: "alice-phone", conversation: Self.hall, index: drop.index, time: drop.time, scenario: "room-b13")
        #expect(v.messageUId == uid)
        #expect(v.detail.contains("low took reserved high slots"), "\(v.detail)")
    }

    @Test func b13OffDropsTheThirdLike() throws {
        let (run, tap) = try runOracles(b13(false))
        expectClean(run)
        let dropped = tap.drops.filter { $0.reason == .chatroomQuota }.compactMap(\.uid)
        let likes = tap.accepted.filter { $0.objectName == "App:Like" }
        #expect(dropped == [likes[2].messageUId])
    }

    /// Join pull: asking for 2 of 5 returns the newest 2. A hand-made pull answer with only 1 is
    /// reported at the event it arrives in.
    func joinPull() throws -> Scenario {
        try duo("room-pull", extra: #", "chatrooms": [{"id": "hall", "members": ["bob"]}]"#, script: """
            {"at": "5s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "m", "count": 5, "interval": "100ms"},
            {"at": "8s", "device": "alice-phone", "action": "join", "room": "hall", "count": 2}
            """)
    }

    @Test func joinPullReturnsTheNewestCount() throws {
        let (run, tap) = try runOracles(joinPull())
        expectClean(run)
        let pulls = tap.serverEvents { if case .pulled(_, "alice", _, Topic.chrmPull.rawValue, _, _, _) = $0 { true } else { false } }
        guard case .event(.pulled(_, _, _, _, let uids, _, _))? = pulls.first?.effect else { Issue.record("no join pull"); return }
        #expect(uids == tap.accepted.suffix(2).map(\.messageUId))
    }

    static func joined(_ e: ClientEffect) -> Bool { if case .callback(.chatroomJoined("hall")) = e { true } else { false } }

    /// Feeds the chatroom oracle a hand-made answer to alice's join pull right when that pull goes
    /// out (with the `chatroomJoined` callback); the server's real answer then finds nothing
    /// awaited. `pick` chooses its messages from those accepted so far, oldest first.
    func handMadeJoinPull(_ pick: @escaping ([String]) -> [String]) throws -> (ScenarioRun, IndexedTap) {
        let hook = Hook()
        return try runOracles(joinPull(), observers: [hook]) { run in
            let o = try oracle(run, "chatroom")
            let alice = try run.device("alice-phone")
            var done = false
            hook.onClientEffects = { world, d, effects in
                guard d == alice, !done, effects.contains(where: Self.joined) else { return }
                done = true
                let accepted = run.suite!.paths.acceptedMessages.values.sorted { ($0.dataTime, $0.messageUId) < ($1.dataTime, $1.messageUId) }
                o.world(world, serverApplied: AppliedServerEffects([.event(.pulled(ConnectionID(999), userId: "alice", deviceId: "alice-phone", topic: Topic.chrmPull.rawValue,
                                                              messageUIds: pick(accepted.map(\.messageUId)), syncTime: 0, finished: true))]))
            }
        }
    }

    func joinSent(_ run: ScenarioRun, _ tap: IndexedTap) throws -> IndexedTap.ClientOut {
        try #require(tap.clientEffects(on: try run.device("alice-phone"), Self.joined).first)
    }

    @Test func joinPullWithTooFewIsReported() throws {
        let (run, tap) = try handMadeJoinPull { Array($0.suffix(1)) }
        let v = try onlyViolation(run)
        let join = try joinSent(run, tap)
        expectReport(v, oracle: "chatroom", device: "alice-phone", conversation: Self.hall, index: join.index, time: join.time, scenario: "room-pull")
        #expect(v.detail == "join pull with count 2 returned 1 message(s); the newest 2 were expected")
    }

    /// The right number of messages, but not the newest: the two oldest.
    @Test func joinPullWithTheOldestIsReported() throws {
        let (run, tap) = try handMadeJoinPull { Array($0.prefix(2)) }
        let v = try onlyViolation(run)
        let join = try joinSent(run, tap)
        expectReport(v, oracle: "chatroom", device: "alice-phone", conversation: Self.hall, index: join.index, time: join.time, scenario: "room-pull")
        #expect(v.detail.hasPrefix("join pull with count 2 returned 2 message(s)"), "\(v.detail)")
    }

    /// The newest two, hand-made: exactly what the server would answer.
    @Test func joinPullWithTheNewestIsClean() throws {
        let (run, _) = try handMadeJoinPull { Array($0.suffix(2)) }
        expectClean(run)
    }

    /// A regular chrmPull (for bob's 4th message) is still unanswered when alice's app joins
    /// another room, lounge (carol's, so it is not empty): the hall pull's answer (1 message)
    /// arrives after the joinChrm went out and is not the join pull's (lounge's newest 2).
    /// Regression: the oracle took the first chrmPull answer after a joinChrm for the join pull.
    /// (A join of the room one is already in no longer sends a join pull: it pulls from the cursor.)
    @Test func anEarlierPullAnsweredAfterTheJoinIsNotTheJoinPull() throws {
        let s = try duo("room-pull-race", extraUsers: #", {"id": "carol", "devices": [{"id": "carol-phone", "startAt": "0s"}]}"#,
                        extra: Self.room, script: """
            {"at": "0.5s", "device": "carol-phone", "action": "join", "room": "lounge", "count": 10},
            {"at": "1s", "device": "carol-phone", "action": "send", "to": "chatroom:lounge", "text": "l", "count": 2, "interval": "100ms"},
            {"at": "2s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "m", "count": 3, "interval": "1s"},
            {"at": "5s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "fourth"},
            {"at": "5.12s", "device": "alice-phone", "action": "join", "room": "lounge", "count": 10}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        let join = try #require(tap.clientEffects(on: try run.device("alice-phone")) {
            if case .send(_, let f) = $0 { f.contains { $0.topic == Topic.joinChrm.rawValue } } else { false } }.last)
        #expect(join.time == SimTime.zero + .milliseconds(5_120))
        let answers = tap.serverEvents { if case .pulled(_, _, "alice-phone", Topic.chrmPull.rawValue, _, _, _) = $0 { true } else { false } }
            .filter { $0.time > join.time }
            .compactMap { (o: IndexedTap.ServerOut) -> [String]? in if case .event(.pulled(_, _, _, _, let u, _, _)) = o.effect { u } else { nil } }
        #expect(tap.accepted.count == 6)
        // The race happened: first the old pull's answer (hall's 4th message), then the join pull's (lounge's 2).
        #expect(answers == [[tap.accepted[5].messageUId], tap.accepted.prefix(2).map(\.messageUId)])
    }

    /// alice is banned (1 s) while her pull for bob's message is on its way: the server refuses
    /// it (23406, no `pulled`). She joins again; bob's next message is pulled after her join
    /// pull. Regression: the refused pull stayed queued, so the join pull's answer was matched
    /// to it and the next regular pull's answer (1 message) was judged as the join pull.
    @Test func aRefusedPullDoesNotShiftTheJoinPull() throws {
        let s = try duo("room-pull-refused", extra: Self.room, script: """
            {"at": "5s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "first"},
            {"at": "5.12s", "action": "banChatroomUser", "room": "hall", "user": "alice", "for": "1s"},
            {"at": "8s", "device": "alice-phone", "action": "join", "room": "hall", "count": 10},
            {"at": "10s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "second", "count": 2, "interval": "1s"}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        // The race happened: alice's chrmPull was refused as not in the room.
        #expect(!tap.serverEvents { if case .queryRejected(_, "alice", Topic.chrmPull.rawValue, "hall", _) = $0 { true } else { false } }.isEmpty)
        let alice = try run.device("alice-phone")
        #expect(tap.clientEffects(on: alice, Self.joined).count == 2)
        for m in tap.accepted.dropFirst() { #expect(tap.stores(of: m.messageUId, on: alice).count == 1) }
    }

    /// Quit: the room's local messages are deleted. A hand-made `chatroomQuit` callback while they
    /// are still stored is reported; the real quit is clean.
    func quit() throws -> Scenario {
        try duo("room-quit", extra: Self.room, script: """
            {"at": "5s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "m", "count": 2, "interval": "100ms"},
            {"at": "8s", "device": "alice-phone", "action": "quit", "room": "hall"}
            """)
    }

    @Test func quitDeletesTheRoomsMessages() throws {
        let (run, tap) = try runOracles(quit())
        expectClean(run)
        let alice = try run.device("alice-phone")
        for m in tap.accepted { #expect(tap.stores(of: m.messageUId, on: alice).count == 1) }
        #expect(try run.world.store(ofDevice: alice).messageCount(in: Self.hall) == 0)
    }

    @Test func messagesLeftAfterQuitAreReported() throws {
        let hook = Hook()
        let t = SimTime.zero + .seconds(7)
        let (run, tap) = try runOracles(quit(), observers: [hook]) { run in
            let o = try oracle(run, "chatroom")
            let alice = try run.device("alice-phone")
            var done = false
            hook.onDispatch = { world, event in
                guard !done, event.time >= t else { return }
                done = true
                o.world(world, device: alice, applied: AppliedClientEffects([.callback(.chatroomQuit(roomId: "hall"))]))
            }
        }
        let v = try onlyViolation(run)
        let at = try #require(tap.firstEvent(atOrAfter: t))
        expectReport(v, oracle: "chatroom", device: "alice-phone", conversation: Self.hall, index: at.index, time: at.time, scenario: "room-quit")
        #expect(v.detail == "quit chatroom hall but 2 of its messages are still in the store")
    }
}

/// A message the server drops for everyone (a sensitive word) never enters the room's ring, so
/// the oracle's model of the ring must not lose its oldest entry to it.
@Suite struct ChatroomOracleDroppedMessageTests {
    func ring3() throws -> Scenario {
        try duo("room-ring-drop", server: #"{"sensitiveWords": ["forbidden"], "chatroom": {"historySize": 3}}"#,
                extra: #", "chatrooms": [{"id": "hall", "members": ["bob"]}]"#, script: """
            {"at": "5s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "m", "count": 3, "interval": "100ms"},
            {"at": "6s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "forbidden"},
            {"at": "8s", "device": "alice-phone", "action": "join", "room": "hall", "count": 3}
            """)
    }

    @Test func aDroppedMessageDoesNotPushTheOldestOutOfTheRing() throws {
        let (run, tap) = try runOracles(ring3())
        expectClean(run)
        let kept = tap.accepted.filter { $0.droppedForEveryone == nil }
        #expect(kept.count == 3)
        #expect(tap.accepted.count == 4)
        let pulls = tap.serverEvents { if case .pulled(_, "alice", _, Topic.chrmPull.rawValue, _, _, _) = $0 { true } else { false } }
        guard case .event(.pulled(_, _, _, _, let uids, _, _))? = pulls.first?.effect else { Issue.record("no join pull"); return }
        #expect(uids == kept.map(\.messageUId))
    }
}
