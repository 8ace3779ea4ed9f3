import IMCapture
import IMWire
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `imsim import har`: a browser's HAR 1.2 export with WebSocket frames (Chromium's
/// `_webSocketMessages`: `type` send/receive, `time` in epoch seconds, `opcode` 1 text / 2 binary,
/// `data` — binary frames as base64) → the traffic of one RMTP web client (message framing).
public struct HARImporter {
    /// Largest HAR file read (the whole document is parsed in memory).
    public static let maxFileSize = 512 * 1024 * 1024

    public var device: String?
    public init(device: String? = nil) { self.device = device }

    public func read(path: String) throws(ImportError) -> ObservedTraffic {
        let bytes: [UInt8]
        do { bytes = try readFile(path, limit: Self.maxFileSize) } catch { throw error }
        return try read(bytes: bytes, source: path)
    }

    public func read(bytes: [UInt8], source: String) throws(ImportError) -> ObservedTraffic {
        let doc: JSONValue
        do { doc = try JSONValue.parse(bytes) } catch {
            throw ImportError(.badFile, "\(source): not JSON: \(error)")
        }
        guard let log = doc["log"], case .object = log else { throw ImportError(.badHAR, "\(source): no \"log\" object (not a HAR file)") }
        guard let entries = log["entries"]?.arrayValue else { throw ImportError(.badHAR, "\(source): log.entries missing or not an array") }
        var connections: [ObservedConnection] = []
        var notes: [String] = []
        var webSockets = 0
        for (i, e) in entries.enumerated() {
            let path = "log.entries[\(i)]"
            guard let msgs = e["_webSocketMessages"] else { continue }
            guard let list = msgs.arrayValue else { throw ImportError(.badHAR, "\(path)._webSocketMessages: expected an array") }
            webSockets += 1
            guard let url = e["request"]?["url"]?.stringValue else { throw ImportError(.badHAR, "\(path).request.url: missing or not a string") }
            guard let started = e["startedDateTime"]?.stringValue else { throw ImportError(.badHAR, "\(path).startedDateTime: missing") }
            guard let startMs = ISO8601.milliseconds(started) else {
                throw ImportError(.badHAR, "\(path).startedDateTime: \"\(started.prefix(40))\" is not an ISO 8601 date-time")
            }
            var o = ObservedConnection(label: "HAR entry \(i) \(url.split(separator: "?").first ?? "")")
            for (k, v) in HTTPUpgrade.query(of: url) {
                switch k {
                case "token": o.token = v
                case "appId", "appKey": o.appKey = v
                case "deviceId", "clientId": o.clientId = v
                default: break
                }
            }
            o.events = [.connect(t: startMs), .opened(t: startMs)]
            var last = startMs
            for (j, m) in list.enumerated() {
                let mp = "\(path)._webSocketMessages[\(j)]"
                guard let type = m["type"]?.stringValue, type == "send" || type == "receive" else {
                    throw ImportError(.badHAR, "\(mp).type: expected \"send\" or \"receive\"")
                }
                guard let timeText = m["time"], case .number(let n) = timeText, let seconds = Double(n), seconds.isFinite,
                      seconds >= 0, seconds < 1e11 else {
                    throw ImportError(.badHAR, "\(mp).time: expected epoch seconds")
                }
                guard let op = m["opcode"]?.int64Value else { throw ImportError(.badHAR, "\(mp).opcode: expected an integer") }
                guard let data = m["data"]?.stringValue else { throw ImportError(.badHAR, "\(mp).data: expected a string") }
                let payload: [UInt8]
                switch op {
                case 1: payload = Array(data.utf8)
                case 2:
                    guard let b = HARBase64.decode(data) else { throw ImportError(.badHAR, "\(mp).data: opcode 2 (binary) but not base64") }
                    payload = b
                default:
                    notes.append("\(mp): opcode \(op) skipped (control frame)")
                    continue
                }
                // Chromium's times are fractional seconds; keep ms and never go back.
                let t = max(last, Int64((seconds * 1000).rounded(.down)))
                last = t
                if op == 1 {
                    notes.append("\(mp): a text frame (\(payload.count) bytes); RMTP uses binary frames — kept as bytes")
                }
                if payload.isEmpty { notes.append("\(mp): empty message skipped"); continue }
                let outbound = type == "send"
                if let f = try? MessageFraming.decode(payload, direction: outbound ? .clientToServer : .serverToClient) {
                    if case .connect(let k) = f {
                        o.clientId = o.clientId ?? k.clientId
                        o.token = o.token ?? k.token
                        o.appKey = o.appKey ?? k.appKey
                        o.keepAlive = k.keepAlive
                    }
                    if case .connack(let a) = f, o.userId == nil { o.userId = a.session?.userId }
                }
                o.events.append(outbound ? .out(t: t, bytes: payload) : .in(t: t, bytes: payload))
            }
            connections.append(o)
        }
        guard webSockets > 0 else {
            throw ImportError(.noIMTraffic, "\(source): \(entries.count) entries, none with _webSocketMessages (save the HAR from Chromium's Network panel with the WebSocket selected, \"Save all as HAR with content\")")
        }
        var chosen = connections
        let devices = Array(Set(connections.compactMap(\.clientId))).sorted()
        if let d = device {
            chosen = connections.filter { $0.clientId == d || ($0.clientId ?? "").hasSuffix(":" + d) || $0.clientId == nil }
        } else if devices.count > 1 {
            throw ImportError(.ambiguousDevice, "\(devices.count) devices in this HAR (\(devices.joined(separator: ", "))): choose one with --device NAME")
        }
        chosen.sort { ($0.events.first?.t ?? 0) < ($1.events.first?.t ?? 0) }
        // HAR does not say how a WebSocket ended: one that another follows was closed before it.
        for i in chosen.indices.dropLast() {
            let next = chosen[i + 1].events.first?.t ?? 0
            chosen[i].events.append(.serverClosed(t: max(chosen[i].events.last?.t ?? next, next), reset: false))
            notes.append("\(chosen[i].label): HAR does not record how a WebSocket ended; assumed closed by the server before \(chosen[i + 1].label)")
        }
        var t = ObservedTraffic(framing: .message, obfuscated: false, connections: chosen, origin: "har", source: source)
        t.notes = notes
        return t
    }
}

