/// Standard base64 (RFC 4648, with `=` padding) for frame bytes, with errors that name the
/// character offset.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(n >> UInt32(shift) & 63)]) }
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(rest == 2 ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }

    struct DecodeError: Error { var offset: Int; var reason: String }

    /// Decodes; on failure returns the offset of the offending character and why.
    static func decode(_ text: String) -> Result<[UInt8], DecodeError> {
        let u = Array(text.utf8)
        guard u.count % 4 == 0 else { return .failure(DecodeError(offset: u.count, reason: "length \(u.count) is not a multiple of 4")) }
        var out: [UInt8] = []
        out.reserveCapacity(u.count / 4 * 3)
        var i = 0
        while i < u.count {
            var n: UInt32 = 0
            var pad = 0
            for j in 0..<4 {
                let c = u[i + j]
                if c == UInt8(ascii: "=") && i + 4 == u.count && j >= 2 {
                    pad += 1
                    n <<= 6
                    continue
                }
                if pad > 0 { return .failure(DecodeError(offset: i + j, reason: "data after padding")) }
                let v = values[Int(c)]
                if v == 0xFF { return .failure(DecodeError(offset: i + j, reason: "not a base64 character")) }
                n = n << 6 | UInt32(v)
            }
            out.append(UInt8(n >> 16 & 0xFF))
            if pad < 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if pad < 1 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return .success(out)
    }
}
