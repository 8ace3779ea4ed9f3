import IMClient
import IMServer
import IMWire
import SimKernel

// Field encodings shared by the record schema (Docs/trace-format.md, "Record schema"). Each
// `RecordEncoder` helper has a `RecordDecoder` twin that reads exactly what it wrote.

extension RecordEncoder {
    /// An optional interned string: `uvarint(0)` for nil, else `uvarint(id + 1)` (one byte for
    /// the first 127 strings, like a plain interned string).
    @inlinable mutating func optionalString(_ s: String?) {
        guard let s else { uvarint(UInt64(0)); return }
        let id = state.interner.internID(s)
        state.use(id)
        uvarint(UInt64(id) + 1)
    }

    /// A server or device wall-clock ms value, relative to `epochMs + record time` (so "now"
    /// costs one byte, and a sentTime a few seconds old two).
    @inlinable mutating func wallMs(_ v: Int64, epoch: Int64) {
        varint(v &- (epoch &+ recordTime.milliseconds))
    }

    /// An optional Int32 code (error codes): `uvarint(0)` for nil, else `zigzag(code) + 1`.
    @inlinable mutating func optionalCode(_ c: Int32?) {
        guard let c else { uvarint(UInt64(0)); return }
        uvarint(Varint.zigzag(Int64(c)) &+ 1)
    }

    @inlinable mutating func int32(_ v: Int32) { varint(Int64(v)) }

    /// Conversation: type (wire number) · targetId (interned).
    @inlinable mutating func conversation(_ c: ConversationKey) {
        uvarint(UInt64(UInt32(bitPattern: c.type.rawValue)))
        string(c.targetId)
    }

    mutating func content(_ c: TraceContent) {
        switch c {
        case .digest(let length, let hash):
            uvarint(UInt64(length) << 1)
            fixed32(hash)
        case .text(let s):
            var s = s
            s.withUTF8 { u in
                uvarint(UInt64(u.count) << 1 | 1)
                raw(UnsafeRawBufferPointer(u))
            }
        }
    }

    mutating func optionalContent(_ c: TraceContent?) {
        guard let c else { uvarint(UInt64(0)); return }
        // Shifted by one: 0 is nil.
        switch c {
        case .digest(let length, let hash):
            uvarint((UInt64(length) << 1) + 1)
            fixed32(hash)
        case .text(let s):
            var s = s
            s.withUTF8 { u in
                uvarint((UInt64(u.count) << 1 | 1) + 1)
                raw(UnsafeRawBufferPointer(u))
            }
        }
    }

    mutating func payload(_ p: TraceBytes) {
        if let b = p.bytes {
            uvarint(UInt64(b.count) << 1 | 1)
            raw(b)
        } else {
            uvarint(UInt64(p.count) << 1)
        }
    }

    /// A timer: its stable code (`ClientTimer.Code`), then its payload.
    mutating func clientTimer(_ t: ClientTimer) {
        uvarint(UInt64(t.code.rawValue))
        if case .requestTimeout(let m) = t { uvarint(UInt64(m)) }
    }

    /// A timer: its stable code (`ServerTimer.Code`), then its payload.
    mutating func serverTimer(_ t: ServerTimer) {
        uvarint(UInt64(t.code.rawValue))
        switch t {
        case .sessionIdle(let c), .connectDeadline(let c): connection(c.raw)
        case .queryAckRetry(let c, let m): connection(c.raw); uvarint(UInt64(m))
        case .chatroomAutoDestroy(let r): string(r)
        case .offlineExpiry: break
        case .chatroomBanEnds(let r, let u), .chatroomMuteEnds(let r, let u): string(r); string(u)
        }
    }

    /// Client frames: count · per frame (type · msgId · topic).
    mutating func clientFrames(_ frames: [OutgoingFrame]) {
        uvarint(frames.count)
        for f in frames {
            uvarint(UInt64(f.type.rawValue))
            uvarint(UInt64(f.messageId))
            string(f.topic)
        }
    }

    /// Server frames: count · per frame (type << 1 | dup · msgId · topic).
    mutating func serverFrames(_ frames: [FrameSummary]) {
        uvarint(frames.count)
        for f in frames {
            uvarint(UInt64(f.type.rawValue) << 1 | (f.dup ? 1 : 0))
            uvarint(UInt64(f.messageId))
            string(f.topic)
        }
    }

