/// A set of seeds written as `1..10000`, `5`, `1..100,200..300`, with optional sharding
/// (`--shard I/N`, I from 0, keeps the seeds at positions I, I+N, I+2N … of the whole list, so N
/// machines or array tasks split a range with no coordination: every seed in exactly one shard).
public struct SeedSelection: Sendable, Equatable, CustomStringConvertible {
    public var ranges: [ClosedRange<UInt64>]
    public var shard: (index: Int, count: Int)?

    public static func == (a: Self, b: Self) -> Bool {
        a.ranges == b.ranges && a.shard?.index == b.shard?.index && a.shard?.count == b.shard?.count
    }

    public init(parsing text: String, shard: String? = nil) throws(SeedSelectionError) {
        ranges = []
        for part in text.split(separator: ",") {
            let p = part.trimmingCharacters(in: " ")
            if let r = p.range(of: "..") {
                guard let lo = UInt64(p[..<r.lowerBound]), let hi = UInt64(p[r.upperBound...]), lo <= hi else {
                    throw SeedSelectionError("bad seed range \"\(p)\" (e.g. 1..10000)")
                }
                ranges.append(lo...hi)
            } else {
                guard let v = UInt64(p) else { throw SeedSelectionError("bad seed \"\(p)\" (e.g. 42 or 1..10000)") }
                ranges.append(v...v)
            }
        }
        guard !ranges.isEmpty else { throw SeedSelectionError("no seeds given") }
        if let s = shard {
            let parts = s.split(separator: "/")
            guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, (0..<n).contains(k) else {
                throw SeedSelectionError("bad shard \"\(s)\" (I/N with 0 ≤ I < N, e.g. 2/8)")
            }
            self.shard = (k, n)
        }
    }

    /// The seeds in order (shard applied to the position in the whole list).
    public var seeds: [UInt64] {
        var out: [UInt64] = []
        var position = 0
        for r in ranges {
            for s in r {
                if let sh = shard {
                    if position % sh.count == sh.index { out.append(s) }
                } else {
                    out.append(s)
                }
                position += 1
            }
        }
        return out
    }

    public var count: Int { seeds.count }

    /// The seed text without the shard (`1..100,200`), as a result file's header keeps it.
    public var rangesText: String {
        ranges.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)..\($0.upperBound)" }
            .joined(separator: ",")
    }

    public var description: String {
        ranges.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)..\($0.upperBound)" }
            .joined(separator: ",") + (shard.map { " shard \($0.index)/\($0.count)" } ?? "")
    }
}

public struct SeedSelectionError: Error, CustomStringConvertible {
    public var description: String
    init(_ d: String) { description = d }
}
