/// Incremental decoder for stream framing: `feed` it bytes as they arrive, get back every frame
/// completed so far.
///
/// - Input may be split at any byte and one read may hold several frames.
/// - Headers are checked as soon as they are complete, in this order: remaining length (≤ 4 bytes,
///   minimal), checksum, frame type and QoS, frame size ≤ `maxFrameSize`. An oversize frame is
///   rejected from its header alone: the claimed size is never allocated or waited for.
/// - Errors are final (the connection must be closed): once `failure` is set every later call
///   throws it. When a read holds good frames followed by a bad one, `feed` returns the good frames
///   and the next call throws — exactly what a transport that delivers frame by frame would see.
/// - Error offsets count from the first byte ever fed to this decoder.
public struct StreamDecoder: Sendable {
    /// 128 KiB body (the content limit) + 4 KiB for the headers and the protobuf envelope.
    public static let defaultMaxFrameSize = 128 * 1024 + 4 * 1024

    /// Direction of the frames this decoder reads (PUBLISH/PUBACK layouts differ).
    public let direction: WireDirection
    /// Largest accepted frame, all headers included.
    public let maxFrameSize: Int
    /// Whether payloads are XOR-obfuscated (§1.2).
    public let obfuscated: Bool
    /// The error that ended this stream, if any.
    public private(set) var failure: WireError?
    /// `failure != nil` as a tag test: `==` on `WireError?` copies both sides into a tuple.
    @inline(__always) var failed: Bool { if case .some = failure { true } else { false } }
    /// Bytes consumed by complete frames so far (= stream offset of the next frame's byte0).
    public private(set) var consumedByteCount: Int = 0
    /// Frames decoded so far.
    public private(set) var frameCount: Int = 0
    /// Decode as liberally as the official decoders (extra bytes after fixed-layout frames, QoS 3),
    /// collecting `notes` instead of failing. Off by default (strict).
    public var lenient = false
    /// What a lenient decode accepted, in stream order (offsets from the first byte fed).
    public var notes: [WireNote] = []

    private var pending: [UInt8] = []     // bytes of an incomplete frame
    private var scratch: [UInt8] = []     // de-obfuscated payload (reused)

    public init(direction: WireDirection, maxFrameSize: Int = StreamDecoder.defaultMaxFrameSize, obfuscated: Bool = false) {
        self.direction = direction
        self.maxFrameSize = max(2, maxFrameSize)
        self.obfuscated = obfuscated
    }

    /// Bytes held back because they do not complete a frame yet.
    public var bufferedByteCount: Int { pending.count }

    /// Adds bytes and returns the frames they complete, in order.
    public mutating func feed(_ bytes: [UInt8]) throws(WireError) -> [Frame] {
        try bytes.withUnsafeBufferPointer { (buf) throws(WireError) -> [Frame] in try feed(buf) }
    }

    /// Adds bytes and returns the frames they complete, in order.
    public mutating func feed(_ bytes: ArraySlice<UInt8>) throws(WireError) -> [Frame] {
        try bytes.withUnsafeBufferPointer { (buf) throws(WireError) -> [Frame] in try feed(buf) }
    }

