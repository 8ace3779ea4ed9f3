import SimKernel

/// A duration written as a string in scenario files: `"250ms"`, `"41.25s"`, `"2h"`.
public struct DurationValue: Codable, Hashable, Sendable, CustomStringConvertible {
    public var duration: SimDuration
    public init(_ d: SimDuration) { duration = d }
    /// The longest duration a scenario may name.
    public static let maximum = SimDuration.days(100)

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        do {
            duration = try SimDuration(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: error.description)
        }
        if duration.nanoseconds < 0 {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "duration \"\(text)\" must not be negative")
        }
        // Every scenario duration, declared limit or not, stays far from Int64 overflow.
        if duration > Self.maximum {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "duration \"\(text)\" is longer than \(Self.maximum)")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(duration.description)
    }

    public var description: String { duration.description }
}

/// An event rate written as `"10/min"`, `"1/s"`, `"0.5/h"`, `"3/10m"` (count per duration).
/// Kept as an exact ratio: `count` events per `per`.
public struct RateValue: Codable, Hashable, Sendable, CustomStringConvertible {
    /// Events, in thousandths (so `0.5/h` is exact).
    public var milliEvents: Int64
    public var per: SimDuration

    public init(milliEvents: Int64, per: SimDuration) {
        self.milliEvents = milliEvents
        self.per = per
    }

    /// The fastest rate a scenario may name.
    public static let maxPerSecond: Int64 = 1000

    public static func perSecond(_ n: Int64) -> RateValue { RateValue(milliEvents: n * 1000, per: .seconds(1)) }

    public var isZero: Bool { milliEvents == 0 }

    /// Mean time between events (∞ → nil).
    public var meanInterval: SimDuration? {
        guard milliEvents > 0 else { return nil }
        // per · 1000 / milliEvents, in 128-bit so long periods cannot overflow
        let wide = Int128(per.nanoseconds) * 1000 / Int128(milliEvents)
        return SimDuration(nanoseconds: Int64(clamping: wide))
    }

    public init(parsing text: String) throws(RateParseError) {
        let parts = text.split(separator: "/", maxSplits: 1).map { $0.trimmingCharacters(in: " ") }
        guard parts.count == 2 else { throw RateParseError(text: text, reason: "expected COUNT/PERIOD, e.g. \"10/min\", \"1/s\", \"3/10m\"") }
        guard let milli = Self.parseMilli(parts[0]) else {
            throw RateParseError(text: text, reason: "bad count \"\(parts[0])\" (a non-negative decimal with ≤ 3 fraction digits)")
        }
        var periodText = parts[1]
        if let f = periodText.first, !f.isNumber { periodText = "1" + periodText }
        if periodText.hasSuffix("min") { periodText = String(periodText.dropLast(3)) + "m" }
        do {
            per = try SimDuration(parsing: periodText)
        } catch {
            throw RateParseError(text: text, reason: "bad period: \(error.reason)")
        }
        guard per.nanoseconds > 0 else { throw RateParseError(text: text, reason: "period must be positive") }
        guard per <= DurationValue.maximum else { throw RateParseError(text: text, reason: "period must be at most \(DurationValue.maximum)") }
        // At most 1000 events per second: a faster rate is a typo that would never finish.
        guard Int128(milli) * 1_000_000_000 <= Int128(Self.maxPerSecond) * 1000 * Int128(per.nanoseconds) else {
            throw RateParseError(text: text, reason: "at most \(Self.maxPerSecond)/s")
        }
        milliEvents = milli
    }

    static func parseMilli(_ s: String) -> Int64? {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = Int64(parts[0].isEmpty ? "0" : String(parts[0])), whole >= 0 else { return nil }
        var frac: Int64 = 0
        if parts.count == 2 {
            let f = parts[1]
            guard !f.isEmpty, f.count <= 3, f.allSatisfy(\.isASCII), let v = Int64(f) else { return nil }
            frac = v * [1, 100, 10, 1][f.count]
        }
        let (m, o) = whole.multipliedReportingOverflow(by: 1000)
        return o ? nil : m + frac
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        do { self = try RateValue(parsing: text) } catch {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: error.description)
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }

    public var description: String {
        let whole = milliEvents / 1000, frac = milliEvents % 1000
        var count = "\(whole)"
        if frac != 0 {
            var f = String(frac)
            while f.count < 3 { f = "0" + f }
            while f.hasSuffix("0") { f.removeLast() }
            count += "." + f
        }
        return "\(count)/\(per)"
    }
}

public struct RateParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public var text: String
    public var reason: String
    public var description: String { "invalid rate \"\(text)\": \(reason)" }
}

/// A probability written as a JSON number in [0, 1]; stored as an exact `Ratio`.
public struct ProbabilityValue: Codable, Hashable, Sendable, CustomStringConvertible {
    public var ratio: Ratio
    public init(_ ratio: Ratio) { self.ratio = ratio }
    public init(_ p: Double) { ratio = Ratio(probability: p) }

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        let p = try c.decode(Double.self)
        guard p >= 0, p <= 1, p.isFinite else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "probability \(p) must be between 0 and 1")
        }
        ratio = Ratio(probability: p)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(Double(ratio.numerator) / Double(ratio.denominator))
    }

    public var description: String { "\(Double(ratio.numerator) / Double(ratio.denominator))" }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        var s = self
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}
