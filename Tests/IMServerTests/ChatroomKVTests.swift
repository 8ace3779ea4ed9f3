import IMWire
import SimKernel
import Testing
@testable import IMServer

@Suite struct ChatroomKVTests {
    struct Room {
        var h: Harness
        var a: ConnectionID
        var b: ConnectionID

        init(_ configure: (inout ServerConfig) -> Void = { _ in }) {
            var cfg = ServerConfig()
            cfg.rateLimitPerSecond = 0
            configure(&cfg)
            h = Harness(config: cfg)
            a = h.online("alice")
            b = h.online("bob")
            _ = h.join(a, room: "r")
            _ = h.join(b, room: "r")
        }

        mutating func set(_ c: ConnectionID, _ key: String, _ value: String = "v", autoDelete: Bool = false, force: Bool = false,
                          notify: Bool = false) -> Output {
            var e = RMTPChrmKVEntity()
            e.key = key
            e.value = value
            e.status = (autoDelete ? 1 : 0) | (force ? 2 : 0)
            var r = RMTPSetChrmKV()
            r.entry = e
            r.bNotify = notify
            return h.query(c, .setKV, target: "r", r).1
        }

        mutating func delete(_ c: ConnectionID, _ key: String, force: Bool = false) -> Output {
            var e = RMTPChrmKVEntity()
            e.key = key
            e.value = ""
            e.status = force ? 2 : 0
            var r = RMTPDeleteChrmKV()
            r.entry = e
            return h.query(c, .delKV, target: "r", r).1
        }

        func status(_ out: Output, _ c: ConnectionID) -> UInt16 { out.queryAck(c)?.status ?? 9999 }

        mutating func pullKV(_ c: ConnectionID, since: Int64) -> RMTPChrmKVOutput? {
            var q = RMTPQueryChrmKV()
            q.timestamp = since
            return h.query(c, .pullKV, target: "r", q).1.queryAck(c).map { try! $0.decodeBody(RMTPChrmKVOutput.self) }
        }
    }

    /// Keys: 1–128 characters of [A-Za-z0-9+=_-]; values ≤ 4096 (33003 otherwise).
    @Test(arguments: [
        ("k", 1, UInt16(0)),
        (String(repeating: "a", count: 128), 4096, 0),
        (String(repeating: "a", count: 129), 1, 33003),
        ("a+b=c_d-e", 1, 0),
        ("bad key", 1, 33003),
        ("ключ", 1, 33003),
        ("", 1, 33003),
        ("k", 4097, 33003),
    ])
    func keyAndValueLimits(key: String, valueLength: Int, status: UInt16) {
        var r = Room()
        let out = r.set(r.a, key, String(repeating: "é", count: valueLength))
        #expect(r.status(out, r.a) == status)
    }

    @Test func keyLimitOwnershipMissingKey() {
        var r = Room()
        for i in 0..<100 {
            r.h.now = Harness.t0 + Int64(i) * 20 // 50 ops/s: under the rate limit
            #expect(r.status(r.set(r.a, "k\(i)"), r.a) == 0)
        }
        r.h.advance(ms: 1000)
        #expect(r.status(r.set(r.a, "k100"), r.a) == 23423)
        #expect(r.status(r.set(r.a, "k5", "new"), r.a) == 0)       // the creator updates
        #expect(r.status(r.set(r.b, "k5", "mine"), r.b) == 23424)  // another user may not…
        r.h.advance(ms: 10)
        #expect(r.status(r.set(r.b, "k5", "mine", force: true), r.b) == 0) // …unless force
        r.h.advance(ms: 10)
        #expect(r.status(r.delete(r.a, "k5"), r.a) == 23424)      // now bob's key
        #expect(r.status(r.delete(r.b, "missing"), r.b) == 23427)
        #expect(r.status(r.delete(r.b, "k5"), r.b) == 0)
        #expect(r.status(r.delete(r.b, "k5"), r.b) == 23427)
        #expect(r.status(r.set(r.a, "k100"), r.a) == 0)           // a slot is free again
        #expect(r.h.core.chatroomKV("r").count == 100)
        let outsider = r.h.online("carol")
        #expect(r.status(r.set(outsider, "x"), outsider) == 23406)
    }

