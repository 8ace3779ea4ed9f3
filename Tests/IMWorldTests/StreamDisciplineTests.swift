import Foundation
import IMClient
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The promises of Docs/world.md "Random streams": streams are keyed by component, kind and
/// entity id, so removing a user, enabling another fault kind or changing another link leaves
/// everything drawn for the rest as it was. Seeds are pinned.
@Suite struct StreamDisciplineTests {
    /// Watches workload events, the sends they make and random fault starts.
    final class Watch: WorldObserver {
        struct Workload: Equatable { var time: SimTime; var user: String; var kind: WorkloadKind }
        struct Send: Equatable { var time: SimTime; var device: String; var conversation: ConversationKey; var content: String }
        struct FaultStart: Equatable { var time: SimTime; var kind: FaultKind; var device: String }
        var workload: [Workload] = []
        var sends: [Send] = []
        var faultStarts: [FaultStart] = []
        var faultNotes: [(time: SimTime, kind: FaultKind, device: String, detail: String)] = []
        var firstOpen: [String: SimTime] = [:]

        func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
            switch event.payload {
            case .workload(let u, let kind) where u >= 0:
                workload.append(Workload(time: world.now, user: world.userIds[Int(u)], kind: kind))
            case .faultStart(let kind, let d):
                faultStarts.append(FaultStart(time: world.now, kind: kind, device: d >= 0 ? world.deviceId(Int(d)) : "server"))
            default: break
            }
        }
        func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {
            guard case .api(let call) = input else { return }
            switch call {
            case .send(let conv, _, let content, _, _):
                sends.append(Send(time: world.now, device: world.deviceId(device), conversation: conv, content: content))
            case .setChatroomKV(let room, let key, let value, _, _):
                sends.append(Send(time: world.now, device: world.deviceId(device), conversation: ConversationKey(.chatroom, room),
                                  content: "kv \(key)=\(value)"))
            default: break
            }
        }
        func world(_ world: World, note: WorldNote) {
            switch note {
            case .fault(let kind, let d, true, let detail):
                faultNotes.append((world.now, kind, d.map { world.deviceId($0) } ?? "server", detail))
            case .connectionOpened(_, let d):
                let id = world.deviceId(d)
                if firstOpen[id] == nil { firstOpen[id] = world.now }
            default: break
            }
        }
    }

    static func run(_ s: Scenario, seed: UInt64) throws -> Watch {
        let w = Watch()
        let world = try World(scenario: s, seed: seed)
        world.addObserver(w)
        world.run()
        return w
    }

    static let people = ["alice", "bob", "carol", "dave", "eve", "frank"]

    /// Six users (or five without `without`), two groups, a room, a busy workload, no faults.
    static func crowd(without: String? = nil) throws -> Scenario {
        let who = people.filter { $0 != without }
        func list(_ names: [String]) -> String { names.filter { $0 != without }.map { "\"\($0)\"" }.joined(separator: ", ") }
        let users = who.map { #"{"id": "\#($0)", "devices": [{"id": "\#($0)-phone"}]}"# }.joined(separator: ", ")
        return try scenario("""
        {"name": "crowd", "duration": "3m",
         "users": [\(users)],
         "groups": [{"id": "g1", "members": [\(list(["alice", "bob", "carol", "eve"]))]},
                    {"id": "g2", "members": [\(list(["bob", "dave", "frank", "eve"]))]}],
         "chatrooms": [{"id": "lobby", "members": [\(list(["alice", "carol", "eve", "frank"]))], "joinCount": 10}],
         "workload": {"privateRate": "3/min", "groupRate": "2/min", "chatroomRate": "2/min", "typingRate": "1/min",
                      "kvWriteRate": "1/min", "activeFraction": 0.9}}
        """)
    }

    @Test func removingAUserLeavesEveryOtherUsersWorkloadAsItWas() throws {
        for seed: UInt64 in [3, 17] {
            let all = try Self.run(try Self.crowd(), seed: seed)
            let without = try Self.run(try Self.crowd(without: "eve"), seed: seed)
            // Times and kinds of every other user's workload: identical.
            #expect(all.workload.filter { $0.user != "eve" } == without.workload)
            #expect(without.workload.count > 50)
            // Peers and contents: identical, except where eve was the peer picked (then another
            // peer is picked at the same moment with the same text).
            let toEve = ConversationKey(.privateChat, "eve")
            let kept = all.sends.filter { $0.device != "eve-phone" && $0.conversation != toEve }
            let eveTimes = Set(all.sends.filter { $0.conversation == toEve }.map(\.time))
            #expect(!eveTimes.isEmpty, "seed \(seed): nobody wrote to eve, the test shows nothing")
            let rest = without.sends.filter { !(eveTimes.contains($0.time) && $0.conversation.type == .privateChat) }
            #expect(rest == kept, "seed \(seed)")
            #expect(without.sends.count - rest.count == eveTimes.count)
        }
    }

    static func faulty(_ kinds: [String]) throws -> Scenario {
        let all = [
            "partition": #""partition": {"rate": "1/min", "duration": ["2s", "10s"]}"#,
            "reset": #""reset": {"rate": "2/min"}"#,
            "kill": #""kill": {"rate": "1/min", "duration": ["1s", "5s"]}"#,
            "clockStep": #""clockStep": {"rate": "1/min"}"#,
            "serverCrash": #""serverCrash": {"rate": "1/2min", "duration": ["1s", "3s"]}"#,
        ]
        let random = kinds.map { all[$0]! }.joined(separator: ", ")
        return try scenario("""
        {"name": "faulty", "duration": "5m",
         "users": [{"id": "alice", "devices": [{"id": "alice-phone"}, {"id": "alice-desktop", "platform": "desktop"}]},
                   {"id": "bob"}, {"id": "carol"}],
         "workload": {"privateRate": "2/min"},
         "faults": {"random": {\(random)}}}
        """)
    }

    @Test func enablingAnotherFaultKindLeavesThisKindsScheduleAsItWas() throws {
        let seed: UInt64 = 5
        let alone = try Self.run(try Self.faulty(["partition"]), seed: seed)
        let crowded = try Self.run(try Self.faulty(["partition", "reset", "kill", "clockStep", "serverCrash"]), seed: seed)
        let partitions = crowded.faultStarts.filter { $0.kind == .partition }
        #expect(alone.faultStarts == partitions)
        #expect(partitions.count >= 6)
        #expect(crowded.faultStarts.count > partitions.count)
        // Where a partition started in both runs, it lasted as long.
        var both = 0
        for n in crowded.faultNotes where n.kind == .partition {
            guard let a = alone.faultNotes.first(where: { $0.kind == .partition && $0.time == n.time && $0.device == n.device }) else { continue }
            #expect(a.detail == n.detail)
            both += 1
        }
        #expect(both >= 3)
    }

    static func links(aliceLatency: String) throws -> Scenario {
        try scenario("""
        {"name": "links", "duration": "1m",
         "users": [{"id": "alice", "devices": [{"id": "alice-phone", "network": {"latency": {"fixed": "\(aliceLatency)"}}}]},
                   {"id": "bob", "devices": [{"id": "bob-phone"}]}, {"id": "carol"}],
         "network": {"latency": {"logNormal": {"median": "40ms", "sigma": 0.5, "max": "3s"}}, "splitProbability": 0.3,
                     "refuseProbability": 0.2}}
        """)
    }

    @Test func changingOneLinksLatencyLeavesOtherLinksDrawsAsTheyWere() throws {
        let slow = try World(scenario: try Self.links(aliceLatency: "300ms"), seed: 9)
        let fast = try World(scenario: try Self.links(aliceLatency: "5ms"), seed: 9)
        // Draw alice's link first in one world and not at all in the other: bob's draws agree.
        for _ in 0..<50 { _ = slow.network.latency(slow.deviceIndex("alice-phone")!, toServer: true) }
        for id in ["bob-phone", "carol-phone"] {
            let a = (0..<100).map { i in slow.network.latency(slow.deviceIndex(id)!, toServer: i % 2 == 0) }
            let b = (0..<100).map { i in fast.network.latency(fast.deviceIndex(id)!, toServer: i % 2 == 0) }
            #expect(a == b, "\(id)")
            #expect(Set(a).count > 50)
        }
        // In a run: the other devices' first connection (start time, connect setup, uplink
        // latency and refusals drawn on their own links) opens at the same moment.
        let r1 = try Self.run(try Self.links(aliceLatency: "300ms"), seed: 9)
        let r2 = try Self.run(try Self.links(aliceLatency: "5ms"), seed: 9)
        #expect(r1.firstOpen["bob-phone"] != nil)
        #expect(r1.firstOpen["bob-phone"] == r2.firstOpen["bob-phone"])
        #expect(r1.firstOpen["carol-phone"] == r2.firstOpen["carol-phone"])
        #expect(r1.firstOpen["alice-phone"] != r2.firstOpen["alice-phone"])
    }

    @Test func rendezvousPickMovesOnlyThePicksOfTheRemovedElement() {
        let ids = (1...9).map { "u\($0)" }
        let fewer = ids.filter { $0 != "u4" }
        var moved = 0
        for seed: UInt64 in 1...300 {
            var a = RandomStream(seed: seed), b = RandomStream(seed: seed)
            let x = rendezvousPick(ids, hashes: ids.map { StableHash.fnv1a($0) }, &a)!
            let y = rendezvousPick(fewer, hashes: fewer.map { StableHash.fnv1a($0) }, &b)!
            if x == "u4" { moved += 1 } else { #expect(x == y) }
        }
        #expect(moved > 10 && moved < 70)
    }

    /// Skipping the random prefix (`randomFrom`) leaves every later occurrence as it was: the
    /// sends after it (times, peers, contents) and the partitions after it (times, devices,
    /// durations); nothing random runs before it.
    @Test func skippingTheRandomPrefixLeavesLaterOccurrencesAsTheyWere() throws {
        for seed: UInt64 in [3, 17] {
            let full = try Self.run(try Self.crowd(), seed: seed)
            var cut = try Self.crowd()
            cut.randomFrom = DurationValue(.minutes(1))
            let skipped = try Self.run(cut, seed: seed)
            let from = SimTime.zero + .minutes(1)
            #expect(skipped.sends.allSatisfy { $0.time >= from })
            #expect(skipped.sends == full.sends.filter { $0.time >= from }, "seed \(seed)")
            #expect(skipped.sends.count > 30)
            #expect(full.sends.count > skipped.sends.count)
        }
        var faulty = try Self.faulty(["partition", "reset"])
        let full = try Self.run(faulty, seed: 5)
        faulty.randomFrom = DurationValue(.minutes(2))
        let skipped = try Self.run(faulty, seed: 5)
        let from = SimTime.zero + .minutes(2)
        func partitions(_ w: Watch) -> [String] {
            w.faultNotes.filter { $0.kind == .partition && $0.time >= from }.map { "\($0.time) \($0.device) \($0.detail)" }
        }
        #expect(skipped.faultNotes.allSatisfy { $0.time >= from })
        #expect(partitions(skipped) == partitions(full))
        #expect(partitions(full).count >= 2)
    }

    /// A message keeps its recall decision whatever the user sent before it: without the group
    /// workload, the same private messages are recalled (each message's decisions come from its
    /// own stream, keyed by the message, not from a per-user stream drawn at every send result).
    @Test func aMessageKeepsItsRecallDecisionWhateverWasSentBefore() throws {
        final class Recalls: WorldObserver {
            var content: [String: [Int64: (SimTime, String)]] = [:]
            var recalled: [String] = []
            func world(_ world: World, device: Int, applied effects: AppliedClientEffects) {
                for case .callback(.messageInserted(let row)) in effects where row.conversation.type == .privateChat {
                    content[world.deviceId(device), default: [:]][row.messageId] = (world.now, row.content)
                }
            }
            func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {
                guard case .api(.recall(let id)) = input, let (t, c) = content[world.deviceId(device)]?[id] else { return }
                // Sent early enough that its recall (1–90 s later) happens in every run.
                if t < SimTime.zero + .seconds(80) { recalled.append(c) }
            }
        }
        func run(groups: Bool) throws -> [String] {
            var s = try Self.crowd()
            s.workload?.recallProbability = ProbabilityValue(0.3)
            if !groups { s.workload?.groupRate = nil }
            let r = Recalls()
            let world = try World(scenario: s, seed: 11)
            world.addObserver(r)
            world.run()
            return r.recalled.sorted()
        }
        let with = try run(groups: true), without = try run(groups: false)
        #expect(with == without)
        #expect(with.count >= 3)
    }

    /// A link's draws do not depend on the traffic it carried before: bob receives alice's
    /// messages at the same moments (same downlink latency, same segmentation) whether or not
    /// carol also wrote to him. With one sequential stream per link, every message of carol's
    /// consumed bob's draws and moved the arrival of each later message of alice's.
    @Test func aLinksDrawsDoNotDependOnItsEarlierTraffic() throws {
        final class Arrivals: WorldObserver {
            var times: [String: [SimTime]] = [:]
            func world(_ world: World, device: Int, applied: AppliedClientEffects) {
                let effects = applied.effects
                guard world.deviceId(device) == "bob-phone" else { return }
                for case .callback(.received(let m, _, _, _)) in effects { times[m.senderUserId, default: []].append(world.now) }
            }
        }
        func run(withCarol: Bool) throws -> Arrivals {
            let carol = withCarol ? #", {"id": "carol"}"# : ""
            let carolSends = withCarol
                ? #"{"at": "10s", "device": "carol-phone", "action": "send", "to": "private:bob", "text": "from carol", "count": 30, "interval": "3s"}, "#
                : ""
            let s = try scenario("""
            {"name": "link-traffic", "duration": "2m",
             "users": [{"id": "alice"}, {"id": "bob"}\(carol)],
             "network": {"latency": {"logNormal": {"median": "40ms", "sigma": 0.5, "max": "3s"}}, "splitProbability": 0.5},
             "script": [\(carolSends){"at": "11500ms", "device": "alice-phone", "action": "send", "to": "private:bob",
                         "text": "from alice", "count": 12, "interval": "7s"}]}
            """)
            let a = Arrivals()
            let world = try World(scenario: s, seed: 21)
            world.addObserver(a)
            world.run()
            return a
        }
        let with = try run(withCarol: true), without = try run(withCarol: false)
        #expect((with.times["carol"] ?? []).count >= 25)
        #expect((with.times["alice"] ?? []).count == 12)
        #expect(with.times["alice"] == without.times["alice"])
    }

    /// A device's run does not depend on how many sessions other devices opened before it: the
    /// server's session ids have one length, so bob's CONNACK is as long — and arrives, at 1 MB/s,
    /// at the same microsecond — whether he gets the 2nd session or the 14th. (With "S0-2" vs
    /// "S0-14" every later instant-keyed draw of bob's link moved, and a failure that hung on one
    /// of them needed every bystander: B6's shrink kept four idle users.)
    @Test func aDevicesRunDoesNotDependOnOtherDevicesSessions() throws {
        final class Inputs: WorldObserver {
            var bob: [String] = []
            func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {
                guard world.deviceId(device) == "bob-phone" else { return }
                bob.append("\(world.now) \(String(describing: input).prefix { $0 != "(" })")  // when, and what kind
            }
        }
        func run(bystanders: Int) throws -> [String] {
            let others = (0..<bystanders).map { #", {"id": "x\#($0)", "devices": [{"id": "x\#($0)-phone", "startAt": "1s"}]}"# }.joined()
            let s = try scenario("""
            {"name": "sessions", "duration": "1m",
             "users": [{"id": "alice", "devices": [{"id": "alice-phone", "startAt": "1s"}]},
                       {"id": "bob", "devices": [{"id": "bob-phone", "startAt": "5s"}]}\(others)],
             "script": [{"at": "10s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "hi",
                         "count": 5, "interval": "3s"}]}
            """)
            let r = Inputs()
            let world = try World(scenario: s, seed: 4)
            world.addObserver(r)
            world.run()
            return r.bob
        }
        let alone = try run(bystanders: 0), crowded = try run(bystanders: 12)
        #expect(alone.count >= 10)
        #expect(alone == crowded)
    }
}
