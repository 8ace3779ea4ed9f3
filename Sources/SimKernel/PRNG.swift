/// SplitMix64 (Steele, Lea, Flood 2014): used only to expand seeds into generator state.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public var state: UInt64
    @inlinable public init(seed: UInt64) { state = seed }
    @inlinable public mutating func next() -> UInt64 {
        state = state &+ 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// xoshiro256** 1.0 (Blackman, Vigna): the simulation's generator.
public struct Xoshiro256StarStar: RandomNumberGenerator, Sendable {
    public var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    /// Raw state; must not be all zero.
    @inlinable public init(state: (UInt64, UInt64, UInt64, UInt64)) {
        precondition(state != (0, 0, 0, 0), "xoshiro256** state must not be all zero")
        (s0, s1, s2, s3) = state
    }

    /// Seeded through SplitMix64, as the authors recommend.
    @inlinable public init(seed: UInt64) {
        var sm = SplitMix64(seed: seed)
        s0 = sm.next(); s1 = sm.next(); s2 = sm.next(); s3 = sm.next()
    }

    @inlinable @inline(__always) public mutating func next() -> UInt64 {
        let result = (s1 &* 5).rotl(7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = s3.rotl(45)
        return result
    }
}

extension UInt64 {
    @inlinable @inline(__always) func rotl(_ k: UInt64) -> UInt64 { (self << k) | (self >> (64 - k)) }
}

/// A probability as an exact integer ratio (never a floating-point comparison).
public struct Ratio: Hashable, Sendable, Codable, CustomStringConvertible {
    public var numerator: UInt64
    public var denominator: UInt64

    @inlinable public init(_ numerator: UInt64, _ denominator: UInt64) {
        precondition(denominator > 0, "ratio denominator must be positive")
        precondition(numerator <= denominator, "ratio must be ≤ 1")
        // Lowest terms, so equal probabilities compare equal however they were written.
        var a = numerator, b = denominator
        while b != 0 { (a, b) = (b, a % b) }
        self.numerator = numerator / a
        self.denominator = denominator / a
    }

    public static let never = Ratio(0, 1)
    public static let always = Ratio(1, 1)

    /// Parts per million, e.g. `Ratio(ppm: 10_000)` = 1%.
    @inlinable public init(ppm: UInt64) { self.init(Swift.min(ppm, 1_000_000), 1_000_000) }

    /// From a probability written in a scenario file (e.g. `0.015`); rounded to parts per billion.
    /// IEEE multiplication and rounding are exact and deterministic, so this is reproducible.
    public init(probability p: Double) {
        let clamped = p.isNaN ? 0 : Swift.max(0, Swift.min(1, p))
        self.init(UInt64((clamped * 1_000_000_000).rounded()), 1_000_000_000)
    }

    public var isZero: Bool { numerator == 0 }
    public var description: String { "\(numerator)/\(denominator)" }
}

/// One named, independent random stream. Adding draws to one stream never changes another's.
public struct RandomStream: RandomNumberGenerator, Sendable {
    public var generator: Xoshiro256StarStar

    @inlinable public init(seed: UInt64) { generator = Xoshiro256StarStar(seed: seed) }

    @inlinable @inline(__always) public mutating func next() -> UInt64 { generator.next() }

    /// Uniform in `0..<bound` without modulo bias (Lemire's multiply-and-reject).
    @inlinable @inline(__always) public mutating func below(_ bound: UInt64) -> UInt64 {
        precondition(bound > 0, "empty range")
        var m = next().multipliedFullWidth(by: bound)
        if m.low < bound {
            let threshold = (0 &- bound) % bound
            while m.low < threshold { m = next().multipliedFullWidth(by: bound) }
        }
        return m.high
    }

    /// `RandomStream(seed: seed).chance(ratio)` when the stream's first draw decides it, nil when
    /// it needs more (Lemire's rejection zone): the first output of xoshiro256** is a function of
    /// its second state word only, so this seeds one word instead of four. A caller that needs
    /// the stream after the draw (or gets nil) seeds it and draws `chance` on it.
    @inlinable public static func firstChance(_ ratio: Ratio, seed: UInt64) -> Bool? {
        if ratio.numerator == 0 { return false }
        if ratio.numerator >= ratio.denominator { return true }
        // SplitMix64's second output (the xoshiro state word s1), then xoshiro's output of s1.
        var z = seed &+ 2 &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        let s1 = z ^ (z >> 31)
        let m = ((s1 &* 5).rotl(7) &* 9).multipliedFullWidth(by: ratio.denominator)
        if m.low < ratio.denominator { return nil }
        return m.high < ratio.numerator
    }

    /// Uniform integer in a closed range.
    @inlinable @inline(__always) public mutating func uniform(_ range: ClosedRange<Int64>) -> Int64 {
        let span = UInt64(bitPattern: range.upperBound &- range.lowerBound)
        if span == .max { return Int64(bitPattern: next()) }
        return range.lowerBound &+ Int64(bitPattern: below(span &+ 1))
    }

    @inlinable @inline(__always) public mutating func uniform(_ range: Range<Int>) -> Int {
        precondition(!range.isEmpty, "empty range")
        return range.lowerBound + Int(below(UInt64(range.count)))
    }

    /// Uniform duration in a closed range.
    @inlinable @inline(__always) public mutating func uniform(_ range: ClosedRange<SimDuration>) -> SimDuration {
        SimDuration(nanoseconds: uniform(range.lowerBound.nanoseconds...range.upperBound.nanoseconds))
    }

    /// True with probability `ratio`, decided in integers.
    @inlinable public mutating func chance(_ ratio: Ratio) -> Bool {
        if ratio.numerator == 0 { return false }
        if ratio.numerator >= ratio.denominator { return true }
        return below(ratio.denominator) < ratio.numerator
    }

    /// A random element, or nil for an empty collection.
    @inlinable public mutating func pick<C: RandomAccessCollection>(_ c: C) -> C.Element? where C.Index == Int {
        c.isEmpty ? nil : c[c.startIndex + uniform(0..<c.count)]
    }

    /// Fisher–Yates in place, driven only by this stream.
    @inlinable public mutating func shuffle<T>(_ a: inout [T]) {
        guard a.count > 1 else { return }
        for i in stride(from: a.count - 1, to: 0, by: -1) {
            let j = Int(below(UInt64(i + 1)))
            if i != j { a.swapAt(i, j) }
        }
    }

    /// Exponentially distributed delay with the given mean, in integer nanoseconds
    /// (fixed-point −ln U; no libm, so identical on every platform).
    @inlinable public mutating func exponential(mean: SimDuration) -> SimDuration {
        let k = (next() >> 32) &+ 1                       // 1 ... 2^32, U = k / 2^32 ∈ (0, 1]
        let minusLn = FixedPoint.minusLnUnit(k)          // Q32
        let ns = UInt64(Swift.max(0, mean.nanoseconds)).multipliedFullWidth(by: minusLn)
        let value = (ns.high << 32) | (ns.low >> 32)
        return SimDuration(nanoseconds: Int64(Swift.min(value, UInt64(Int64.max))))
    }

    /// An approximately standard-normal value in Q32 fixed point (Irwin–Hall, 12 uniforms; range ±6).
    @inlinable public mutating func standardNormalQ32() -> Int64 {
        var sum: Int64 = 0
        for _ in 0..<12 { sum &+= Int64(next() >> 32) }
        return sum &- (6 << 32)
    }

    /// Log-normal delay: `median · e^(σ·Z)`, σ given in thousandths (`sigmaMilli = 500` → σ = 0.5).
    /// Models a latency distribution with a long right tail.
    @inlinable public mutating func logNormal(median: SimDuration, sigmaMilli: Int64) -> SimDuration {
        let z = standardNormalQ32()
        // x = σ·Z (Q32); y = x·log2(e) (Q32)
        let x = (z &* sigmaMilli) / 1000
        let y = FixedPoint.mulQ32(x, FixedPoint.log2eQ32)
        return SimDuration(nanoseconds: FixedPoint.scaleByExp2(median.nanoseconds, exponentQ32: y))
    }
}

/// Named PRNG streams split from one run seed: `streams.stream("network")`,
/// `streams.stream("device", 17)`. The derivation uses stable hashes only.
public struct RandomStreams: Sendable {
    public let seed: UInt64

    @inlinable public init(seed: UInt64) { self.seed = seed }

    @inlinable public func streamSeed(_ name: String, _ index: UInt64 = 0) -> UInt64 {
        let key = StableHash.mix(StableHash.fnv1a(name) ^ StableHash.mix(index &+ 0x5851_F42D_4C95_7F2D))
        return StableHash.mix(seed ^ key)
    }

    /// `streamSeed(name, index)` with the name's hash computed once (`StableHash.fnv1a(name)`),
    /// for streams derived per occurrence on a hot path.
    @inlinable public func streamSeed(nameHash: UInt64, _ index: UInt64) -> UInt64 {
        StableHash.mix(seed ^ StableHash.mix(nameHash ^ StableHash.mix(index &+ 0x5851_F42D_4C95_7F2D)))
    }

    @inlinable public func stream(_ name: String) -> RandomStream {
        RandomStream(seed: streamSeed(name))
    }

    @inlinable public func stream(_ name: String, _ index: Int) -> RandomStream {
        RandomStream(seed: streamSeed(name, UInt64(truncatingIfNeeded: index)))
    }
}

/// Integer fixed-point math (Q32 = value · 2^32) for the distributions above.
public enum FixedPoint {
    public static let ln2Q32: UInt64 = 2_977_044_472          // ln 2 · 2^32
    public static let log2eQ32: Int64 = 6_196_328_019         // log2 e · 2^32

    /// log2(x) in Q32 for x ≥ 1, by repeated squaring (bit-by-bit algorithm).
    @inlinable public static func log2Q32(_ x: UInt64) -> UInt64 {
        precondition(x > 0)
        let n = UInt64(63 - x.leadingZeroBitCount)
        // mantissa in [1, 2) as Q62
        var m: UInt64 = n >= 62 ? x >> (n - 62) : x << (62 - n)
        var frac: UInt64 = 0
        for bit in stride(from: 31, through: 0, by: -1) {
            let sq = m.multipliedFullWidth(by: m)           // Q124
            m = (sq.high << 2) | (sq.low >> 62)            // back to Q62, in [1, 4)
            if m >= (1 << 63) {
                m >>= 1
                frac |= 1 << UInt64(bit)
            }
        }
        return (n << 32) | frac
    }

    /// −ln(k / 2^32) in Q32, for k in 1...2^32.
    @inlinable public static func minusLnUnit(_ k: UInt64) -> UInt64 {
        let l = log2Q32(k)                                  // ≤ 32 · 2^32
        let minusLog2 = (32 << 32) - l
        let p = minusLog2.multipliedFullWidth(by: ln2Q32)
        return (p.high << 32) | (p.low >> 32)
    }

    @inlinable public static func mulQ32(_ a: Int64, _ b: Int64) -> Int64 {
        let p = a.multipliedFullWidth(by: b)
        // arithmetic shift right by 32 of the 128-bit product
        return Int64(truncatingIfNeeded: (UInt64(bitPattern: p.high) << 32) | (p.low >> 32))
    }

    /// 2^(2^-k) in Q62 for k = 1...32.
    public static let exp2Steps: [UInt64] = [
        0x5a82_7999_fcef_3242, 0x4c1b_f828_c6dc_54b7, 0x45ca_e0f1_f545_eb73, 0x42d5_61b3_e624_3d8a,
        0x4166_c34c_5615_d0eb, 0x40b2_68f9_de01_83b9, 0x4058_f6a7_eccc_d5b6, 0x402c_6be9_6af2_fb58,
        0x4016_321b_6870_27a8, 0x400b_1817_8ba3_3b14, 0x4005_8bce_4101_47e8, 0x4002_c5d7_bff7_1dae,
        0x4001_62e8_07ee_7e5b, 0x4000_b173_0df6_a524, 0x4000_58b9_497b_8151, 0x4000_2c5c_955d_d701,
        0x4000_162e_46d6_f26b, 0x4000_0b17_2275_7b1b, 0x4000_058b_90fd_3e0c, 0x4000_02c5_c86f_3f26,
        0x4000_0162_e433_c79b, 0x4000_00b1_7218_edcf, 0x4000_0058_b90c_3968, 0x4000_002c_5c86_0d54,
        0x4000_0016_2e43_02d2, 0x4000_000b_1721_8073, 0x4000_0005_8b90_bffc, 0x4000_0002_c5c8_5fee,
        0x4000_0001_62e4_2ff3, 0x4000_0000_b172_17f8, 0x4000_0000_58b9_0bfc, 0x4000_0000_2c5c_85fe,
    ]

    /// `exp2Steps[k]` as a constant switch: no lazy-global addressor (a once-check per call)
    /// and no bounds check on the latency sampler's hot path.
    @inlinable @inline(__always) @usableFromInline static func exp2Step(_ k: Int) -> UInt64 {
        switch k {
        case 0: 0x5a82_7999_fcef_3242
        case 1: 0x4c1b_f828_c6dc_54b7
        case 2: 0x45ca_e0f1_f545_eb73
        case 3: 0x42d5_61b3_e624_3d8a
        case 4: 0x4166_c34c_5615_d0eb
        case 5: 0x40b2_68f9_de01_83b9
        case 6: 0x4058_f6a7_eccc_d5b6
        case 7: 0x402c_6be9_6af2_fb58
        case 8: 0x4016_321b_6870_27a8
        case 9: 0x400b_1817_8ba3_3b14
        case 10: 0x4005_8bce_4101_47e8
        case 11: 0x4002_c5d7_bff7_1dae
        case 12: 0x4001_62e8_07ee_7e5b
        case 13: 0x4000_b173_0df6_a524
        case 14: 0x4000_58b9_497b_8151
        case 15: 0x4000_2c5c_955d_d701
        case 16: 0x4000_162e_46d6_f26b
        case 17: 0x4000_0b17_2275_7b1b
        case 18: 0x4000_058b_90fd_3e0c
        case 19: 0x4000_02c5_c86f_3f26
        case 20: 0x4000_0162_e433_c79b
        case 21: 0x4000_00b1_7218_edcf
        case 22: 0x4000_0058_b90c_3968
        case 23: 0x4000_002c_5c86_0d54
        case 24: 0x4000_0016_2e43_02d2
        case 25: 0x4000_000b_1721_8073
        case 26: 0x4000_0005_8b90_bffc
        case 27: 0x4000_0002_c5c8_5fee
        case 28: 0x4000_0001_62e4_2ff3
        case 29: 0x4000_0000_b172_17f8
        case 30: 0x4000_0000_58b9_0bfc
        default: 0x4000_0000_2c5c_85fe
        }
    }

    /// `value · 2^(y / 2^32)`, saturating, for value ≥ 0.
    @inlinable public static func scaleByExp2(_ value: Int64, exponentQ32 y: Int64) -> Int64 {
        if value <= 0 { return 0 }
        let intPart = y >> 32                              // floor
        // r = 2^frac in Q62: one truncating product by `exp2Step(k)` per set bit k of the fraction
        // (k = 0 is its top bit), in k order. The top byte's eight steps start from 1.0, so their
        // result is a table (`exp2TopByte`); the rest visits only the set bits (the same products
        // in the same order as a loop over all 32 bits, so the same value).
        let frac = UInt32(truncatingIfNeeded: y)
        var r = exp2TopByte(frac >> 24)
        var rest = frac & 0x00FF_FFFF
        while rest != 0 {
            let k = rest.leadingZeroBitCount & 31          // 8...31; the mask drops the range check
            let p = r.multipliedFullWidth(by: exp2Step(k))
            r = (p.high << 2) | (p.low >> 62)
            rest &= ~(UInt32(0x8000_0000) &>> UInt32(k))
        }
        // value · r (Q62), then shift by intPart
        let p = UInt64(value).multipliedFullWidth(by: r)   // Q62
        let shift = 62 - intPart
        if shift >= 128 { return 0 }
        if shift <= 0 { return Int64.max }
        let result: UInt64
        if shift >= 64 {
            result = p.high >> UInt64(shift - 64)
        } else {
            if p.high >> UInt64(shift) != 0 { return Int64.max }
            result = (p.high << UInt64(64 - shift)) | (p.low >> UInt64(shift))
        }
        return result > UInt64(Int64.max) ? Int64.max : Int64(result)
    }
}
