import IMWire
import SimKernel
import SwiftProtobuf

/// Workloads of `imsim bench codec`. Each `run…` does `rounds` full encode → stream-decode cycles
/// and returns a checksum of what it decoded (so nothing is optimised away, and two runs can be
/// compared). Timing lives in the CLI; these are plain deterministic functions.
public enum WireBenchmark {
    public struct Result: Sendable, Hashable, Codable {
        /// Frames encoded and decoded.
        public var frames: Int
        /// Stream-framed bytes per direction (each byte was written once and parsed once).
        public var bytes: Int
        public var checksum: UInt64
    }

    /// A typical server→client `s_msg` delivery: DownStreamMessage with a short RC:TxtMsg.
    public static func sampleDownStreamMessage(_ i: Int = 0) -> RMTPDownStreamMessage {
        var m = RMTPDownStreamMessage()
        m.fromUserID = "alice"
        m.type = ConversationType.privateChat.rawValue
        m.groupID = "bob"
        m.classname = TextContent.objectName
        m.contentBytes = (try? MessageContent.text(TextContent(content: "See you at 7? Bring the slides (msg \(i))")).encoded()) ?? []
        m.dataTime = 1_763_769_600_123 + Int64(i)
        m.status = DownStreamStatus(persistent: .isCounted).rawValue
        m.msgID = "BQ6S-TQ9E-RD5K-\(1000 + i % 9000)"
        m.direction = 2
        m.clientUniqueID = 1_763_769_600_000_123 + Int64(i)
        return m
    }

    /// The `s_msg` PUBLISH of message `i`.
    public static func samplePublish(_ i: Int = 0) throws(WireError) -> Frame {
        .publish(try Frame.Publish(flags: .atLeastOnce, date: 1_763_769_600, topic: .s_msg, targetId: "alice",
                                   messageId: UInt16(1 + i % 65535), message: sampleDownStreamMessage(i)))
    }

    /// A pull answer: QUERYACK with a DownStreamMessages page of `count`.
    public static func samplePullPage(count: Int = 20) throws(WireError) -> Frame {
        var page = RMTPDownStreamMessages()
        page.list = (0..<count).map { sampleDownStreamMessage($0) }
        page.syncTime = page.list.last?.dataTime ?? 0
        page.finished = false
        return .queryAck(try Frame.QueryAck(messageId: 7, date: 1_763_769_601, message: page))
    }

    /// Body codec: the normal path (`ProtoBody`, with the hand-written fast path for hot messages)
    /// or, with `reference`, swift-protobuf's generated code alone — the baseline it is compared to.
    static func encodeBody(_ m: some SwiftProtobuf.Message, reference: Bool) throws(WireError) -> [UInt8] {
        guard reference else { return try ProtoBody.encode(m) }
        do { return try m.serializedBytes() } catch {
            throw .protobuf(message: type(of: m).protoMessageName, field: nil, reason: "\(error)", offset: 0)
        }
    }

    static func decodeBody<M: SwiftProtobuf.Message>(_ t: M.Type, _ b: [UInt8], reference: Bool) throws(WireError) -> M {
        guard reference else { return try ProtoBody.decode(t, from: b) }
        do { return try M(serializedBytes: b) } catch {
            throw .protobuf(message: M.protoMessageName, field: nil, reason: "\(error)", offset: 0)
        }
    }

