/// Message framing (WebSocket, wire-protocol §1.2): one frame per transport message, byte0 followed
/// directly by the variable header and body — no length, no checksum.
public enum MessageFraming {
    /// The frame as one transport message.
    public static func encode(_ frame: Frame, direction: WireDirection) throws(WireError) -> [UInt8] {
        var out: [UInt8] = []
        try encode(frame, direction: direction, into: &out)
        return out
    }

    /// Appends the frame's bytes to `out`.
    public static func encode(_ frame: Frame, direction: WireDirection, into out: inout [UInt8]) throws(WireError) {
        let size = try FrameCodec.payloadSize(frame, direction)
        out.reserveCapacity(out.count + 1 + size)
        out.append(frame.flags.byte0(frame.type))
        FrameCodec.writePayload(frame, direction, into: &out)
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
}
