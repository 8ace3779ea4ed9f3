/// Stream framing (TCP, wire-protocol §1.2): `byte0 · checksum · remaining-length · payload`.
///
/// The remaining length is MQTT's varint (7 bits per byte, least significant group first, 0x80 =
/// more; 1–4 bytes). `checksum = byte0 XOR every remaining-length byte`. With obfuscation (a
/// connection option, default off) every payload byte is XORed with `obfuscationKey[i % 8]`, `i`
/// counted from the payload start. Decode with `StreamDecoder`.
public enum StreamFraming {
    /// The XOR key of the optional payload obfuscation.
    public static let obfuscationKey: [UInt8] = [106, 79, 19, 35, 14, 41, 20, 121]
    /// Largest value four varint bytes can hold.
    public static let maxRemainingLength = 268_435_455

    /// The frame as stream bytes.
    /// Header strings are written as `strings` (default: CESU-8, what the official clients write).
    public static func encode(_ frame: consuming Frame, direction: WireDirection, obfuscated: Bool = false,
                              strings: WireStringEncoding = .cesu8) throws(WireError) -> [UInt8] {
        var out: [UInt8] = []
        try encode(consume frame, direction: direction, obfuscated: obfuscated, strings: strings, into: &out)
        return out
    }

    /// Appends the frame's stream bytes to `out` (several frames can share one buffer / one write).
    /// `consuming`: the frame is moved into the bytes' writer, not copied (its strings and body
    /// retained and released again); a caller that keeps its frame pays that copy.
    public static func encode(_ frame: consuming Frame, direction: WireDirection, obfuscated: Bool = false,
                              strings: WireStringEncoding = .cesu8, into out: inout [UInt8]) throws(WireError) {
        let size = try FrameCodec.payloadSize(frame, direction, strings)
        guard size <= maxRemainingLength else { throw .lengthOverflow(offset: 2) }
        let byte0 = frame.flags.byte0(frame.type)
        out.append(contentsOf: StreamFrameBytes(frame: consume frame, direction: direction, strings: strings,
                                                obfuscated: obfuscated, byte0: byte0, size: size))
    }

    /// XORs `payload` with the repeating key, in place (its own inverse).
    public static func xor(_ payload: UnsafeMutableBufferPointer<UInt8>) {
        // The key as one little-endian word so whole 8-byte blocks take one XOR.
        let key: UInt64 = 0x7914_290E_2313_4F6A
        let words = payload.count / 8
        if words > 0, let base = payload.baseAddress {
            let raw = UnsafeMutableRawPointer(base)
            for w in 0..<words {
                let v = raw.loadUnaligned(fromByteOffset: w * 8, as: UInt64.self)
                raw.storeBytes(of: (UInt64(littleEndian: v) ^ key).littleEndian, toByteOffset: w * 8, as: UInt64.self)
            }
        }
        for i in (words * 8)..<payload.count { payload[i] ^= obfuscationKey[i & 7] }
    }
}

/// One frame's stream bytes as a sequence that `Array.append(contentsOf:)` has write itself,
/// through one pointer, into the array's new storage (`_copyContents`): one allocation of the
/// frame's size for an empty array, no per-byte capacity checks, no temporary buffer.
struct StreamFrameBytes: Sequence {
    let frame: Frame
    let direction: WireDirection
    let strings: WireStringEncoding
    let obfuscated: Bool
    let byte0: UInt8
    /// The payload's size (`FrameCodec.payloadSize`, validated).
    let size: Int

    var lengthBytes: Int { size < 0x80 ? 1 : size < 0x4000 ? 2 : size < 0x20_0000 ? 3 : 4 }
    /// Exact: `append` reserves this much and checks it was written.
    var underestimatedCount: Int { 2 + lengthBytes + size }

    func makeIterator() -> EmptyCollection<UInt8>.Iterator { EmptyCollection<UInt8>.Iterator() }

    __consuming func _copyContents(initializing buf: UnsafeMutableBufferPointer<UInt8>)
        -> (EmptyCollection<UInt8>.Iterator, Int) {
        let count = underestimatedCount
        precondition(buf.count >= count, "frame bytes: no room reserved")
        let start = buf.baseAddress!
        var checksum = byte0
        var n = size
        var k = 2
        repeat {
            var b = UInt8(n & 0x7F)
            n >>= 7
            if n > 0 { b |= 0x80 }
            checksum ^= b
            start[k] = b
            k += 1
        } while n > 0
        start[0] = byte0
        start[1] = checksum
        var w = ByteWriter(start + k)
        FrameCodec.writePayload(frame, direction, strings, to: &w)
        precondition(w.p == start + count, "frame size and writer disagree")
        if obfuscated { StreamFraming.xor(UnsafeMutableBufferPointer(start: start + k, count: size)) }
        return (EmptyCollection<UInt8>.Iterator(), count)
    }
}