    mutating func strings(_ list: [String]) {
        uvarint(list.count)
        for s in list { string(s) }
    }

    /// messageUIds: count · n × `uid`.
    mutating func uids(_ list: [String]) {
        uvarint(list.count)
        for s in list { uid(s) }
    }
}

extension RecordDecoder {
    @inlinable func invalid(_ at: Int, _ field: String, _ value: String) -> RecordDecodeError {
        RecordDecodeError(record: record, offset: at, reason: .invalidValue(field: field, value: value))
    }

    mutating func optionalString() throws(RecordDecodeError) -> String? {
        let at = offset
        let v = try uvarint()
        if v == 0 { return nil }
        let id = v - 1
        guard id <= UInt64(UInt32.max), let s = block.strings[UInt32(id)] else { throw fail(at, .badStringID(id)) }
        return s
    }

    mutating func wallMs(epoch: Int64) throws(RecordDecodeError) -> Int64 {
        try varint() &+ epoch &+ recordTime.milliseconds
    }

    mutating func optionalCode() throws(RecordDecodeError) -> Int32? {
        let at = offset
        let v = try uvarint()
        if v == 0 { return nil }
        let c = Varint.unzigzag(v - 1)
        guard let i = Int32(exactly: c) else { throw invalid(at, "code", "\(c)") }
        return i
    }

    mutating func int32() throws(RecordDecodeError) -> Int32 {
        let at = offset
        let v = try varint()
        guard let i = Int32(exactly: v) else { throw invalid(at, "int32", "\(v)") }
        return i
    }

    mutating func int() throws(RecordDecodeError) -> Int { Int(try varint()) }

    mutating func uint16() throws(RecordDecodeError) -> UInt16 {
        let at = offset
        let v = try uvarint()
        guard v <= UInt64(UInt16.max) else { throw fail(at, .outOfRange(value: v, max: UInt64(UInt16.max))) }
        return UInt16(v)
    }

    /// A conversation, or nil written as type 0.
    mutating func optionalConversation() throws(RecordDecodeError) -> ConversationKey? {
        var peek = self
        if try peek.uvarint() == 0 { self = peek; return nil }
        return try conversation()
    }

    mutating func conversation() throws(RecordDecodeError) -> ConversationKey {
        let at = offset
        let t = try uvarint()
        guard t <= UInt64(Int32.max), let type = ConversationType(rawValue: Int32(t)) else {
            throw invalid(at, "conversation type", "\(t)")
        }
        return ConversationKey(type, try string())
    }

    /// A string-valued enum stored as its interned raw value.
    mutating func rawEnum<E: RawRepresentable>(_: E.Type, _ field: String) throws(RecordDecodeError) -> E
        where E.RawValue == String {
        let at = offset
        let s = try string()
        guard let v = E(rawValue: s) else { throw invalid(at, field, s) }
        return v
    }

    /// An Int32-valued enum stored as a zigzag varint.
    mutating func intEnum<E: RawRepresentable>(_: E.Type, _ field: String) throws(RecordDecodeError) -> E
        where E.RawValue == Int32 {
        let at = offset
        let v = try varint()
        guard let i = Int32(exactly: v), let e = E(rawValue: i) else { throw invalid(at, field, "\(v)") }
        return e
    }

    private mutating func utf8Raw(count: Int, at: Int) throws(RecordDecodeError) -> String {
        let b = try raw(count: count)
        guard let s = b.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else { throw fail(at, .invalidUTF8) }
        return s
    }

    private mutating func contentBody(_ head: UInt64, at: Int) throws(RecordDecodeError) -> TraceContent {
        guard head >> 1 <= UInt64(Int32.max) else { throw invalid(at, "content length", "\(head >> 1)") }
        let n = Int(head >> 1)
        if head & 1 == 1 { return .text(try utf8Raw(count: n, at: at)) }
        return .digest(length: n, hash: try fixed32())
    }

    mutating func content() throws(RecordDecodeError) -> TraceContent {
        let at = offset
        return try contentBody(try uvarint(), at: at)
    }

