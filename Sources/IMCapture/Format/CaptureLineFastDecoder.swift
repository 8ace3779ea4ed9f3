import IMClient
import IMWire

/// A typed single-pass decoder for the commonest capture lines — `in`, `out`, `open`, `opened`,
/// `close`, `closed`, `timer`, `network`, `app`, `clock` written compactly — straight from the
/// line's bytes to a `CaptureRecord`, with no `JSONValue` tree (building one and reading it back
/// field by field was most of a replay's reading cost).
///
/// It only ever *accepts*: any line it does not take whole — another kind, whitespace, an escape
/// in a value it interprets, a non-ASCII byte, `null`, a fraction or exponent, a number of more
/// than 18 digits, `b64`, `inferred`, an unknown, repeated or missing field, any invalid value —
/// gives nil, and the general path (`JSONValue.parse` + `CaptureLineCodec.decode`) decodes it
/// and names any error. So the two accept exactly the same lines and give the same records
/// (CaptureLineFastDecoderTests checks both on recorded captures and on edge cases).
enum CaptureLineFastDecoder {
    static func decode(_ bytes: [UInt8], line: Int) -> CaptureRecord? {
        bytes.withUnsafeBufferPointer { decode($0, line: line) }
    }

    private enum Key: Int {
        case t, kind, conn, hex, len, frames, reason, event, timer, messageId, available, stepMs
        var bit: UInt32 { 1 << UInt32(rawValue) }
    }

    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

