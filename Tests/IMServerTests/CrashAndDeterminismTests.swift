import Benchmarks
import IMWire
import SimKernel
import Testing
@testable import IMServer

@Suite struct CrashTests {
    @Test(arguments: [true, false])
    func crashAndRestart(persist: Bool) throws {
        var cfg = ServerConfig()
        cfg.persistAcrossCrash = persist
        var d = Harness.directory()
        d.chatrooms = ["lobby"]
        var h = Harness(config: cfg, directory: d)
        let a = h.online("alice")
        let b = h.online("bob")
        _ = h.join(a, room: "r")
        _ = h.join(b, room: "lobby")
        let (pullId, _) = h.pull(b, user: "bob", syncTime: 0) // leaves a QUERYACK retry pending
        let sent = try #require(h.sendText(a, to: "carol", "while carol is offline", clientUniqueId: 5).1.puback(a))
        _ = h.sendText(a, to: "r", "room message", topic: .chatMsg)
        h.advance(ms: 1000)

        let fx = h.core.crashAndRestart(now: h.now)
        let out = Output(effects: fx)
        #expect(out.has(.restarted(keptPersistentState: persist)))
        #expect(out.has(.sessionClosed(a, userId: "alice", deviceId: "alice-mobile", reason: .serverRestart)))
        #expect(out.has(.sessionClosed(b, userId: "bob", deviceId: "bob-mobile", reason: .serverRestart)))
        for t in [ServerTimer.sessionIdle(a), .sessionIdle(b), .queryAckRetry(b, messageId: pullId), .offlineExpiry] {
            #expect(fx.contains(.cancelTimer(t)), "\(t) cancelled")
        }
        #expect(!fx.contains { if case .close = $0 { true } else { false } }) // the driver closes sockets
        #expect(h.core.onlineUsers.isEmpty && h.core.openConnections.isEmpty)
        #expect(h.core.generation == 1)
        // Stale timers from before the crash do nothing.
        #expect(h.fire(.sessionIdle(a)).effects.isEmpty)

        let c = h.online("carol")
        let page = try #require(h.pull(c, user: "carol", syncTime: 0).1.pullPage(c))
        #expect(page.list.map(\.msgID) == (persist ? [sent.messageUId] : []))
        #expect(h.core.chatroomExists("lobby")) // directory rooms always exist
        #expect(h.core.chatroomExists("r") == persist)
        if persist {
            #expect(h.core.chatroomMembers("r") == ["alice"])
            #expect(h.core.chatroomOfflineMembers("r").map(\.since) == [h.now])
            #expect(h.core.chatroomHistory("r").count == 1)
            #expect(out.timersSet.contains(.chatroomAutoDestroy(roomId: "r")))
        }
        // messageUIds stay unique: the generation is part of every id.
        let a2 = h.online("alice")
        let next = try #require(h.sendText(a2, to: "bob", "after").1.puback(a2))
        #expect(next.messageUId.hasPrefix("BK00-0080") && next.messageUId != sent.messageUId)
        #expect(MessageUId.parse(next.messageUId)! > MessageUId.parse(sent.messageUId)!)
        // A resend after the restart is still recognised when the store survived.
        let resend = try #require(h.sendText(a2, to: "carol", "while carol is offline", clientUniqueId: 5).1.puback(a2))
        #expect((resend.messageUId == sent.messageUId) == persist)
        #expect(h.core.session(on: a2)?.sessionId == "S1-00000002")
    }
}

