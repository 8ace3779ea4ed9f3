import IMClient
import IMStore
import IMWire
import SimKernel

/// Workloads for `imsim bench client`. Timing lives in the CLI; these only do the work.
///
/// Both runs feed a connected, in-sync `ClientCore` pre-encoded server bytes (stream framing),
/// so what is measured is the core's whole receive path: stream decoding, protobuf, the
/// acceptance and cursor rules, the store writes, PUBACK / QUERYCON encoding and the effects.
public enum ClientBenchmark {
    public struct Prepared {
        /// One read per input.
        public var reads: [[UInt8]]
        public var messages: Int
    }

    /// A core connected and in sync over a fresh in-memory store.
    public static func connectedCore(config: ClientConfig = ClientConfig()) throws -> ClientCore {
        var core = ClientCore(identity: DeviceIdentity(userId: "alice", deviceId: "phone", platform: .mobile),
                              config: config, store: try IMStore.inMemory())
        let t = DeviceTime(milliseconds: 1_700_000_000_000)
        _ = core.handle(.api(.connect(token: "tok", timeLimitSeconds: 0)), now: t)
        _ = core.handle(.transport(.opened), now: t)
        var bytes: [UInt8] = []
        try StreamFraming.encode(.connack(Frame.Connack(status: .accepted, session: .init(userId: "alice", sessionId: "S", timestamp: 0))),
                                 direction: .serverToClient, into: &bytes)
        var empty = RMTPDownStreamMessages()
        empty.syncTime = 0
        try StreamFraming.encode(.queryAck(Frame.QueryAck(messageId: 1, date: 0, message: empty)), direction: .serverToClient, into: &bytes)
        _ = core.handle(.transport(.bytes(bytes)), now: t)
        precondition(core.isInSync, "benchmark core must be in sync")
        return core
    }

    static func message(_ i: Int, conversations: Int) -> RMTPDownStreamMessage {
        var d = RMTPDownStreamMessage()
        let peer = "user\(i % conversations)"
        d.fromUserID = peer
        d.type = ConversationType.privateChat.rawValue
        d.classname = "RC:TxtMsg"
        d.contentBytes = Array(#"{"content":"message \#(i) from \#(peer)","extra":""}"#.utf8)
        d.dataTime = 1_700_000_000_000 + Int64(i)
        d.status = DownStreamStatus(persistent: .isCounted).rawValue
        d.msgID = StoreBenchmark.messageUId(UInt64(i))
        return d
    }

    /// `count` direct deliveries (`s_msg` qos 1), one read each.
    public static func directDeliveries(count: Int, conversations: Int) throws -> Prepared {
        var reads: [[UInt8]] = []
        reads.reserveCapacity(count)
        for i in 0..<count {
            let d = message(i, conversations: conversations)
            let p = try Frame.Publish(flags: .atLeastOnce, date: UInt32(d.dataTime / 1000), topic: .s_msg, targetId: d.fromUserID,
                                      messageId: UInt16(i % 65_535 + 1), message: d)
            reads.append(try StreamFraming.encode(.publish(p), direction: .serverToClient))
        }
        return Prepared(reads: reads, messages: count)
    }

    /// `count` messages as pull pages of `pageSize`: an `s_ntf`, then the pages answering the
    /// client's pullMsg queries (message ids 1, 2, … of the benchmark core's counter).
    public static func pullPages(count: Int, conversations: Int, pageSize: Int, firstQueryId: UInt16) throws -> Prepared {
        var reads: [[UInt8]] = []
        var n = RMTPNotifyMsg()
        n.type = 1
        n.time = 1_700_000_000_000 + Int64(count)
        reads.append(try StreamFraming.encode(.publish(try Frame.Publish(flags: .none, topic: .s_ntf, targetId: "alice", messageId: 1, message: n)),
                                              direction: .serverToClient))
        var start = 0
        var id = firstQueryId
        while start < count {
            let end = min(start + pageSize, count)
            var page = RMTPDownStreamMessages()
            page.list = (start..<end).map { message($0, conversations: conversations) }
            page.syncTime = page.list.last!.dataTime
            page.finished = end == count
            reads.append(try StreamFraming.encode(.queryAck(try Frame.QueryAck(messageId: id, date: 0, message: page)),
                                                  direction: .serverToClient))
            id = id == .max ? 1 : id + 1
            start = end
        }
        return Prepared(reads: reads, messages: count)
    }

    /// Feeds every read; returns the number of `received` callbacks.
    public static func run(_ core: inout ClientCore, _ prepared: Prepared) -> Int {
        var received = 0
        var t: Int64 = 1_700_000_000_000
        for r in prepared.reads {
            t += 1
            for e in core.handle(.transport(.bytes(r)), now: DeviceTime(milliseconds: t)) {
                if case .callback(.received) = e { received += 1 }
            }
        }
        return received
    }
}