    mutating func optionalContent() throws(RecordDecodeError) -> TraceContent? {
        let at = offset
        let h = try uvarint()
        if h == 0 { return nil }
        return try contentBody(h - 1, at: at)
    }

    mutating func payload() throws(RecordDecodeError) -> TraceBytes {
        let at = offset
        let h = try uvarint()
        guard h >> 1 <= UInt64(Int32.max) else { throw invalid(at, "byte count", "\(h >> 1)") }
        let n = Int(h >> 1)
        if h & 1 == 1 { return TraceBytes(bytes: Array(try raw(count: n))) }
        return TraceBytes(count: n)
    }

    mutating func clientTimer() throws(RecordDecodeError) -> ClientTimer {
        let at = offset
        let v = try uvarint()
        guard v <= UInt64(UInt8.max), let code = ClientTimer.Code(rawValue: UInt8(v)) else { throw invalid(at, "client timer", "\(v)") }
        switch code {
        case .connackTimeout: return .connackTimeout
        case .heartbeat: return .heartbeat
        case .pingTimeout: return .pingTimeout
        case .reconnect: return .reconnect
        case .backgroundClose: return .backgroundClose
        case .connectTimeLimit: return .connectTimeLimit
        case .requestTimeout: return .requestTimeout(messageId: try uint16())
        case .poll: return .poll
        case .storeRetry: return .storeRetry
        }
    }

    mutating func serverTimer() throws(RecordDecodeError) -> ServerTimer {
        let at = offset
        let v = try uvarint()
        guard v <= UInt64(UInt8.max), let code = ServerTimer.Code(rawValue: UInt8(v)) else { throw invalid(at, "server timer", "\(v)") }
        switch code {
        case .sessionIdle: return .sessionIdle(try connection())
        case .queryAckRetry: return .queryAckRetry(try connection(), messageId: try uint16())
        case .connectDeadline: return .connectDeadline(try connection())
        case .chatroomAutoDestroy: return .chatroomAutoDestroy(roomId: try string())
        case .offlineExpiry: return .offlineExpiry
        case .chatroomBanEnds: return .chatroomBanEnds(roomId: try string(), userId: try string())
        case .chatroomMuteEnds: return .chatroomMuteEnds(roomId: try string(), userId: try string())
        }
    }

    private mutating func frameType() throws(RecordDecodeError) -> (FrameType, Bool) {
        let at = offset
        let v = try uvarint()
        guard v >> 1 <= 15, let t = FrameType(rawValue: UInt8(v >> 1)) else { throw invalid(at, "frame type", "\(v >> 1)") }
        return (t, v & 1 == 1)
    }

    mutating func count(_ field: String) throws(RecordDecodeError) -> Int {
        let at = offset
        let n = try uvarint()
        // Every element takes at least one byte: a count beyond the body is damage, not a reason to allocate.
        guard n <= UInt64(remaining) else { throw invalid(at, field, "\(n)") }
        return Int(n)
    }

    mutating func clientFrames() throws(RecordDecodeError) -> [OutgoingFrame] {
        let n = try count("frame count")
        var out: [OutgoingFrame] = []
        out.reserveCapacity(n)
        for _ in 0..<n {
            let at = offset
            let v = try uvarint()
            guard v <= 15, let t = FrameType(rawValue: UInt8(v)) else { throw invalid(at, "frame type", "\(v)") }
            out.append(OutgoingFrame(type: t, messageId: try uint16(), topic: try string()))
        }
        return out
    }

    mutating func serverFrames() throws(RecordDecodeError) -> [FrameSummary] {
        let n = try count("frame count")
        var out: [FrameSummary] = []
        out.reserveCapacity(n)
        for _ in 0..<n {
            let (t, dup) = try frameType()
            out.append(FrameSummary(type: t, messageId: try uint16(), dup: dup, topic: try string()))
        }
        return out
    }

    mutating func strings() throws(RecordDecodeError) -> [String] {
        let n = try count("string count")
        var out: [String] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(try string()) }
        return out
    }

    mutating func uids() throws(RecordDecodeError) -> [String] {
        let n = try count("uid count")
        var out: [String] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(try uid()) }
        return out
    }
}