func readFile(_ path: String, limit: Int) throws(ImportError) -> [UInt8] {
    guard let f = fopen(path, "rb") else { throw ImportError(.io, "\(path): cannot open (\(String(cString: strerror(errno))))") }
    defer { fclose(f) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n > 0 { out += buf[0..<n] }
        if out.count > limit { throw ImportError(.io, "\(path): larger than \(limit) bytes") }
        if n < buf.count {
            if ferror(f) != 0 { throw ImportError(.io, "\(path): read error") }
            break
        }
    }
    return out
}

/// RFC 4648 base64 (padding optional, whitespace refused).
enum HARBase64 {
    static func decode(_ s: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count * 3 / 4)
        var acc: UInt32 = 0, bits = 0, pad = 0
        for c in s.utf8 {
            let v: UInt32
            switch c {
            case 65...90: v = UInt32(c - 65)
            case 97...122: v = UInt32(c - 71)
            case 48...57: v = UInt32(c + 4)
            case 43, 45: v = 62
            case 47, 95: v = 63
            case 61: pad += 1; continue
            default: return nil
            }
            if pad > 0 { return nil }
            acc = acc << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((acc >> UInt32(bits)) & 0xFF))
            }
        }
        return pad <= 2 ? out : nil
    }
}

/// `2024-05-01T12:34:56.789Z`, `…+02:00`: epoch ms.
enum ISO8601 {
    static func milliseconds(_ s: String) -> Int64? {
        let b = Array(s.utf8)
        func num(_ i: Int, _ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in i..<(i + n) {
                guard b[k] >= 48, b[k] <= 57 else { return nil }
                v = v * 10 + Int(b[k] - 48)
            }
            return v
        }
        guard b.count >= 19, let y = num(0, 4), b[4] == 45, let mo = num(5, 2), b[7] == 45, let d = num(8, 2),
              b[10] == 84 || b[10] == 32, let h = num(11, 2), b[13] == 58, let mi = num(14, 2), b[16] == 58, let sec = num(17, 2),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, sec < 61 else { return nil }
        var i = 19, ms = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 3 { ms = ms * 10 + Int(b[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { ms *= 10 }
        }
        var offset = 0
        if i < b.count {
            if b[i] == 90 { i += 1 } else if b[i] == 43 || b[i] == 45, let oh = num(i + 1, 2), i + 3 < b.count, b[i + 3] == 58, let om = num(i + 4, 2) {
                offset = (oh * 60 + om) * 60 * (b[i] == 43 ? 1 : -1)
                i += 6
            } else { return nil }
        }
        guard i == b.count else { return nil }
        // Days from civil (Howard Hinnant's algorithm).
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        let secs = Int64(days) * 86400 + Int64(h * 3600 + mi * 60 + sec) - Int64(offset)
        return secs * 1000 + Int64(ms)
    }
}