    /// 100 operations per second per room → 23425 (counted per room, whoever writes).
    @Test func rateLimit() {
        var r = Room()
        var statuses: [UInt16] = []
        for i in 0..<101 {
            let c = i % 2 == 0 ? r.a : r.b
            statuses.append(r.status(r.set(c, "k\(i)"), c))
        }
        #expect(statuses.prefix(100).allSatisfy { $0 == 0 } && statuses[100] == 23425)
        r.h.advance(ms: 1000)
        #expect(r.status(r.set(r.a, "k0", "again"), r.a) == 0) // (an update: 100 keys exist)
    }

    /// Two devices changing the same key in the same server millisecond: the second gets 23431.
    @Test func concurrentDeviceConflict() {
        var r = Room()
        let desk = r.h.online("alice", device: "desk", platform: .desktop)
        _ = r.h.join(desk, room: "r")
        #expect(r.status(r.set(r.a, "k", "1"), r.a) == 0)
        #expect(r.status(r.set(desk, "k", "2"), desk) == 23431)
        #expect(r.status(r.set(r.a, "k", "3"), r.a) == 0) // the same device is no conflict
        r.h.advance(ms: 1)
        #expect(r.status(r.set(desk, "k", "4"), desk) == 0)
        var off = Room { $0.chatroom.kvConflictWindowMs = 0 }
        let d2 = off.h.online("alice", device: "desk", platform: .desktop)
        _ = off.h.join(d2, room: "r")
        #expect(off.status(off.set(off.a, "k"), off.a) == 0)
        #expect(off.status(off.set(d2, "k"), d2) == 0)
    }

    /// Changes are announced with `s_cmd` NotifyMsg type 2 to every joined session, and with
    /// bNotify an RC:chrmKVNotiMsg goes into the room; pullKV returns full state or changes
    /// (deletes with status 4).
    @Test func notificationsAndPull() throws {
        var r = Room()
        let out = r.set(r.a, "score", "10", notify: true)
        for c in [r.a, r.b] {
            let cmd = try #require(out.publishes(c, topic: .s_cmd).first)
            let n = try cmd.decodeBody(RMTPNotifyMsg.self)
            #expect(n.type == 2 && n.chrmID == "r")
        }
        #expect(out.has(.chatroomKVChanged(roomId: "r", key: "score", userId: "alice", deleted: false)))
        let note = try #require(out.accepted.first)
        #expect(note.objectName == "RC:chrmKVNotiMsg" && note.recipients == ["bob"])
        #expect(out.publishes(r.b, topic: .s_ntf).count == 1)
        let fullPage = r.pullKV(r.b, since: 0)
        let full = try #require(fullPage)
        #expect(full.bFullUpdate && full.entries.map(\.key) == ["score"] && full.entries[0].value == "10" && full.entries[0].uid == "alice")
        r.h.advance(ms: 5)
        _ = r.delete(r.a, "score")
        let changesPage = r.pullKV(r.b, since: full.syncTime)
        let changes = try #require(changesPage)
        #expect(!changes.bFullUpdate && changes.entries.map(\.key) == ["score"] && changes.entries[0].status & 4 == 4)
        #expect(changes.syncTime > full.syncTime)
        let afterPage = r.pullKV(r.b, since: 0)
        let after = try #require(afterPage)
        #expect(after.entries.isEmpty)
    }

    /// Auto-delete keys vanish (without a notice) when their creator goes offline or quits.
    @Test func autoDeleteOnDisconnectAndQuit() {
        var r = Room()
        _ = r.set(r.a, "temp", autoDelete: true)
        _ = r.set(r.a, "keep")
        _ = r.set(r.b, "btemp", autoDelete: true)
        let closed = r.h.close(r.a)
        #expect(closed.has(.chatroomKVChanged(roomId: "r", key: "temp", userId: "alice", deleted: true)))
        #expect(closed.publishes(r.b).isEmpty)
        #expect(r.h.core.chatroomKV("r").map(\.key) == ["btemp", "keep"])
        var quit = RMTPChrmInput()
        quit.nothing = 1
        _ = r.h.query(r.b, .exitChrm, target: "r", quit)
        #expect(r.h.core.chatroomKV("r").map(\.key) == ["keep"])
    }
}
