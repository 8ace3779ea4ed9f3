import SimKernel

/// The documented limits of every scenario field (Docs/scenario-format.md, "Limits"), checked on
/// the strict JSON tree before decoding. A field gets range checking by declaring one line here;
/// a test keeps the docs table equal to `markdownTable()`.
public struct FieldLimit: Sendable {
    public enum Check: Sendable {
        /// An integer literal (no fraction, no exponent) in the range.
        case integer(ClosedRange<Int128>)
        /// A finite number in the range.
        case number(ClosedRange<Double>)
        /// A duration string (may be signed) in the range.
        case duration(ClosedRange<SimDuration>)
        /// An array or object with this many elements.
        case count(ClosedRange<Int>)
        /// Letters, digits, `_`, `-`; this many bytes.
        case idText(ClosedRange<Int>)
        /// Platform weights: each in 0…1000, at least one positive.
        case weights
    }

    /// As shown in the docs: `chatrooms[].joinCount`, `…network.latency.fixed`.
    public var field: String
    /// JSON path patterns: `.key`, `[]` any element, `.*` any key.
    public var paths: [String]
    public var check: Check

    public init(_ field: String, _ check: Check, paths: [String]? = nil) {
        self.field = field
        self.check = check
        self.paths = paths ?? ["$." + field]
    }

    /// The limit in words (docs table, error messages).
    public var limitText: String {
        switch check {
        case .integer(let r): "integer \(Self.show(r.lowerBound))…\(Self.show(r.upperBound))"
        case .number(let r): "number \(Self.show(r.lowerBound))…\(Self.show(r.upperBound))"
        case .duration(let r): "duration \(r.lowerBound)…\(r.upperBound)"
        case .count(let r): "\(r.lowerBound)…\(r.upperBound) entries"
        case .idText(let r): "letters, digits, `_`, `-`; \(r.lowerBound)…\(r.upperBound) bytes"
        case .weights: "each 0…1000, not all 0"
        }
    }

    static func show(_ v: Int128) -> String {
        if v == Int128(UInt64.max) { return "2^64−1" }
        return "\(v)"
    }
    static func show(_ v: Double) -> String { v == v.rounded() ? "\(Int64(v))" : "\(v)" }
}

public enum ScenarioLimits {
    /// The largest server time the wire carries: PUBACK's `date` is a u32 of seconds
    /// (sentTime = date · 1000 + millis). Beyond it sentTime wraps by 2^32 s.
    public static let maxServerMs: Int64 = (Int64(1) << 32) * 1000 - 1
    /// Every run phase together (duration + liveness deadline) stays below this.
    public static let maxRunLength = SimDuration.days(60)

    static let day = SimDuration.days(1)
    static let month = SimDuration.days(30)
    static let networks = ["$.network", "$.users[].devices[].network"]
    static let latencies = ["latency", "uplink", "downlink", "connectSetup"]
    static func latency(_ suffix: String) -> [String] {
        networks.flatMap { n in latencies.map { "\(n).\($0)\(suffix)" } }
    }

