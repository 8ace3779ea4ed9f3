import IMClient
import IMServer
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The app joins a room it is already in (busy-room seed 20: bob's app re-joins "lobby" while a
/// latency spike holds his inbound bytes). im-semantics §6: a pending join leaves the user in the
/// room it was in, still receiving it — so the room's notifies that arrive before the join's
/// answer must still be pulled, and the answer must not jump the room cursor past them.
@Suite struct ChatroomSameRoomReJoinTests {
    static let room = #", "chatrooms": [{"id": "hall", "members": ["alice", "bob"], "joinCount": 10}]"#
    static let hall = ConversationKey(.chatroom, "hall")

    /// alice sends one message at 3 s (bob's room cursor moves past 0), then 15 from 10.5 s, 4 a
    /// second, while bob's link is black-holed 10 s – 15 s; bob's app joins hall again at 11 s.
    /// At the heal the server's notifies for alice's burst reach bob before the join's answer
    /// (one stream, in order), and a join pull (the newest 10) could bring only 10 of the 15.
    func scenario(earlyMessage: Bool = true, extraSteps: String = "") throws -> Scenario {
        let early = earlyMessage ? #"{"at": "3s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "text": "first"},"# : ""
        return try duo("room-rejoin-same", duration: "40s", extra: Self.room, script: """
            \(early)
            {"at": "10s", "device": "bob-phone", "action": "partition", "for": "5s"},
            {"at": "10500ms", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "text": "burst", "count": 15, "interval": "250ms"},
            {"at": "11s", "device": "bob-phone", "action": "join", "room": "hall", "count": 10}\(extraSteps)
            """)
    }

    static func topics(_ e: ClientEffect) -> [String] {
        if case .send(_, let frames) = e { frames.map(\.topic) } else { [] }
    }

    @Test(arguments: [true, false])
    func notifiesDuringASameRoomJoinAreStillPulled(earlyMessage: Bool) throws {
        let (run, tap) = try runOracles(scenario(earlyMessage: earlyMessage))
        let bob = try run.device("bob-phone")
        // The premise: bob's second join was answered after every message of the burst was
        // accepted, i.e. their notifies were written to bob before the join's answer.
        let burst = tap.accepted.filter { $0.conversation.type == .chatroom && $0.senderUserId == "alice" }
        #expect(burst.count == (earlyMessage ? 16 : 15))
        let lastUId = try #require(burst.last).messageUId
        let accepts = tap.serverEvents { if case .messageAccepted(let m) = $0 { m.messageUId == lastUId } else { false } }
        let lastAccept = try #require(accepts.first)
        let joins = tap.clientEffects(on: bob) { if case .callback(.chatroomJoined("hall")) = $0 { true } else { false } }
        #expect(joins.count == 2)
        let secondJoin = try #require(joins.last)
        #expect(secondJoin.time > lastAccept.time)
        #expect(secondJoin.time > SimTime.zero + .seconds(15))
        // Every message of the room reached bob (the old client skipped the notifies as "a room
        // not joined" and its join pull brought the newest 10 only).
        for m in burst {
            #expect(!tap.stores(of: m.messageUId, on: bob).isEmpty, "\(m.messageUId) never stored on bob-phone")
        }
        #expect(tap.clientEffects(on: bob) {
            if case .note(.skipped(_, _, let reason)) = $0 { reason.contains("not joined") } else { false }
        }.isEmpty)
        expectClean(run)
    }

    /// A re-join cut by a reset of bob's connection before its answer: the join fails
    /// (the app is told), but bob stays in the room — the SDK rejoins it on the next connection
    /// and alice's later messages reach him. (The old client forgot the room on any failure.)
    @Test func aSameRoomJoinCutByTheConnectionKeepsTheRoom() throws {
        let s = try duo("room-rejoin-same-cut", duration: "40s", extra: Self.room, script: """
            {"at": "3s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "text": "first"},
            {"at": "11s", "device": "bob-phone", "action": "join", "room": "hall", "count": 10},
            {"at": "11020ms", "device": "bob-phone", "action": "reset"},
            {"at": "25s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "text": "later", "count": 3, "interval": "1s"}
            """)
        let (run, tap) = try runOracles(s)
        let bob = try run.device("bob-phone")
        let failed = tap.clientEffects(on: bob) { if case .callback(.chatroomJoinFailed("hall", _)) = $0 { true } else { false } }
        #expect(failed.count == 1)
        // The SDK still holds the room: the next connection rejoins it.
        let rejoins = tap.clientEffects(on: bob) { Self.topics($0).contains(Topic.joinChrmR.rawValue) }
        let failedAt = try #require(failed.first).time
        #expect(rejoins.contains { $0.time > failedAt })
        let later = tap.accepted.filter { $0.conversation.type == .chatroom && $0.senderUserId == "alice" }.suffix(3)
        #expect(later.count == 3)
        for m in later {
            #expect(!tap.stores(of: m.messageUId, on: bob).isEmpty, "\(m.messageUId) never stored on bob-phone")
        }
        #expect(run.world.clientCore(ofDevice: bob)?.joinedChatrooms == ["hall"])
        expectClean(run)
    }
}
