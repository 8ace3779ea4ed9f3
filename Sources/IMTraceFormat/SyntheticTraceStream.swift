import SimKernel

/// A deterministic, IM-shaped record stream for `imsim bench trace-container`, the
/// `imsim trace write-synthetic` test helper and the container tests: 8 kinds (send, accept,
/// deliver, store, notify, timer, connection, drop) in message lifecycles (send → accept → per
/// group member deliver, store, notify), small device/conversation ids, growing message ids,
/// µs-granular link delays, ms/s think times, 0 deltas within a delivery, and occasional
/// interned strings (connection statuses, drop reasons).
///
/// Only the container is exercised: the world's real record schema comes later.
public struct SyntheticTraceStream: Sendable {
    public enum Kind: UInt16, CaseIterable, Sendable {
        case send, accept, deliver, store, notify, timer, connection, drop
    }

    public struct Record: Hashable, Sendable {
        public var kind: Kind
        public var time: SimTime
        public var device: UInt32 = 0
        public var conversation: UInt32 = 0
        public var messageID: UInt64 = 0
        public var count: UInt32 = 0
        public var flag = false
        public var hash: UInt64 = 0
        public var duration = SimDuration.zero
        public var text = ""
    }

    public static let statuses = ["CONNECTED", "CONNECTING", "NETWORK_UNAVAILABLE", "KICKED_OFFLINE_BY_OTHER_CLIENT",
                                  "SUSPEND", "TIMEOUT", "TOKEN_INCORRECT", "SIGN_OUT"]
    public static let reasons = ["chatroom quota", "offline STATUS", "kicked", "expired", "link down",
                                 "duplicate messageUId", "rate limited", "queue full"]

    private var rng: RandomStream
    private var now = SimTime.zero
    private var nextMessage: UInt64 = 1
    private var pending: [Record] = []
    private var pendingIndex = 0
    private var unread: [UInt32]
    public let devices: UInt32
    public let conversations: UInt32

    public init(seed: UInt64, devices: UInt32 = 1000, conversations: UInt32 = 300) {
        precondition(devices >= 8 && conversations >= 1)
        rng = RandomStreams(seed: seed).stream("trace.synthetic")
        self.devices = devices
        self.conversations = conversations
        unread = Array(repeating: 0, count: Int(devices))
        pending.reserveCapacity(64)
    }

    /// The next record (time never decreases).
    public mutating func next() -> Record {
        if pendingIndex == pending.count { episode() }
        defer { pendingIndex += 1 }
        return pending[pendingIndex]
    }

    /// Members of a conversation: 2–8 devices derived from its id (stable, no storage).
    private func members(_ c: UInt32) -> [UInt32] {
        let n = 2 + Int(c % 7)
        return (0..<n).map { i in UInt32((UInt64(c) &* 7919 &+ UInt64(i) &* 104_729) % UInt64(devices)) }
    }

    private mutating func linkDelay() -> SimDuration { .microseconds(rng.uniform(200...40_000)) }

