import IMClient
import IMServer
import IMWire
import SimKernel

/// A deterministic stream of world-shaped trace events in the real record schema, for
/// `imsim bench trace --synthetic` and tests: message lives (API send, insert, PUBLISH, request
/// timer, delivery, accept, PUBACK, fan-out to 1 or 9 recipients, their deliveries, store,
/// callback, cursor, acks) and heartbeats, over `devices` devices with log-normal ns-precise
/// link latencies (median 50 ms, as mixed-1k), ms/s think times, 19-character messageUIds.
///
/// It exercises the schema and the container without a simulated world; the figures of a real
/// run are what `imsim bench trace SCENARIO` measures.
public struct SyntheticWorldStream: Sendable {
    private var rng: RandomStream
    private var now = SimTime.zero + .seconds(1)
    private var nextUId: UInt64 = 1
    private var nextMessageId: [Int64]
    private var nextMsgId: [UInt16]
    private var pending: [(TraceEvent, SimTime)] = []
    private var index = 0
    private var eventCount: UInt64 = 0
    public let devices: Int
    public let epochMs: Int64

    public init(seed: UInt64, devices: Int = 1000, epochMs: Int64 = 1_767_225_600_000) {
        precondition(devices >= 10)
        rng = RandomStreams(seed: seed).stream("trace.synthetic-world")
        self.devices = devices
        self.epochMs = epochMs
        nextMessageId = Array(repeating: 1, count: devices)
        nextMsgId = Array(repeating: 1, count: devices)
    }

    /// The device records a recorder writes first.
    public func deviceRecords() -> [TraceEvent] {
        (0..<devices).map { .meta(.device(index: $0, deviceId: "u\($0)-mobile", userId: "u\($0)", platform: .mobile, userIndex: $0)) }
    }

    /// Kernel events generated so far.
    public var kernelEvents: UInt64 { eventCount }

    public mutating func next() -> (TraceEvent, SimTime) {
        if index == pending.count { episode() }
        defer { index += 1 }
        let e = pending[index]
        if case .kernel = e.0 { eventCount += 1 }
        return e
    }

    private mutating func latency() -> SimDuration {
        let d = rng.logNormal(median: .milliseconds(50), sigmaMilli: 600)
        return min(d, .seconds(5))
    }

    private static func uid(_ n: UInt64) -> String {
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        var symbols: [Character] = []
        var v = n
        for _ in 0..<14 { symbols.append(alphabet[Int(v & 31)]); v >>= 5 }
        symbols.reverse()
        var s = "BK"
        for (i, c) in symbols.enumerated() {
            if i == 2 || i == 6 || i == 10 { s += "-" }
            s.append(c)
        }
        return s
    }

    private func conn(_ d: Int) -> ConnectionID { ConnectionID(UInt64(d)) }
    private func ms(_ t: SimTime) -> Int64 { epochMs + t.milliseconds }

    private mutating func episode() {
        pending.removeAll(keepingCapacity: true)
        index = 0
        now += rng.below(10) == 0 ? .seconds(Int64(rng.below(5)) + 1) : .milliseconds(Int64(rng.below(400)) + 1)
        var out: [(TraceEvent, SimTime)] = []
        if rng.below(4) == 0 { heartbeat(&out) } else { message(&out) }
        // Stable sort by time: the episode's threads interleave as the kernel would run them.
        pending = out.enumerated().sorted { ($0.element.1, $0.offset) < ($1.element.1, $1.offset) }.map(\.element)
    }

    private mutating func heartbeat(_ out: inout [(TraceEvent, SimTime)]) {
        let d = Int(rng.below(UInt64(devices)))
        let t0 = now, c = conn(d)
        out += [(.kernel(.clientTimer(device: d, .heartbeat)), t0),
                (.clientEffect(device: d, .send(TraceBytes(count: 3), frames: [OutgoingFrame(type: .pingReq)])), t0),
                (.clientEffect(device: d, .setTimer(.pingTimeout, after: .seconds(6))), t0)]
        let t1 = t0 + latency()
        out += [(.kernel(.deliver(c, device: d, toServer: true)), t1), (.serverInput(.bytes(c, TraceBytes(count: 3))), t1),
                (.serverEffect(.send(c, TraceBytes(count: 3), frames: [FrameSummary(type: .pingResp)])), t1),
                (.serverEffect(.setTimer(.sessionIdle(c), after: .seconds(90))), t1)]
        let t2 = t1 + latency()
        out += [(.kernel(.deliver(c, device: d, toServer: false)), t2), (.clientInput(device: d, .transportBytes(TraceBytes(count: 3))), t2),
                (.clientEffect(device: d, .cancelTimer(.pingTimeout)), t2),
                (.clientEffect(device: d, .setTimer(.heartbeat, after: .seconds(30))), t2)]
    }