    /// Adds bytes and returns the frames they complete, in order.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) throws(WireError) -> [Frame] {
        var frames: [Frame] = []
        try feed(bytes, into: &frames)
        return frames
    }

    /// Adds bytes and appends the frames they complete to `frames`, in order (a caller can reuse
    /// one array's storage from read to read). Throws as `feed(_:)` does: only when the bytes
    /// completed no frame.
    public mutating func feed(_ bytes: [UInt8], into frames: inout [Frame]) throws(WireError) {
        try bytes.withUnsafeBufferPointer { (buf) throws(WireError) in try feed(buf, into: &frames) }
    }

    /// Adds bytes and appends the frames they complete to `frames`, in order.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, into frames: inout [Frame]) throws(WireError) {
        if let f = failure { throw f }
        let before = frames.count
        if pending.isEmpty {
            // Fast path: decode straight from the caller's buffer, keep only the incomplete tail.
            let used = decodeFrames(bytes, into: &frames)
            if !failed, used < bytes.count {
                pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[used...]))
            }
        } else {
            var buf = pending
            pending = []
            buf.append(contentsOf: bytes)
            let used = buf.withUnsafeBufferPointer { decodeFrames($0, into: &frames) }
            if !failed {
                if used > 0 { buf.removeFirst(used) }
                pending = buf
            }
        }
        if let f = failure, frames.count == before { throw f }
    }

    /// Call at the end of the stream: throws `.truncated` if a frame was left incomplete.
    public func finish() throws(WireError) {
        if let f = failure { throw f }
        guard !pending.isEmpty else { return }
        let had = pending.count
        let offset = consumedByteCount
        switch Self.header(pending) {
        case .needMore(let field, let needed):
            throw .truncated(field: field, needed: needed, had: had, offset: offset)
        case .complete(_, let total):
            throw .truncated(field: "payload", needed: total, had: had, offset: offset)
        }
    }

    private enum HeaderState {
        case needMore(field: String, needed: Int)
        case complete(lengthBytes: Int, total: Int)
    }

    /// How far the header of the frame at the start of `buf` is; no validation.
    private static func header(_ buf: [UInt8]) -> HeaderState {
        if buf.count < 2 { return .needMore(field: "fixed header", needed: 2) }
        var length = 0
        for k in 0..<4 {
            guard 2 + k < buf.count else { return .needMore(field: "remaining length", needed: 3 + k) }
            let b = buf[2 + k]
            length |= Int(b & 0x7F) << (7 * k)
            if b & 0x80 == 0 { return .complete(lengthBytes: k + 1, total: 2 + k + 1 + length) }
        }
        return .complete(lengthBytes: 4, total: 6 + length)
    }

    /// Decodes every complete frame at the start of `buf`; returns the bytes used. On a bad frame
    /// sets `failure` and stops.
    private mutating func decodeFrames(_ buf: UnsafeBufferPointer<UInt8>, into frames: inout [Frame]) -> Int {
        var i = 0
        let n = buf.count
        while n - i >= 3 {
            let base = consumedByteCount    // stream offset of buf[i]
            let byte0 = buf[i]
            // Remaining length: 1–4 bytes.
            var length = 0
            var lengthBytes = 0
            var xorOfLength: UInt8 = 0
            var complete = false
            while lengthBytes < 4 {
                let at = i + 2 + lengthBytes
                guard at < n else { break }
                let b = buf[at]
                xorOfLength ^= b
                length |= Int(b & 0x7F) << (7 * lengthBytes)
                lengthBytes += 1
                if b & 0x80 == 0 {
                    if b == 0, lengthBytes > 1 {
                        failure = .nonMinimalLength(offset: base + 2 + lengthBytes - 1)
                        return i
                    }
                    complete = true
                    break
                }
                if lengthBytes == 4 {
                    failure = .lengthOverflow(offset: base + 5)
                    return i
                }
            }
            guard complete else { break }
            let expected = byte0 ^ xorOfLength
            if buf[i + 1] != expected {
                failure = .badChecksum(expected: expected, found: buf[i + 1], offset: base + 1)
                return i
            }
            let type: FrameType, flags: FrameFlags
            do {
                (type, flags) = try FrameFlags.parse(byte0: byte0, offset: base, lenient: lenient)
            } catch {
                failure = error
                return i
            }
            let headerSize = 2 + lengthBytes
            let total = headerSize + length
            if total > maxFrameSize {
                failure = .frameTooLarge(size: total, limit: maxFrameSize, offset: base + 2)
                return i
            }
            guard n - i >= total else { break }
            let payload = UnsafeBufferPointer(rebasing: buf[(i + headerSize)..<(i + total)])
            let dir = direction
            let lenient = lenient
            if flags.qos == .sdkDefault { notes.append(.qos3(offset: base)) }
            var frameNotes: [WireNote] = []
            // `+=` of nothing still gives a shared empty `notes` a buffer of its own.
            defer { if !frameNotes.isEmpty { notes += frameNotes } }
            do {
                let frame: Frame
                if obfuscated {
                    scratch.removeAll(keepingCapacity: true)
                    scratch.append(contentsOf: payload)
                    frame = try scratch.withUnsafeMutableBufferPointer { (p: inout UnsafeMutableBufferPointer<UInt8>) throws(WireError) -> Frame in
                        StreamFraming.xor(p)
                        return try FrameCodec.decode(type: type, flags: flags, payload: UnsafeBufferPointer(p),
                                                     direction: dir, payloadOrigin: base + headerSize,
                                                     lenient: lenient, notes: &frameNotes)
                    }
                } else {
                    frame = try FrameCodec.decode(type: type, flags: flags, payload: payload,
                                                  direction: dir, payloadOrigin: base + headerSize,
                                                  lenient: lenient, notes: &frameNotes)
                }
                frames.append(frame)
            } catch {
                failure = error
                return i
            }
            i += total
            consumedByteCount += total
            frameCount += 1
        }
        return i
    }
}
