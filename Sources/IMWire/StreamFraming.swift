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
    public static func encode(_ frame: Frame, direction: WireDirection, obfuscated: Bool = false,
                              strings: WireStringEncoding = .cesu8) throws(WireError) -> [UInt8] {
        var out: [UInt8] = []
        try encode(frame, direction: direction, obfuscated: obfuscated, strings: strings, into: &out)
        return out
    }

    /// Appends the frame's stream bytes to `out` (several frames can share one buffer / one write).
    public static func encode(_ frame: Frame, direction: WireDirection, obfuscated: Bool = false,
                              strings: WireStringEncoding = .cesu8, into out: inout [UInt8]) throws(WireError) {
        let size = try FrameCodec.payloadSize(frame, direction, strings)
        guard size <= maxRemainingLength else { throw .lengthOverflow(offset: 2) }
        // Exact for the first frame of a buffer; doubling when frames share one (one write).
        let needed = out.count + 6 + size
        if out.capacity < needed { out.reserveCapacity(out.isEmpty ? needed : max(needed, 2 * out.capacity)) }
        let byte0 = frame.flags.byte0(frame.type)
        out.append(byte0)
        let checksumIndex = out.count
        out.append(0)
        var checksum = byte0
        var n = size
        repeat {
            var b = UInt8(n & 0x7F)
            n >>= 7
            if n > 0 { b |= 0x80 }
            checksum ^= b
            out.append(b)
        } while n > 0
        out[checksumIndex] = checksum
        let payloadStart = out.count
        FrameCodec.writePayload(frame, direction, strings, into: &out)
        if obfuscated {
            out.withUnsafeMutableBufferPointer { buf in
                xor(UnsafeMutableBufferPointer(rebasing: buf[payloadStart...]))
            }
        }
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
