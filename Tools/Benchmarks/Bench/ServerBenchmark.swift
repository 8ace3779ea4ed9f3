import IMServer
import IMWire
import SimKernel

/// Workloads of `imsim bench server`: a `ServerCore` with everyone connected is fed pre-encoded
/// client frames (the clients cost nothing here) and the effects are counted. Deterministic:
/// `run` returns a checksum so two runs can be compared. Timing lives in the CLI.
public enum ServerBenchmark {
    public enum Workload: String, CaseIterable, Sendable {
        /// 1,000 users online, private messages between random pairs: accept, PUBACK, one `s_msg`,
        /// inbox and sendbox entries.
        case privateChat = "private"
        /// 1,000 users in 10 groups of 100, all online: each message fans out to 99 sessions.
        case group
        /// One chatroom with 500 joined members; one message per 5 ms (the quota's pace): each
        /// message is notified (`s_ntf` type 2) to 499 sessions.
        case chatroom
        /// One user receives the messages while offline, then pulls them all in pages of 50.
        case pull
    }

    public struct Result: Sendable, Hashable, Codable {
        public var inputs: Int
        public var accepts: Int
        public var fanOuts: Int
        /// Messages returned by pulls.
        public var pulled: Int
        public var effects: Int
        public var bytesOut: Int
        public var checksum: UInt64
    }

    /// A core in its starting state and the inputs to time.
    public struct Prepared: Sendable {
        var core: ServerCore
        var inputs: [(now: Int64, input: ServerInput)]
        public var inputCount: Int { inputs.count }
    }

    static let t0: Int64 = 1_763_769_600_000

    public static func prepare(_ workload: Workload, messages: Int, seed: UInt64 = 1) -> Prepared {
        var rng = RandomStream(seed: seed)
        var cfg = ServerConfig()
        cfg.rateLimitPerSecond = 0
        let users = (0..<1000).map { "user\($0)" }
        var d = ServerDirectory()
        for u in users { d.addUser(u, token: "t-\(u)") }
        for g in 0..<10 { d.groups["group\(g)"] = Array(users[(g * 100)..<(g * 100 + 100)]) }
        var core = ServerCore(config: cfg, directory: d)
        var now = t0
        var conn: [ConnectionID] = []
        let onlineCount = workload == .chatroom ? 500 : (workload == .pull ? 100 : 1000)
        for (i, u) in users.prefix(onlineCount).enumerated() {
            let c = ConnectionID(UInt64(i + 1))
            conn.append(c)
            _ = core.handle(.connectionAccepted(c), now: now)
            let connect = Frame.connect(Frame.Connect(keepAlive: 30, clientId: "mobile:\(u)-phone", appKey: cfg.appKey, token: "t-\(u)"))
            _ = core.handle(.bytes(c, frame(connect)), now: now)
            if workload == .chatroom {
                var j = RMTPChrmInput()
                j.nothing = 1
                _ = core.handle(.bytes(c, frame(.query(try! Frame.Query(topic: .joinChrm, targetId: "room", messageId: 1, message: j)))), now: now)
            }
        }
        var inputs: [(Int64, ServerInput)] = []
        var msgIds = [UInt16](repeating: 1, count: conn.count)
        func text(_ i: Int) -> RMTPUpStreamMessage {
            try! RMTPUpStreamMessage(content: .text(TextContent(content: "See you at 7? Bring the slides (msg \(i))")), flags: .normal,
                                     clientUniqueId: Int64(i + 1))
        }
        func publish(from s: Int, topic: Topic, target: String, _ i: Int) -> [UInt8] {
            msgIds[s] = msgIds[s] == .max ? 1 : msgIds[s] + 1
            return frame(.publish(try! Frame.Publish(topic: topic, targetId: target, messageId: msgIds[s], message: text(i))))
        }
        switch workload {
        case .privateChat:
            for i in 0..<messages {
                now += 1
                let s = rng.uniform(0..<1000)
                var r = rng.uniform(0..<999)
                if r >= s { r += 1 }
                inputs.append((now, .bytes(conn[s], publish(from: s, topic: .ppMsgP, target: users[r], i))))
            }
        case .group:
            for i in 0..<messages {
                now += 1
                let s = rng.uniform(0..<1000)
                inputs.append((now, .bytes(conn[s], publish(from: s, topic: .pgMsgP, target: "group\(s / 100)", i))))
            }
        case .chatroom:
            for i in 0..<messages {
                now += 5
                let s = rng.uniform(0..<500)
                inputs.append((now, .bytes(conn[s], publish(from: s, topic: .chatMsg, target: "room", i))))
            }
        case .pull:
            // The sends happen in `prepare`; the pulls are timed.
            let receiver = users[999]
            for i in 0..<messages {
                now += 1
                let s = i % 100
                _ = core.handle(.bytes(conn[s], publish(from: s, topic: .ppMsgP, target: receiver, i)), now: now)
            }
            now += 1000
            let c = ConnectionID(5000)
            _ = core.handle(.connectionAccepted(c), now: now)
            let connect = Frame.connect(Frame.Connect(keepAlive: 30, clientId: "mobile:rx", appKey: cfg.appKey, token: "t-\(receiver)"))
            _ = core.handle(.bytes(c, frame(connect)), now: now)
            let pageSize = cfg.pullPageSize
            var id: UInt16 = 0
            for k in stride(from: 0, to: messages, by: pageSize) {
                var r = RMTPSyncRequestMsg()
                r.syncTime = k == 0 ? 0 : t0 + Int64(k) // message i has dataTime t0 + i + 1
                r.ispolling = false
                id += 1
                inputs.append((now, .bytes(c, frame(.query(try! Frame.Query(topic: .pullMsg, targetId: receiver, messageId: id, message: r))))))
                inputs.append((now, .bytes(c, frame(.queryConfirm(Frame.QueryConfirm(messageId: id))))))
            }
        }
        return Prepared(core: core, inputs: inputs)
    }

    static func frame(_ f: Frame) -> [UInt8] { try! StreamFraming.encode(f, direction: .clientToServer) }

    /// Feeds every input to (a copy of) the prepared core.
    public static func run(_ prepared: Prepared) -> Result {
        var core = prepared.core
        var r = Result(inputs: prepared.inputs.count, accepts: 0, fanOuts: 0, pulled: 0, effects: 0, bytesOut: 0, checksum: 0)
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        for (now, input) in prepared.inputs {
            let fx = core.handle(input, now: now)
            r.effects += fx.count
            for e in fx {
                switch e {
                case .send(_, let bytes, _):
                    r.bytesOut += bytes.count
                    digest = StableHash.mix(digest ^ UInt64(bytes.count) ^ UInt64(bytes.last ?? 0) << 32)
                case .event(.messageAccepted): r.accepts += 1
                case .event(.fannedOut): r.fanOuts += 1
                case .event(.pulled(_, _, _, _, let uids, _, _)): r.pulled += uids.count
                default: break
                }
            }
        }
        r.checksum = digest
        return r
    }
}