    static func decode(_ b: UnsafeBufferPointer<UInt8>, line: Int) -> CaptureRecord? {
        let n = b.count
        guard n >= 2, b[0] == UInt8(ascii: "{"), b[n - 1] == UInt8(ascii: "}") else { return nil }
        var i = 1
        var seen: UInt32 = 0
        var t: Int64 = 0, conn: Int64 = 0, len: Int64 = 0, messageId: Int64 = 0, stepMs: Int64 = 0
        var available = false
        var kind = 0..<0, hex = 0..<0, reason = 0..<0, appEvent = 0..<0, timer = 0..<0
        while true {
            guard i < n, b[i] == quote, let keyEnd = plainStringEnd(b, from: i + 1),
                  let key = identify(b, i + 1, keyEnd), seen & key.bit == 0 else { return nil }
            seen |= key.bit
            i = keyEnd + 1
            guard i < n, b[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            switch key {
            case .t: guard let v = integer(b, &i) else { return nil }; t = v
            case .conn: guard let v = integer(b, &i) else { return nil }; conn = v
            case .len: guard let v = integer(b, &i) else { return nil }; len = v
            case .messageId: guard let v = integer(b, &i) else { return nil }; messageId = v
            case .stepMs: guard let v = integer(b, &i) else { return nil }; stepMs = v
            case .kind, .hex, .reason, .event, .timer:
                guard i < n, b[i] == quote, let end = plainStringEnd(b, from: i + 1) else { return nil }
                let r = (i + 1)..<end
                switch key {
                case .kind: kind = r
                case .hex: hex = r
                case .reason: reason = r
                case .event: appEvent = r
                default: timer = r
                }
                i = end + 1
            case .available:
                if matches(b, i, "true") { available = true; i += 4 } else if matches(b, i, "false") { available = false; i += 5 } else { return nil }
            case .frames:
                guard skipStringArray(b, &i) else { return nil }
            }
            guard i < n else { return nil }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            guard b[i] == UInt8(ascii: "}"), i == n - 1 else { return nil }
            break
        }
        let required = Key.t.bit | Key.kind.bit
        guard seen & required == required else { return nil }
        /// No field beyond `t`, `kind` and these (the general path names an unknown one).
        func only(_ keys: Key...) -> Bool {
            let allowed = keys.reduce(required) { $0 | $1.bit }
            return seen & ~allowed == 0
        }
        func has(_ k: Key) -> Bool { seen & k.bit != 0 }
        func connection() -> Int? {
            guard has(.conn), conn >= 0, conn <= Int64(Int32.max) else { return nil }
            return Int(conn)
        }
        let event: CaptureEvent
        switch text(b, kind) {
        case "in", "out":
            guard only(.conn, .hex, .len, .frames), let c = connection(), has(.hex), let bytes = hexBytes(b, hex) else { return nil }
            if has(.len), len != Int64(bytes.count) { return nil }
            event = text(b, kind) == "in" ? .bytesIn(conn: c, bytes: bytes) : .bytesOut(conn: c, bytes: bytes)
        case "open":
            guard only(.conn), let c = connection() else { return nil }
            event = .open(conn: c)
        case "opened":
            guard only(.conn), let c = connection() else { return nil }
            event = .opened(conn: c)
        case "close":
            guard only(.conn), let c = connection() else { return nil }
            event = .close(conn: c)
        case "closed":
            guard only(.conn, .reason), let c = connection(), has(.reason),
                  let r = TransportCloseReason(rawValue: text(b, reason)) else { return nil }
            event = .closed(conn: c, reason: r)
        case "timer":
            guard has(.timer) else { return nil }
            let name = text(b, timer)
            if name == "requestTimeout" {
                guard only(.timer, .messageId), has(.messageId), messageId >= 1, messageId <= 65535 else { return nil }
                event = .timer(.requestTimeout(messageId: UInt16(messageId)))
            } else {
                guard only(.timer) else { return nil }
                switch name {
                case "connackTimeout": event = .timer(.connackTimeout)
                case "heartbeat": event = .timer(.heartbeat)
                case "pingTimeout": event = .timer(.pingTimeout)
                case "reconnect": event = .timer(.reconnect)
                case "backgroundClose": event = .timer(.backgroundClose)
                case "connectTimeLimit": event = .timer(.connectTimeLimit)
                case "poll": event = .timer(.poll)
                case "storeRetry": event = .timer(.storeRetry)
                default: return nil
                }
            }
        case "network":
            guard only(.available), has(.available) else { return nil }
            event = .network(available: available)
        case "app":
            guard only(.event), has(.event), let e = AppEvent(rawValue: text(b, appEvent)) else { return nil }
            event = .app(e)
        case "clock":
            guard only(.stepMs), has(.stepMs) else { return nil }
            event = .clock(stepMs: stepMs)
        default:
            return nil
        }
        return CaptureRecord(t: t, event: event, line: line)
    }

    private static func identify(_ b: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Key? {
        switch to - from {
        case 1: return b[from] == UInt8(ascii: "t") ? .t : nil
        case 3:
            if matches(b, from, "hex") { return .hex }
            if matches(b, from, "len") { return .len }
            return nil
        case 4:
            if matches(b, from, "kind") { return .kind }
            if matches(b, from, "conn") { return .conn }
            return nil
        case 5:
            if matches(b, from, "event") { return .event }
            if matches(b, from, "timer") { return .timer }
            return nil
        case 6:
            if matches(b, from, "frames") { return .frames }
            if matches(b, from, "reason") { return .reason }
            if matches(b, from, "stepMs") { return .stepMs }
            return nil
        case 9:
            if matches(b, from, "messageId") { return .messageId }
            if matches(b, from, "available") { return .available }
            return nil
        default: return nil
        }
    }

    private static func matches(_ b: UnsafeBufferPointer<UInt8>, _ at: Int, _ word: StaticString) -> Bool {
        let w = word.utf8Start, k = word.utf8CodeUnitCount
        guard b.count - at >= k else { return false }
        for j in 0..<k where b[at + j] != w[j] { return false }
        return true
    }

    private static func text(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self)
    }

    /// The index of the closing quote of a string of printable ASCII without escapes starting at
    /// `from`; nil for anything else (the general parser judges it).
    private static func plainStringEnd(_ b: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        var j = from
        while j < b.count {
            let c = b[j]
            if c == quote { return j }
            if c < 0x20 || c >= 0x80 || c == backslash { return nil }
            j += 1
        }
        return nil
    }

    /// `-?(0|[1-9][0-9]*)` of at most 18 digits, followed by `,` or `}` (no fraction, exponent).
    private static func integer(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Int64? {
        var j = i
        let negative = j < b.count && b[j] == UInt8(ascii: "-")
        if negative { j += 1 }
        let start = j
        var v: Int64 = 0
        while j < b.count, b[j] >= 0x30, b[j] <= 0x39 {
            // 18 digits cannot overflow; a 19th goes to the general path (checked before the
            // multiplication, which would trap).
            guard j - start < 18 else { return nil }
            v = v * 10 + Int64(b[j] - 0x30)
            j += 1
        }
        // A leading zero ("01") is not JSON; the general parser names it.
        guard j > start, !(b[start] == 0x30 && j - start > 1), j < b.count,
              b[j] == UInt8(ascii: ",") || b[j] == UInt8(ascii: "}") else { return nil }
        i = j
        return negative ? -v : v
    }

    /// Lowercase hex, an even number of digits, at least one byte, within the record limit.
    private static func hexBytes(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> [UInt8]? {
        let count = r.count
        guard count > 0, count % 2 == 0, count <= 2 * CaptureLineCodec.maxRecordBytes else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        var ok = true
        let out = [UInt8](unsafeUninitializedCapacity: count / 2) { buf, initialized in
            var k = r.lowerBound, o = 0
            while k < r.upperBound {
                guard let hi = nibble(b[k]), let lo = nibble(b[k + 1]) else { ok = false; break }
                buf[o] = hi << 4 | lo
                o += 1
                k += 2
            }
            initialized = o
        }
        return ok ? out : nil
    }

    /// `[` strings `]` (the informational `frames`): each string checked as the JSON parser
    /// checks it — escapes `\" \\ \/ \b \f \n \r \t \uXXXX` with surrogates paired — but ASCII
    /// only (a non-ASCII byte goes to the general path, which validates UTF-8).
    private static func skipStringArray(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        let n = b.count
        guard i < n, b[i] == UInt8(ascii: "[") else { return false }
        var j = i + 1
        if j < n, b[j] == UInt8(ascii: "]") { i = j + 1; return true }
        while true {
            guard j < n, b[j] == quote, let end = escapedStringEnd(b, from: j + 1) else { return false }
            j = end + 1
            guard j < n else { return false }
            if b[j] == UInt8(ascii: ",") { j += 1; continue }
            guard b[j] == UInt8(ascii: "]") else { return false }
            i = j + 1
            return true
        }
    }

    private static func escapedStringEnd(_ b: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        let n = b.count
        var j = from
        func hex4(_ at: Int) -> UInt32? {
            guard n - at >= 4 else { return nil }
            var v: UInt32 = 0
            for k in at..<(at + 4) {
                guard let d = Hex.digitValue(b[k]) else { return nil }
                v = v << 4 | UInt32(d)
            }
            return v
        }
        while j < n {
            let c = b[j]
            if c == quote { return j }
            if c < 0x20 || c >= 0x80 { return nil }
            if c != backslash { j += 1; continue }
            guard j + 1 < n else { return nil }
            switch b[j + 1] {
            case quote, backslash, UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                 UInt8(ascii: "r"), UInt8(ascii: "t"):
                j += 2
            case UInt8(ascii: "u"):
                guard let cp = hex4(j + 2) else { return nil }
                j += 6
                if (0xD800...0xDBFF).contains(cp) {
                    guard n - j >= 6, b[j] == backslash, b[j + 1] == UInt8(ascii: "u"), let low = hex4(j + 2),
                          (0xDC00...0xDFFF).contains(low) else { return nil }
                    j += 6
                } else if (0xDC00...0xDFFF).contains(cp) {
                    return nil
                }
            default:
                return nil
            }
        }
        return nil
    }
}