    /// Every limit, in docs order.
    public static let all: [FieldLimit] = [
        FieldLimit("duration", .duration(.milliseconds(1)...month)),
        FieldLimit("seed", .integer(0...Int128(UInt64.max))),
        FieldLimit("epochMs", .integer(0...Int128(maxServerMs))),
        FieldLimit("users", .count(0...100_000)),
        FieldLimit("users[].devices", .count(1...10)),
        FieldLimit("users[].devices[].clockOffset", .duration(SimDuration.zero - month...month)),
        FieldLimit("users[].devices[].clockDriftPpm", .integer(-99_999...99_999)),
        FieldLimit("users[].devices[].startAt", .duration(.zero...month)),
        FieldLimit("groups", .count(0...100_000)),
        FieldLimit("groups[].members", .count(1...3000)),
        FieldLimit("groups[].muted", .count(0...3000)),
        FieldLimit("chatrooms", .count(0...10_000)),
        FieldLimit("chatrooms[].members", .count(0...100_000)),
        FieldLimit("chatrooms[].joinCount", .integer(-1...50)),
        FieldLimit("chatrooms[].whitelist", .count(0...5000)),
        FieldLimit("population.users", .integer(1...100_000)),
        FieldLimit("population.idPrefix", .idText(1...16)),
        FieldLimit("population.platforms", .weights),
        FieldLimit("population.secondDeviceFraction", .number(0...1)),
        FieldLimit("population.groups", .integer(0...100_000)),
        FieldLimit("population.groupSize", .integer(1...3000)),
        FieldLimit("population.chatrooms", .integer(0...10_000)),
        FieldLimit("population.chatroomMembers", .integer(0...100_000)),
        FieldLimit("…network.LATENCY.fixed, .uniform[], .logNormal.median, .logNormal.max", .duration(.zero...SimDuration.hours(1)),
                   paths: latency(".fixed") + latency(".uniform[]") + latency(".logNormal.median") + latency(".logNormal.max")),
        FieldLimit("…network.LATENCY.logNormal.sigma", .number(0...3), paths: latency(".logNormal.sigma")),
        FieldLimit("…network.bandwidthBytesPerSecond", .integer(1...1_000_000_000_000),
                   paths: networks.map { $0 + ".bandwidthBytesPerSecond" }),
        FieldLimit("server.offlineRetentionDays", .integer(1...7)),
        FieldLimit("server.pullPageSize", .integer(1...500)),
        FieldLimit("server.newDeviceHistoryDays", .integer(0...7)),
        FieldLimit("server.sessionIdleTimeout", .duration(.seconds(1)...day)),
        FieldLimit("server.rateLimitPerSecond", .integer(1...10_000)),
        FieldLimit("server.maxBodyBytes", .integer(1...1_048_576)),
        FieldLimit("server.recallWindow", .duration(.zero...SimDuration.days(7))),
        FieldLimit("server.sensitiveWords", .count(0...1000)),
        FieldLimit("server.blacklists", .count(0...100_000)),
        FieldLimit("server.blacklists.*", .count(0...10_000)),
        FieldLimit("server.whitelists", .count(0...100_000)),
        FieldLimit("server.whitelists.*", .count(0...10_000)),
        FieldLimit("server.chatroom.memberLimit", .integer(0...1_000_000)),
        FieldLimit("server.chatroom.historySize", .integer(0...1000)),
        FieldLimit("server.chatroom.quotaWindow", .duration(.milliseconds(1)...SimDuration.hours(1))),
        FieldLimit("server.chatroom.quotaCapacity", .integer(1...100_000)),
        FieldLimit("server.chatroom.quotaReservedHigh", .integer(0...100_000)),
        FieldLimit("server.chatroom.offlineKickWindow", .duration(.seconds(1)...day)),
        FieldLimit("server.chatroom.offlineKickMessages", .integer(1...100_000)),
        FieldLimit("server.chatroom.autoDestroyAfter", .duration(.zero...day)),
        FieldLimit("server.chatroom.kvMaxKeys", .integer(1...100)),
        FieldLimit("server.chatroom.kvOpsPerSecond", .integer(1...10_000)),
        FieldLimit("client.heartbeatInterval", .duration(.seconds(1)...SimDuration.hours(1))),
        FieldLimit("client.pingTimeout", .duration(.milliseconds(100)...SimDuration.minutes(10))),
        FieldLimit("client.connackTimeout", .duration(.milliseconds(100)...SimDuration.minutes(10))),
        FieldLimit("client.requestTimeout", .duration(.milliseconds(100)...SimDuration.hours(1))),
        FieldLimit("client.backgroundCloseAfter", .duration(.zero...day)),
        FieldLimit("client.pollInterval", .duration(.seconds(1)...day)),
        FieldLimit("script", .count(0...100_000)),
        FieldLimit("script[].at", .duration(.zero...month)),
        FieldLimit("script[].count", .integer(-1...100_000)),
        FieldLimit("script[].interval", .duration(.zero...day)),
        FieldLimit("script[].by", .duration(SimDuration.zero - month...month)),
        FieldLimit("script[].for", .duration(.zero...month)),
        FieldLimit("script[].downFor", .duration(.zero...month)),
        FieldLimit("script[].timeLimit", .integer(0...86_400)),
        FieldLimit("script[].factor", .integer(1...1000)),
        FieldLimit("script[].pages", .integer(1...10_000)),
        FieldLimit("workload.historyPages", .integer(1...1000)),
        FieldLimit("workload.historyInterval", .duration(.zero...day)),
        FieldLimit("workload.bursts.every", .duration(.seconds(1)...month)),
        FieldLimit("workload.bursts.length", .duration(.zero...month)),
        FieldLimit("faults.random.*.duration[]", .duration(.zero...month)),
        FieldLimit("faults.random.*.by[]", .duration(SimDuration.zero - month...month)),
        FieldLimit("faults.random.*.factor", .integer(1...1000)),
        FieldLimit("faults.random.*.count", .integer(1...1000)),
        FieldLimit("faults.random.*.period", .duration(.milliseconds(1)...SimDuration.hours(1))),
        FieldLimit("liveness.healAt", .duration(.zero...month)),
        FieldLimit("liveness.deadline", .duration(.seconds(1)...month)),
    ]