    private mutating func message(_ out: inout [(TraceEvent, SimTime)]) {
        let sender = Int(rng.below(UInt64(devices)))
        let isGroup = rng.below(3) == 0
        var recipients: [Int] = []
        while recipients.count < (isGroup ? 9 : 1) {
            let r = Int(rng.below(UInt64(devices)))
            if r != sender && !recipients.contains(r) { recipients.append(r) }
        }
        let conv = isGroup ? ConversationKey(.group, "g\(sender % 120)") : ConversationKey(.privateChat, "u\(recipients[0])")
        let length = Int(rng.below(120)) + 20
        let content = TraceContent.digest(length: length, hash: UInt32(truncatingIfNeeded: rng.next()))
        let id = nextMessageId[sender]
        nextMessageId[sender] += 1
        let m = nextMsgId[sender]
        nextMsgId[sender] = m == 65535 ? 1 : m + 1
        let uid = Self.uid(nextUId)
        nextUId += 1
        // As the client core makes them: a 31-bit device tag above a per-device counter.
        let cuid = ClientCore.deviceTag(userId: "u\(sender)", deviceId: "u\(sender)-mobile") << 31 | id
        let t0 = now, c = conn(sender)
        let row = TraceMessage(messageId: id, messageUId: nil, conversation: conv, senderUserId: "u\(sender)", direction: .send,
                               objectName: "RC:TxtMsg", content: content, extra: nil, sentTime: ms(t0), receivedTime: ms(t0),
                               sentStatus: .sending, receivedStatus: 0, flags: 3, clientUniqueId: cuid)
        out += [(.kernel(.workload(user: sender, kind: isGroup ? .groupMessage : .privateMessage)), t0),
                (.clientInput(device: sender, .send(conversation: conv, objectName: "RC:TxtMsg", content: content, pushText: nil, mentioned: false)), t0),
                (.callback(device: sender, .messageInserted(row)), t0),
                (.clientEffect(device: sender, .send(TraceBytes(count: length + 40), frames: [OutgoingFrame(type: .publish, messageId: m, topic: isGroup ? "pgMsgP" : "ppMsgP")])), t0),
                (.clientEffect(device: sender, .setTimer(.requestTimeout(messageId: m), after: .seconds(30))), t0)]
        let t1 = t0 + latency()
        let accepted = AcceptedMessage(messageUId: uid, conversation: conv, senderUserId: "u\(sender)", senderDeviceId: "u\(sender)-mobile",
                                       objectName: "RC:TxtMsg", dataTime: ms(t1), flags: .normal, clientUniqueId: cuid,
                                       recipients: recipients.map { "u\($0)" }.sorted(), contentLength: length, contentHash: StableHash.mix(UInt64(content.hash)))
        out += [(.kernel(.deliver(c, device: sender, toServer: true)), t1),
                (.serverInput(.bytes(c, TraceBytes(count: length + 40))), t1), (.serverEvent(.messageAccepted(accepted)), t1),
                (.serverEffect(.send(c, TraceBytes(count: 40), frames: [FrameSummary(type: .puback, messageId: m)])), t1),
                (.serverEffect(.setTimer(.sessionIdle(c), after: .seconds(90))), t1)]
        let t2 = t1 + latency()
        out += [(.kernel(.deliver(c, device: sender, toServer: false)), t2), (.clientInput(device: sender, .transportBytes(TraceBytes(count: 40))), t2),
                (.clientEffect(device: sender, .cancelTimer(.requestTimeout(messageId: m))), t2),
                (.callback(device: sender, .sendResult(messageId: id, messageUId: uid, sentTime: ms(t1), error: nil)), t2),
                (.clientNote(device: sender, .cursor(name: "sendbox", value: ms(t1))), t2)]
        for r in recipients {
            let rc = conn(r)
            let k = nextMsgId[r]
            nextMsgId[r] = k == 65535 ? 1 : k + 1
            out += [(.serverEvent(.fannedOut(messageUId: uid, userId: "u\(r)", deviceId: "u\(r)-mobile", rc, via: .direct)), t1),
                    (.serverEffect(.send(rc, TraceBytes(count: length + 90), frames: [FrameSummary(type: .publish, messageId: k, topic: "s_msg")])), t1)]
            let t3 = t1 + latency()
            let rid = nextMessageId[r]
            nextMessageId[r] += 1
            let rconv = isGroup ? conv : ConversationKey(.privateChat, "u\(sender)")
            let received = TraceMessage(messageId: rid, messageUId: uid, conversation: rconv, senderUserId: "u\(sender)", direction: .receive,
                                        objectName: "RC:TxtMsg", content: content, extra: nil, sentTime: ms(t1), receivedTime: ms(t3),
                                        sentStatus: .received, receivedStatus: 0, flags: 3, clientUniqueId: nil)
            out += [(.kernel(.deliver(rc, device: r, toServer: false)), t3),
                    (.clientInput(device: r, .transportBytes(TraceBytes(count: length + 90))), t3),
                    (.clientNote(device: r, .stored(messageId: rid, messageUId: uid, conversation: rconv, sentTime: ms(t1), direction: .receive, isNew: true)), t3),
                    (.clientNote(device: r, .cursor(name: "inbox", value: ms(t1))), t3),
                    (.callback(device: r, .received(received, left: 0, offline: false, hasPackage: false)), t3),
                    (.clientEffect(device: r, .send(TraceBytes(count: 4), frames: [OutgoingFrame(type: .puback, messageId: k)])), t3)]
            let t4 = t3 + latency()
            out += [(.kernel(.deliver(rc, device: r, toServer: true)), t4), (.serverInput(.bytes(rc, TraceBytes(count: 4))), t4)]
        }
        now = t2
    }
}
