/// Virtual time: integer nanoseconds since the start of a run. Never derived from a wall clock.
public struct SimTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static let zero = SimTime(nanoseconds: 0)
    public static let max = SimTime(nanoseconds: .max)

    @inlinable public static func < (a: SimTime, b: SimTime) -> Bool { a.nanoseconds < b.nanoseconds }
    @inlinable public static func + (t: SimTime, d: SimDuration) -> SimTime {
        SimTime(nanoseconds: t.nanoseconds &+ d.nanoseconds)
    }
    @inlinable public static func - (t: SimTime, d: SimDuration) -> SimTime {
        SimTime(nanoseconds: t.nanoseconds &- d.nanoseconds)
    }
    @inlinable public static func - (a: SimTime, b: SimTime) -> SimDuration {
        SimDuration(nanoseconds: a.nanoseconds &- b.nanoseconds)
    }
    @inlinable public static func += (t: inout SimTime, d: SimDuration) { t = t + d }

    /// Whole milliseconds (floor), the unit the IM protocol speaks.
    @inlinable public var milliseconds: Int64 { nanoseconds.floorDiv(1_000_000) }

    /// `41.250s` — seconds with millisecond precision.
    public var description: String { TimeFormat.seconds(nanoseconds, fractionDigits: 3) }
    /// `41.250000123s` — full nanosecond precision.
    public var preciseDescription: String { TimeFormat.seconds(nanoseconds, fractionDigits: 9) }
}

/// A span of virtual time in integer nanoseconds.
public struct SimDuration: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static let zero = SimDuration(nanoseconds: 0)

    @inlinable public static func nanoseconds(_ n: Int64) -> SimDuration { SimDuration(nanoseconds: n) }
    @inlinable public static func microseconds(_ n: Int64) -> SimDuration { SimDuration(nanoseconds: n * 1_000) }
    @inlinable public static func milliseconds(_ n: Int64) -> SimDuration { SimDuration(nanoseconds: n * 1_000_000) }
    @inlinable public static func seconds(_ n: Int64) -> SimDuration { SimDuration(nanoseconds: n * 1_000_000_000) }
    @inlinable public static func minutes(_ n: Int64) -> SimDuration { .seconds(n * 60) }
    @inlinable public static func hours(_ n: Int64) -> SimDuration { .seconds(n * 3600) }
    @inlinable public static func days(_ n: Int64) -> SimDuration { .seconds(n * 86_400) }

    @inlinable public static func < (a: SimDuration, b: SimDuration) -> Bool { a.nanoseconds < b.nanoseconds }
    @inlinable public static func + (a: SimDuration, b: SimDuration) -> SimDuration {
        SimDuration(nanoseconds: a.nanoseconds &+ b.nanoseconds)
    }
    @inlinable public static func - (a: SimDuration, b: SimDuration) -> SimDuration {
        SimDuration(nanoseconds: a.nanoseconds &- b.nanoseconds)
    }
    @inlinable public static func * (a: SimDuration, k: Int64) -> SimDuration {
        SimDuration(nanoseconds: a.nanoseconds &* k)
    }
    @inlinable public var milliseconds: Int64 { nanoseconds.floorDiv(1_000_000) }

    /// Shortest readable form: `250ms`, `41.250s`, `2h`, `1m30s`, `1.500us`.
    public var description: String { TimeFormat.duration(nanoseconds) }

    /// Parses `"250ms"`, `"41.25s"`, `"2h"`, `"1h30m"`, `"500us"`, `"10ns"`, `"1d"`. Decimal
    /// fractions are exact (integer arithmetic), never via `Double`.
    public init(parsing text: String) throws(DurationParseError) {
        self = try DurationParser.parse(text)
    }
}

public struct DurationParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public var text: String
    public var position: Int
    public var reason: String
    public var description: String {
        "invalid duration \"\(text)\" at character \(position): \(reason) (examples: \"250ms\", \"41.25s\", \"2h\", \"1m30s\")"
    }
}

extension Int64 {
    @inlinable func floorDiv(_ d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}

enum TimeFormat {
    static func seconds(_ ns: Int64, fractionDigits: Int) -> String {
        let negative = ns < 0
        let mag = ns.magnitude
        let whole = mag / 1_000_000_000
        var frac = mag % 1_000_000_000
        var divisor: UInt64 = 1
        for _ in 0..<(9 - fractionDigits) { divisor *= 10 }
        frac /= divisor
        var fracText = String(frac)
        while fracText.count < fractionDigits { fracText = "0" + fracText }
        return (negative ? "-" : "") + "\(whole)" + (fractionDigits > 0 ? ".\(fracText)" : "") + "s"
    }

