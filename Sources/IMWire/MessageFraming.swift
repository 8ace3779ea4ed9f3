/// Message framing (WebSocket, wire-protocol §1.2): one frame per transport message, byte0 followed
/// directly by the variable header and body — no length, no checksum.
public enum MessageFraming {
    /// The frame as one transport message.
    /// Header strings are written as `strings` (default: CESU-8, what the official clients write).
    public static func encode(_ frame: Frame, direction: WireDirection, strings: WireStringEncoding = .cesu8) throws(WireError) -> [UInt8] {
        var out: [UInt8] = []
        try encode(frame, direction: direction, strings: strings, into: &out)
        return out
    }

    /// Appends the frame's bytes to `out`.
    public static func encode(_ frame: Frame, direction: WireDirection, strings: WireStringEncoding = .cesu8,
                              into out: inout [UInt8]) throws(WireError) {
        let size = try FrameCodec.payloadSize(frame, direction, strings)
        let count = 1 + size
        let start = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
        defer { start.deallocate() }
        start.initialize(to: frame.flags.byte0(frame.type))
        var w = ByteWriter(start + 1)
        FrameCodec.writePayload(frame, direction, strings, to: &w)
        precondition(w.p == start + count, "frame size and writer disagree")
        out.append(written: UnsafeBufferPointer(start: start, count: count))
    }

    /// Decodes exactly one frame from one transport message.
    public static func decode(_ message: [UInt8], direction: WireDirection) throws(WireError) -> Frame {
        try message.withUnsafeBufferPointer { (buf) throws(WireError) -> Frame in
            try decode(buf, direction: direction)
        }
    }

    /// Decodes exactly one frame from one transport message.
    public static func decode(_ message: UnsafeBufferPointer<UInt8>, direction: WireDirection) throws(WireError) -> Frame {
        guard let byte0 = message.first else {
            throw .truncated(field: "fixed header", needed: 1, had: 0, offset: 0)
        }
        let (type, flags) = try FrameFlags.parse(byte0: byte0, offset: 0)
        return try FrameCodec.decode(type: type, flags: flags, payload: UnsafeBufferPointer(rebasing: message[1...]),
                                     direction: direction, payloadOrigin: 1)
    }

    /// Decodes one frame as liberally as the official decoders: extra bytes after a fixed-layout
    /// frame and QoS 3 are accepted and reported as notes (`decode` rejects them).
    public static func decodeLenient(_ message: [UInt8], direction: WireDirection) throws(WireError) -> (Frame, [WireNote]) {
        try message.withUnsafeBufferPointer { (buf) throws(WireError) -> (Frame, [WireNote]) in
            guard let byte0 = buf.first else {
                throw .truncated(field: "fixed header", needed: 1, had: 0, offset: 0)
            }
            let (type, flags) = try FrameFlags.parse(byte0: byte0, offset: 0, lenient: true)
            var notes: [WireNote] = flags.qos == .sdkDefault ? [.qos3(offset: 0)] : []
            let frame = try FrameCodec.decode(type: type, flags: flags, payload: UnsafeBufferPointer(rebasing: buf[1...]),
                                              direction: direction, payloadOrigin: 1, lenient: true, notes: &notes)
            return (frame, notes)
        }
    }
}