    /// Full path of a direct delivery: build + serialise the DownStreamMessage, stream-frame it,
    /// feed the bytes to a `StreamDecoder`, parse the body back.
    public static func runPublish(rounds: Int, reference: Bool = false) throws(WireError) -> Result {
        var decoder = StreamDecoder(direction: .serverToClient)
        var wire: [UInt8] = []
        var bytes = 0
        var sum: UInt64 = 0
        let message = sampleDownStreamMessage()
        for i in 0..<rounds {
            var m = message
            m.dataTime &+= Int64(i)
            let frame = Frame.publish(Frame.Publish(date: 1_763_769_600, topic: .s_msg, targetId: "alice",
                                                    messageId: UInt16(truncatingIfNeeded: i | 1),
                                                    body: try encodeBody(m, reference: reference)))
            wire.removeAll(keepingCapacity: true)
            try StreamFraming.encode(frame, direction: .serverToClient, into: &wire)
            bytes += wire.count
            for f in try decoder.feed(wire) {
                guard case .publish(let p) = f else { continue }
                let d = try decodeBody(RMTPDownStreamMessage.self, p.body, reference: reference)
                sum = sum &+ UInt64(bitPattern: d.dataTime) &+ UInt64(p.messageId)
            }
        }
        return Result(frames: rounds, bytes: bytes, checksum: sum)
    }

    /// Framing only: the body is already serialised and is not parsed back.
    public static func runFramingOnly(rounds: Int) throws(WireError) -> Result {
        guard case .publish(var p) = try samplePublish() else { return Result(frames: 0, bytes: 0, checksum: 0) }
        var decoder = StreamDecoder(direction: .serverToClient)
        var wire: [UInt8] = []
        var bytes = 0
        var sum: UInt64 = 0
        for i in 0..<rounds {
            p.messageId = UInt16(truncatingIfNeeded: i | 1)
            wire.removeAll(keepingCapacity: true)
            try StreamFraming.encode(.publish(p), direction: .serverToClient, into: &wire)
            bytes += wire.count
            for f in try decoder.feed(wire) {
                if case .publish(let q) = f { sum = sum &+ UInt64(q.messageId) &+ UInt64(q.body.count) }
            }
        }
        return Result(frames: rounds, bytes: bytes, checksum: sum)
    }

    /// A page of `pageSize` messages per frame: serialise DownStreamMessages into a QUERYACK, frame,
    /// decode, parse the page.
    public static func runPullPage(rounds: Int, pageSize: Int = 20, reference: Bool = false) throws(WireError) -> Result {
        var page = RMTPDownStreamMessages()
        page.list = (0..<pageSize).map { sampleDownStreamMessage($0) }
        page.finished = false
        var decoder = StreamDecoder(direction: .serverToClient)
        var wire: [UInt8] = []
        var bytes = 0
        var sum: UInt64 = 0
        for i in 0..<rounds {
            page.syncTime = 1_763_769_600_000 + Int64(i)
            let frame = Frame.queryAck(Frame.QueryAck(messageId: UInt16(truncatingIfNeeded: i | 1), date: 1_763_769_601,
                                                      body: try encodeBody(page, reference: reference)))
            wire.removeAll(keepingCapacity: true)
            try StreamFraming.encode(frame, direction: .serverToClient, into: &wire)
            bytes += wire.count
            for f in try decoder.feed(wire) {
                guard case .queryAck(let q) = f else { continue }
                let d = try decodeBody(RMTPDownStreamMessages.self, q.body, reference: reference)
                sum = sum &+ UInt64(bitPattern: d.syncTime) &+ UInt64(d.list.count)
            }
        }
        return Result(frames: rounds, bytes: bytes, checksum: sum)
    }

    /// Content JSON only: encode a TextContent and decode it back.
    public static func runTextContent(rounds: Int) throws(WireError) -> Result {
        var bytes = 0
        var sum: UInt64 = 0
        for i in 0..<rounds {
            let c = MessageContent.text(TextContent(content: "See you at 7? Bring the slides", extra: i & 1 == 0 ? nil : "x"))
            let b = try c.encoded()
            bytes += b.count
            if case .text(let t) = try MessageContent.decode(objectName: TextContent.objectName, bytes: b) {
                sum = sum &+ UInt64(t.content.utf8.count) &+ (t.extra == nil ? 0 : 1)
            }
        }
        return Result(frames: rounds, bytes: bytes, checksum: sum)
    }
}
