/// Hex text for bytes (frame dumps, `imsim decode --hex`, frame JSON).
public enum Hex {
    static let digits = Array("0123456789abcdef".utf8)

    /// Lowercase, two digits a byte, `separator` between bytes (none by default).
    public static func encode(_ bytes: some Sequence<UInt8>, separator: String = "") -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * (2 + separator.utf8.count))
        for b in bytes {
            if !out.isEmpty { out.append(contentsOf: separator.utf8) }
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one hex digit (either case), or nil: the one digit table of hex text and of
    /// JSON's `\u` escapes.
    @inlinable public static func digitValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    /// Parses hex digits; whitespace, `,`, `:` and `0x` prefixes between bytes are ignored.
    /// Returns the offending character offset on failure.
    public static func decode(_ text: String) -> Result<[UInt8], HexError> {
        var out: [UInt8] = []
        let u = Array(text.utf8)
        out.reserveCapacity(u.count / 2)
        var i = 0
        var high: UInt8?
        var highAt = 0
        while i < u.count {
            let c = u[i]
            if high == nil, c == 0x30, i + 1 < u.count, u[i + 1] == 0x78 || u[i + 1] == 0x58 {
                i += 2
                continue
            }
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 || c == 0x2C || c == 0x3A {
                if high != nil { return .failure(HexError(offset: i, reason: "separator inside a byte")) }
                i += 1
                continue
            }
            guard let v = digitValue(c) else { return .failure(HexError(offset: i, reason: "not a hex digit")) }
            if let h = high {
                out.append(h << 4 | v)
                high = nil
            } else {
                high = v
                highAt = i
            }
            i += 1
        }
        if high != nil { return .failure(HexError(offset: highAt, reason: "odd number of hex digits")) }
        return .success(out)
    }

    public struct HexError: Error, Sendable, Hashable, CustomStringConvertible {
        public var offset: Int
        public var reason: String
        public var description: String { "invalid hex at character \(offset): \(reason)" }
    }
}