@Suite struct DeterminismTests {
    /// A scripted random workload (seeded): connects, private / group / chatroom sends, pulls,
    /// joins, KV, closes, timers, API calls, a crash.
    static func workload(seed: UInt64, reversedDirectory: Bool = false) -> [ServerEffect] {
        let users = (0..<12).map { "u\($0)" }
        var d = ServerDirectory()
        for u in (reversedDirectory ? users.reversed() : users) { d.addUser(u, token: "tok-\(u)") }
        let groupIds = reversedDirectory ? ["g2", "g1"] : ["g1", "g2"]
        for g in groupIds { d.groups[g] = g == "g1" ? Array(users[0..<6]) : Array(users[4..<12]) }
        var cfg = ServerConfig()
        cfg.pullPageSize = 4
        cfg.chatroom.quotaCapacity = 6
        cfg.chatroom.quotaReservedHigh = 3
        cfg.sensitiveWords = ["zz"]
        var h = Harness(config: cfg, directory: d)
        var rng = RandomStream(seed: seed)
        var conns: [ConnectionID: String] = [:]
        for step in 0..<600 {
            h.now += Int64(rng.below(300))
            let open = conns.keys.sorted()
            let pick = open.isEmpty ? nil : open[rng.uniform(0..<open.count)]
            switch rng.below(14) {
            case 0, 1:
                let u = users[rng.uniform(0..<users.count)]
                let platform = Platform.allCases[rng.uniform(0..<3)]
                let (c, _) = h.connect(u, device: "\(u)-d\(rng.below(3))", platform: platform, reconnect: rng.below(2) == 0,
                                       kickEnable: rng.below(4) == 0)
                if h.core.session(on: c) != nil { conns[c] = u }
            case 2, 3, 4:
                guard let c = pick else { continue }
                let text = rng.below(10) == 0 ? "zz" : "m\(step)"
                _ = h.sendText(c, to: users[rng.uniform(0..<users.count)], text, clientUniqueId: Int64(rng.below(50)))
            case 5:
                guard let c = pick else { continue }
                _ = h.sendText(c, to: rng.below(2) == 0 ? "g1" : "g2", "g\(step)", topic: .pgMsgP)
            case 6:
                guard let c = pick else { continue }
                _ = h.join(c, room: "room\(rng.below(2))")
            case 7:
                guard let c = pick else { continue }
                _ = h.sendText(c, to: "room\(rng.below(2))", "c\(step)", topic: .chatMsg)
            case 8:
                guard let c = pick, let u = conns[c] else { continue }
                _ = h.pull(c, user: u, syncTime: Int64(rng.below(2)) * (h.now - 5000), isPullSend: true)
            case 9:
                guard let c = pick else { continue }
                _ = h.chatroomPull(c, room: "room\(rng.below(2))", syncTime: 0, count: Int32(rng.below(12)) - 1)
            case 10:
                guard let c = pick else { continue }
                h.close(c)
                conns[c] = nil
            case 11:
                guard let c = pick else { continue }
                h.fire(.sessionIdle(c))
                h.fire(.queryAckRetry(c, messageId: 1))
            case 12:
                h.run(.api(.broadcast(objectName: "RC:TxtMsg", content: Array(#"{"content":"b"}"#.utf8))))
                h.fire(.chatroomAutoDestroy(roomId: "room0"))
            default:
                if step == 300 {
                    h.log += h.core.crashAndRestart(now: h.now)
                    conns = [:]
                } else {
                    h.fire(.offlineExpiry)
                }
            }
        }
        return h.log
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func sameInputsSameEffects(seed: UInt64) {
        let a = Self.workload(seed: seed)
        let b = Self.workload(seed: seed)
        #expect(a.count > 1000)
        #expect(a == b)
        #expect(Self.workload(seed: seed + 100) != a)
    }

    /// The directory's insertion order (and so its hash layout) must not change anything.
    @Test func directoryOrderDoesNotMatter() {
        #expect(Self.workload(seed: 7) == Self.workload(seed: 7, reversedDirectory: true))
    }
}

@Suite struct RobustnessTests {
    /// Random client frames (valid framing, random fields and bodies) and random bytes after a valid
    /// CONNECT: the server answers or closes, never crashes, and stays deterministic.
    @Test(arguments: [UInt64(11), 12, 13])
    func randomClientInput(seed: UInt64) {
        func run() -> [ServerEffect] {
            var h = Harness()
            var rng = RandomStream(seed: seed)
            var c = h.online("alice")
            for i in 0..<400 {
                h.now += 7
                if h.core.session(on: c) == nil { c = h.online("alice", device: "d\(i)") }
                switch rng.below(4) {
                case 0:
                    let n = rng.uniform(0..<40)
                    h.run(.bytes(c, (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
                default:
                    let types: [FrameType] = [.publish, .query, .queryConfirm, .puback, .pingReq, .subscribe, .disconnect]
                    let f = FrameGenerator.frame(types[rng.uniform(0..<types.count)], direction: .clientToServer, using: &rng)
                    h.send(c, f)
                }
            }
            return h.log
        }
        let a = run()
        #expect(a == run())
        #expect(a.contains { if case .event(.protocolError) = $0 { true } else { false } })
    }
}
