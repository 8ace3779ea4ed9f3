import IMClient
import IMServer
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// A member's join pull is `chrmPull{syncTime 0, count N}`: the newest N of the room
/// (im-semantics §6, wire-protocol §4). What arrives between the join's answer and the pull's
/// beyond those N is never delivered to the device — the protocol's behaviour, not a fault. The
/// server says so (`dropped … chatroomJoinCount`), as it does for the ring overflow of a pull with
/// a cursor; before, no-loss took those messages for lost (chatroom-storm `--bugs none`, seed
/// 40001: a churned member rejoining the busy room).
@Suite struct ChatroomJoinPullCountTests {
    /// Ten members post every 250 ms (40 messages a second); alice (500 ms away) joins at 10 s.
    /// Her join is answered at 11 s, her join pull served at 11.5 s: about 20 messages arrived
    /// after the answer, and the pull brings the newest 10.
    static func joinWhileBusy() throws -> Scenario {
        let senders = (0..<10).map { "s\($0)" }
        let users = senders.map { #"{"id": "\#($0)", "devices": [{"id": "\#($0)-phone", "startAt": "0s"}]}"# }.joined(separator: ", ")
        let posts = senders.enumerated().map { i, s in
            #"{"at": "\#(9000 + i * 23)ms", "device": "\#(s)-phone", "action": "send", "to": "chatroom:hall", "text": "live \#(s)", "count": 40, "interval": "250ms"}"#
        }.joined(separator: ", ")
        return try scenario("""
        {"name": "join-pull-count", "duration": "30s",
         "users": [{"id": "alice", "devices": [{"id": "alice-phone", "startAt": "0s",
                    "network": {"latency": {"fixed": "500ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0}}]}, \(users)],
         "chatrooms": [{"id": "hall", "members": [\(senders.map { "\"\($0)\"" }.joined(separator: ", "))], "joinCount": 10}],
         "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0},
         "script": [\(posts), {"at": "10s", "device": "alice-phone", "action": "join", "room": "hall", "count": 10}],
         "liveness": {"deadline": "1m"}}
        """)
    }

    @Test func messagesTheJoinPullLeavesOutAreReportedDroppedNotLost() throws {
        let (run, tap) = try runWithTap(try Self.joinWhileBusy())
        let alice = try #require(run.world.deviceIndex("alice-phone"))
        let joined = try #require(tap.clientOut.first {
            if $0.device == alice, case .callback(.chatroomJoined("hall")) = $0.effect { true } else { false }
        }).time
        var acceptedAt: [String: SimTime] = [:]
        for o in tap.serverOut { if case .event(.messageAccepted(let m)) = o.effect { acceptedAt[m.messageUId] = o.time } }
        let dropped = tap.serverOut.compactMap { o -> String? in
            if case .event(.dropped(let uid?, _, "alice", .chatroomJoinCount)) = o.effect { uid } else { nil }
        }
        let stored = Set(tap.clientOut.compactMap { o -> String? in
            if o.device == alice, case .note(.stored(_, let uid?, _, _, _, _)) = o.effect { uid } else { nil }
        })
        // The premise: the pull left out messages accepted after alice's app was told she had
        // joined (no-loss owed them to her before), and they never reached her.
        let afterJoin = dropped.filter { (acceptedAt[$0] ?? .zero) > joined }
        #expect(afterJoin.count >= 5, "\(dropped.count) dropped, \(afterJoin.count) after the join")
        #expect(dropped.allSatisfy { !stored.contains($0) })
        // Everything accepted after the join pull did reach her.
        let later = acceptedAt.filter { $0.value > joined + .seconds(1) }.map(\.key)
        #expect(later.count > 100)
        #expect(later.allSatisfy { stored.contains($0) })
        // And no oracle calls it a loss.
        #expect(run.violations.isEmpty, "\(run.violations.map { "\($0.oracle): \($0.detail)" })")
    }
}
