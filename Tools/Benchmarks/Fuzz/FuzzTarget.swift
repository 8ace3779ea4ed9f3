import IMWire
import SimKernel

/// One parser under `imsim fuzz <name>`. A target builds input `i` from its own random stream
/// (a pure function of `(seed, i)`), feeds it to the parser and says what happened. Adding a
/// target: a new file (in the parser's own module) with a type conforming to this, plus one
/// line in `FuzzTargets.all` (Tools/imsim/FuzzTargets.swift).
public protocol FuzzTarget {
    /// The subcommand name (`imsim fuzz <name>`).
    static var name: String { get }
    /// One line for `--help`.
    static var abstract: String { get }
    /// Mixed into the seed of every input's stream (default: a hash of `name`, so two targets
    /// never share inputs).
    static var streamSalt: UInt64 { get }
    init()
    /// Builds one input from `rng`, parses it, and checks the target's invariants.
    mutating func fuzzOne(_ rng: inout RandomStream) -> FuzzOutcome
}

extension FuzzTarget {
    public static var streamSalt: UInt64 { StableHash.fnv1a(name) }
}

/// What one input did. `error` is the typed error's kind (nil: accepted); a `violation` is a
/// broken invariant (an untyped error, an error naming no place, output differing on re-parse).
public struct FuzzOutcome: Sendable {
    public var inputBytes: Int
    public var error: String?
    public var violation: String?
    /// A summary of what was parsed (record counts, offsets) folded into the run's digest.
    public var fingerprint: UInt64
    /// Folded into the digest after the error when set (the wire target's error offset).
    public var errorDetail: UInt64?

    public init(inputBytes: Int, error: String? = nil, violation: String? = nil, fingerprint: UInt64 = 0,
                errorDetail: UInt64? = nil) {
        self.inputBytes = inputBytes
        self.error = error
        self.violation = violation
        self.fingerprint = fingerprint
        self.errorDetail = errorDetail
    }
}

public struct FuzzStats: Sendable, Hashable, Codable {
    public var target: String
    public var seed: UInt64
    public var iterations: Int
    public var inputBytes: Int = 0
    public var largestInput: Int = 0
    /// Inputs the parser accepted.
    public var accepted: Int = 0
    /// Error kind → count, sorted by kind.
    public var errors: [ErrorCount] = []
    public var violations: Int = 0
    public var firstViolation: String?
    /// Digest of every outcome: equal for equal (target, seed, iterations) on every machine.
    public var digest: String = ""

    public struct ErrorCount: Sendable, Hashable, Codable {
        public var kind: String
        public var count: Int
    }
}

public enum FuzzRunner {
    /// Fuzzes inputs `first ..< first + iterations` of `seed` against one target.
    public static func run<T: FuzzTarget>(_ type: T.Type, seed: UInt64, iterations: Int, first: Int = 0) -> FuzzStats {
        var target = T()
        return run(&target, seed: seed, iterations: iterations, first: first)
    }

    /// The same with a target the caller keeps (to read what it counted).
    public static func run<T: FuzzTarget>(_ target: inout T, seed: UInt64, iterations: Int, first: Int = 0) -> FuzzStats {
        var stats = FuzzStats(target: T.name, seed: seed, iterations: iterations)
        var counts: [String: Int] = [:]
        var digest = Digest64()
        let salt = T.streamSalt
        for i in first..<(first + iterations) {
            var rng = RandomStream(seed: StableHash.mix(seed ^ salt ^ StableHash.mix(UInt64(i))))
            let o = target.fuzzOne(&rng)
            stats.inputBytes += o.inputBytes
            stats.largestInput = max(stats.largestInput, o.inputBytes)
            digest.fold(o.fingerprint)
            digest.fold(o.error ?? "ok")
            if let x = o.errorDetail { digest.fold(x) }
            if let e = o.error { counts[e, default: 0] += 1 } else { stats.accepted += 1 }
            if let v = o.violation {
                stats.violations += 1
                if stats.firstViolation == nil { stats.firstViolation = "input \(i) (seed \(seed)): \(v)" }
            }
        }
        stats.errors = counts.keys.sorted().map { FuzzStats.ErrorCount(kind: $0, count: counts[$0]!) }
        stats.digest = digest.description
        return stats
    }

    /// The byte-level mutations every target shares (bit flips, interesting bytes, inserted,
    /// deleted, duplicated ranges, truncation, forged lengths).
    public static func mutate(_ bytes: inout [UInt8], _ rng: inout RandomStream) {
        WireFuzz.mutate(&bytes, &rng)
    }

    /// Replaces the scalar value after a random ':' of a JSON text with one of `values`
    /// (structure-aware mutation: extreme numbers, bad durations, wrong types).
    public static func spliceValue(_ b: inout [UInt8], _ values: [String], _ rng: inout RandomStream) {
        let colons = b.indices.filter { b[$0] == UInt8(ascii: ":") }
        guard let at = rng.pick(colons), !values.isEmpty else { return }
        var i = at + 1
        while i < b.count, b[i] == 0x20 { i += 1 }
        guard i < b.count, b[i] != UInt8(ascii: "["), b[i] != UInt8(ascii: "{") else { return }
        if b[i] == UInt8(ascii: "\"") {
            i += 1
            while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
            i = min(b.count, i + 1)
        } else {
            while i < b.count, b[i] != UInt8(ascii: ","), b[i] != UInt8(ascii: "}"), b[i] != UInt8(ascii: "]") { i += 1 }
        }
        let value = values[Int(rng.below(UInt64(values.count)))]
        b.replaceSubrange((at + 1)..<i, with: Array((" " + value).utf8))
    }
}
