/// JSON string escaping (RFC 8259), the one definition: `"` and `\` escaped, `\n \r \t \b \f`
/// by name, other control characters as `\u00xx` (lowercase hex), everything else as UTF-8.
/// `JSONValue`, the ledger, the trace exports, the runtime's event log and the world's scripted
/// message bodies all write strings through it, so they agree byte for byte.
public enum JSONText {
    /// Whether `b` (a UTF-8 byte) must be escaped.
    @inline(__always)
    public static func needsEscape(_ b: UInt8) -> Bool {
        b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\")
    }

    /// Hands `put` the escape sequence of `b`, one byte at a time (`b` must need escaping).
    @inline(__always)
    public static func escape(_ b: UInt8, _ put: (UInt8) -> Void) {
        put(UInt8(ascii: "\\"))
        switch b {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): put(b)
        case 0x0A: put(UInt8(ascii: "n"))
        case 0x0D: put(UInt8(ascii: "r"))
        case 0x09: put(UInt8(ascii: "t"))
        case 0x08: put(UInt8(ascii: "b"))
        case 0x0C: put(UInt8(ascii: "f"))
        default:
            put(UInt8(ascii: "u")); put(UInt8(ascii: "0")); put(UInt8(ascii: "0"))
            put(Hex.digits[Int(b >> 4)]); put(Hex.digits[Int(b & 0xF)])
        }
    }

    /// Appends `s` as a quoted JSON string.
    public static func string(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        escaped(s, into: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `s`'s escaped UTF-8, without quotes.
    public static func escaped(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { u in
            // Fast path: nothing to escape → one copy.
            guard u.contains(where: needsEscape) else { out.append(contentsOf: u); return }
            for b in u {
                if needsEscape(b) { escape(b) { out.append($0) } } else { out.append(b) }
            }
        }
    }

    /// Appends `s` as a quoted JSON string.
    public static func string(_ s: String, into out: inout String) {
        out += string(s)
    }

    /// `s` as a quoted JSON string.
    public static func string(_ s: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.utf8.count + 2)
        string(s, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `s` escaped, without quotes (to splice into a JSON text).
    public static func escaped(_ s: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.utf8.count)
        escaped(s, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