    /// One burst of activity: usually a message's life (send → accept → per member deliver,
    /// store, notify), sometimes a heartbeat timer or a connection change.
    private mutating func episode() {
        pending.removeAll(keepingCapacity: true)
        pendingIndex = 0
        // Think time between bursts: whole ms, sometimes whole seconds.
        now += rng.below(10) == 0 ? .seconds(rng.uniform(1...20)) : .milliseconds(rng.uniform(1...800))
        let roll = rng.below(100)
        if roll < 8 {
            let device = UInt32(rng.below(UInt64(devices)))
            var r = Record(kind: .timer, time: now, device: device)
            r.duration = .seconds(30)
            pending.append(r)
            return
        }
        if roll < 10 {
            var r = Record(kind: .connection, time: now, device: UInt32(rng.below(UInt64(devices))))
            r.text = Self.statuses[Int(rng.below(UInt64(Self.statuses.count)))]
            pending.append(r)
            return
        }
        let c = UInt32(rng.below(UInt64(conversations)))
        let group = members(c)
        let sender = group[Int(rng.below(UInt64(group.count)))]
        let id = nextMessage
        nextMessage += 1
        pending.append(Record(kind: .send, time: now, device: sender, conversation: c, messageID: id,
                              count: UInt32(rng.uniform(1...500))))
        var t = now + linkDelay()
        pending.append(Record(kind: .accept, time: t, device: sender, conversation: c, messageID: id, hash: rng.next()))
        for m in group where m != sender {
            t += linkDelay()
            if rng.below(50) == 0 {
                var r = Record(kind: .drop, time: t, device: m, messageID: id)
                r.text = Self.reasons[Int(rng.below(UInt64(Self.reasons.count)))]
                pending.append(r)
                continue
            }
            pending.append(Record(kind: .deliver, time: t, device: m, messageID: id))
            pending.append(Record(kind: .store, time: t, device: m, messageID: id, flag: rng.below(20) == 0))
            unread[Int(m)] += 1
            pending.append(Record(kind: .notify, time: t, device: m, conversation: c, messageID: id, count: unread[Int(m)]))
            if rng.below(4) == 0 { unread[Int(m)] = 0 }  // the user read the conversation
        }
        now = t  // fan-out delays accumulate, so the burst is already in time order
    }

    /// Writes the record's body (the kind and time go in the record head).
    public static func encode(_ r: Record, into e: inout RecordEncoder) {
        e.uvarint(r.device)
        switch r.kind {
        case .send:
            e.uvarint(r.conversation); e.uvarint(r.messageID); e.uvarint(r.count)
        case .accept:
            e.uvarint(r.conversation); e.uvarint(r.messageID); e.fixed64(r.hash)
        case .deliver:
            e.uvarint(r.messageID)
        case .store:
            e.uvarint(r.messageID); e.bool(r.flag)
        case .notify:
            e.uvarint(r.conversation); e.uvarint(r.messageID); e.uvarint(r.count)
        case .timer:
            e.duration(r.duration)
        case .connection:
            e.string(r.text)
        case .drop:
            e.uvarint(r.messageID); e.string(r.text)
        }
    }

    /// Appends `r` to `writer`.
    public static func append(_ r: Record, to writer: TraceWriter) throws(TraceError) {
        try writer.append(kind: r.kind.rawValue, time: r.time) { encode(r, into: &$0) }
    }

    /// Reads a record written by `append`, checking that the body holds exactly its fields.
    public static func decode(_ t: TraceRecord) throws(TraceError) -> Record {
        guard let kind = Kind(rawValue: t.kind) else {
            throw .record(RecordDecodeError(record: t.index, offset: 0, reason: .outOfRange(value: UInt64(t.kind), max: 7)))
        }
        return try t.decode { (d) throws(RecordDecodeError) -> Record in
            var r = Record(kind: kind, time: t.time)
            r.device = try d.uvarint32()
            switch kind {
            case .send:
                r.conversation = try d.uvarint32(); r.messageID = try d.uvarint(); r.count = try d.uvarint32()
            case .accept:
                r.conversation = try d.uvarint32(); r.messageID = try d.uvarint(); r.hash = try d.fixed64()
            case .deliver:
                r.messageID = try d.uvarint()
            case .store:
                r.messageID = try d.uvarint(); r.flag = try d.bool()
            case .notify:
                r.conversation = try d.uvarint32(); r.messageID = try d.uvarint(); r.count = try d.uvarint32()
            case .timer:
                r.duration = try d.duration()
            case .connection:
                r.text = try d.string()
            case .drop:
                r.messageID = try d.uvarint(); r.text = try d.string()
            }
            try d.expectEnd()
            return r
        }
    }

    /// The first `count` records of the stream for `seed`.
    public static func records(seed: UInt64, count: Int) -> [Record] {
        var s = SyntheticTraceStream(seed: seed)
        return (0..<count).map { _ in s.next() }
    }
}