    /// Checks every limit on a parsed scenario tree; the first failure names its path and line.
    public static func check(_ root: StrictJSON.Value) throws(ScenarioError) {
        for limit in all {
            for pattern in limit.paths {
                try visit(root, segments: segments(pattern), at: 0, path: "$", line: nil) { v, path, line throws(ScenarioError) in
                    if let problem = violation(limit.check, v) {
                        throw ScenarioError(path: path, message: "\(problem) (limit: \(limit.limitText))", line: line)
                    }
                }
            }
        }
    }

    enum Segment: Equatable { case key(String), anyIndex, anyKey }

    static func segments(_ pattern: String) -> [Segment] {
        var out: [Segment] = []
        for part in pattern.split(separator: ".").dropFirst() {
            var p = Substring(part)
            var indexes = 0
            while p.hasSuffix("[]") { p = p.dropLast(2); indexes += 1 }
            out.append(p == "*" ? .anyKey : .key(String(p)))
            out += Array(repeating: .anyIndex, count: indexes)
        }
        return out
    }

    static func visit(_ v: StrictJSON.Value, segments: [Segment], at k: Int, path: String, line: Int?,
                      _ body: (StrictJSON.Value, String, Int?) throws(ScenarioError) -> Void) throws(ScenarioError) {
        if k == segments.count {
            if case .null = v { return }
            try body(v, path, line)
            return
        }
        switch (segments[k], v) {
        case (.key(let name), .object(let members)):
            for m in members where m.key == name {
                try visit(m.value, segments: segments, at: k + 1, path: path + "." + name, line: m.line, body)
            }
        case (.anyKey, .object(let members)):
            for m in members {
                try visit(m.value, segments: segments, at: k + 1, path: path + "." + m.key, line: m.line, body)
            }
        case (.anyIndex, .array(let items)):
            for (i, item) in items.enumerated() {
                try visit(item.value, segments: segments, at: k + 1, path: path + "[\(i)]", line: item.line, body)
            }
        default:
            return   // a wrong shape is the decoder's to report (with its own path)
        }
    }

    static func violation(_ check: FieldLimit.Check, _ v: StrictJSON.Value) -> String? {
        switch check {
        case .integer(let r):
            guard case .number(let text) = v else { return "expected an integer, found \(v.typeName)" }
            guard !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else { return "\(text) is not an integer" }
            let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
            guard digits.count <= 30, let n = Int128(text), r.contains(n) else { return "\(text) is out of range" }
            return nil
        case .number(let r):
            guard case .number(let text) = v else { return "expected a number, found \(v.typeName)" }
            guard let d = Double(text), d.isFinite, r.contains(d) else { return "\(text) is out of range" }
            return nil
        case .duration(let r):
            guard case .string(let text) = v else { return "expected a duration string, found \(v.typeName)" }
            guard let d = try? SimDuration(parsing: text) else { return "invalid duration \"\(text)\" (e.g. \"250ms\", \"2h\")" }
            return r.contains(d) ? nil : "\"\(text)\" is out of range"
        case .count(let r):
            let n: Int
            switch v {
            case .array(let a): n = a.count
            case .object(let o): n = o.count
            default: return nil   // the decoder names the expected type
            }
            return r.contains(n) ? nil : "\(n) entries is out of range"
        case .idText(let r):
            guard case .string(let s) = v else { return "expected a string, found \(v.typeName)" }
            guard r.contains(s.utf8.count), s.utf8.allSatisfy(isIdByte) else { return "\"\(s)\" is not allowed" }
            return nil
        case .weights:
            guard case .object(let o) = v else { return nil }
            var positive = false
            for m in o {
                guard case .number(let t) = m.value, let w = Double(t), w.isFinite, w >= 0, w <= 1000 else {
                    return "weight of \"\(m.key)\" must be a number 0…1000"
                }
                if w > 0 { positive = true }
            }
            return positive ? nil : "at least one platform weight must be positive"
        }
    }

    static func isIdByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b == 0x2D
    }

    /// The "Limits" table of Docs/scenario-format.md.
    public static func markdownTable() -> String {
        var s = "| field | limit |\n|---|---|\n"
        for l in all { s += "| `\(l.field)` | \(l.limitText) |\n" }
        return s
    }
}
