import SimKernel

/// Text helpers shared by the views (no Foundation formatting: stable output on every platform).
public enum TraceText {
    /// `41.250123` (seconds, 6 decimals; sign for negative values).
    public static func seconds(_ ns: Int64, digits: Int = 6) -> String {
        let negative = ns < 0
        let mag = ns.magnitude
        let whole = mag / 1_000_000_000
        var frac = mag % 1_000_000_000
        var divisor: UInt64 = 1
        for _ in 0..<(9 - digits) { divisor *= 10 }
        frac /= divisor
        var f = String(frac)
        if f.count < digits { f = String(repeating: "0", count: digits - f.count) + f }
        return (negative ? "-" : "") + String(whole) + (digits > 0 ? "." + f : "")
    }

    /// A server-epoch-relative ms value as seconds: `+41.250s`.
    public static func wallMs(_ ms: Int64, epochMs: Int64) -> String {
        let rel = ms &- epochMs
        return (rel >= 0 ? "+" : "") + seconds(rel &* 1_000_000, digits: 3) + "s"
    }

    /// `s` in double quotes with `"`, `\` and control characters escaped, cut at `limit`
    /// characters (with `…`).
    public static func quoted(_ s: String, limit: Int = 80) -> String {
        var out = "\""
        var n = 0
        for ch in s.unicodeScalars {
            if n == limit { out += "…"; break }
            switch ch {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if ch.value < 0x20 { out += "\\u{\(String(ch.value, radix: 16))}" } else { out.unicodeScalars.append(ch) }
            }
            n += 1
        }
        return out + "\""
    }

    /// Pads (or cuts) to `width` characters.
    public static func pad(_ s: String, _ width: Int) -> String {
        let c = s.count
        if c == width { return s }
        if c < width { return s + String(repeating: " ", count: width - c) }
        return String(s.prefix(max(0, width - 1))) + "…"
    }

    /// Right-aligns to `width` characters.
    public static func padLeft(_ s: String, _ width: Int) -> String {
        let c = s.count
        return c >= width ? s : String(repeating: " ", count: width - c) + s
    }

    /// Lowercase 16-digit hex.
    public static func hex(_ v: UInt64) -> String { Digest64.hex(v) }
}