    static func duration(_ ns: Int64) -> String {
        if ns == 0 { return "0s" }
        let negative = ns < 0
        let mag = ns.magnitude
        let sign = negative ? "-" : ""
        if mag < 1_000 { return "\(sign)\(mag)ns" }
        if mag < 1_000_000 { return sign + decimal(mag, unit: 1_000, digits: 3) + "us" }
        if mag < 1_000_000_000 { return sign + decimal(mag, unit: 1_000_000, digits: 6) + "ms" }
        let s: UInt64 = 1_000_000_000
        if mag % s == 0 {
            let secs = mag / s
            let h = secs / 3600, m = (secs % 3600) / 60, r = secs % 60
            var out = sign
            if h > 0 { out += "\(h)h" }
            if m > 0 { out += "\(m)m" }
            if r > 0 { out += "\(r)s" }
            return out
        }
        return sign + decimal(mag, unit: s, digits: 9) + "s"
    }

    /// `mag / unit` with trailing zeros of the fraction trimmed (but at least 3 digits if any).
    private static func decimal(_ mag: UInt64, unit: UInt64, digits: Int) -> String {
        let whole = mag / unit
        let frac = mag % unit
        if frac == 0 { return "\(whole)" }
        var f = String(frac)
        while f.count < digits { f = "0" + f }
        while f.count > 3 && f.hasSuffix("0") { f.removeLast() }
        return "\(whole).\(f)"
    }
}

enum DurationParser {
    static let units: [(String, Int64)] = [
        ("ns", 1), ("us", 1_000), ("µs", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000),
        ("m", 60_000_000_000), ("min", 60_000_000_000), ("h", 3_600_000_000_000), ("d", 86_400_000_000_000),
    ]

    static func parse(_ text: String) throws(DurationParseError) -> SimDuration {
        let chars = Array(text.trimmingSpaces())
        func fail(_ pos: Int, _ reason: String) -> DurationParseError {
            DurationParseError(text: text, position: pos, reason: reason)
        }
        if chars.isEmpty { throw fail(0, "empty") }
        var i = 0
        var negative = false
        if chars[0] == "-" { negative = true; i = 1 }
        var total: Int64 = 0
        var sawComponent = false
        while i < chars.count {
            let start = i
            var whole: Int64 = 0
            var sawDigit = false
            while i < chars.count, let d = chars[i].wholeNumberValue, chars[i].isASCII {
                let (m, o1) = whole.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(Int64(d))
                if o1 || o2 { throw fail(i, "number too large") }
                whole = a; sawDigit = true; i += 1
            }
            var fracDigits: [Int64] = []
            if i < chars.count, chars[i] == "." {
                i += 1
                while i < chars.count, let d = chars[i].wholeNumberValue, chars[i].isASCII {
                    fracDigits.append(Int64(d)); i += 1
                }
                if fracDigits.isEmpty { throw fail(i, "expected digits after '.'") }
            }
            if !sawDigit && fracDigits.isEmpty { throw fail(start, "expected a number") }
            let unitStart = i
            while i < chars.count, chars[i].isLetter || chars[i] == "µ" { i += 1 }
            let unitText = String(chars[unitStart..<i])
            if unitText.isEmpty {
                // A bare number is only accepted as the whole text, meaning seconds.
                throw fail(unitStart, "missing unit (ns, us, ms, s, m, h, d)")
            }
            guard let unit = units.first(where: { $0.0 == unitText })?.1 else {
                throw fail(unitStart, "unknown unit '\(unitText)' (ns, us, ms, s, m, h, d)")
            }
            let (wv, o1) = whole.multipliedReportingOverflow(by: unit)
            if o1 { throw fail(start, "duration too large") }
            var fracNs: Int64 = 0
            var scale = unit
            for d in fracDigits {
                if scale % 10 != 0 {
                    if d != 0 { throw fail(start, "more precision than 1ns") }
                    continue
                }
                scale /= 10
                fracNs += d * scale
            }
            let (sum, o2) = total.addingReportingOverflow(wv &+ fracNs)
            if o2 { throw fail(start, "duration too large") }
            total = sum
            sawComponent = true
        }
        if !sawComponent { throw fail(i, "expected a number") }
        return SimDuration(nanoseconds: negative ? -total : total)
    }
}

extension String {
    func trimmingSpaces() -> Substring {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return s
    }
}
