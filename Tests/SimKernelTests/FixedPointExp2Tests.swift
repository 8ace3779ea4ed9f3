import Testing
@testable import SimKernel

/// `scaleByExp2` takes the fraction's top byte from a table and multiplies only for the set bits
/// below it. Every latency draw (so every digest) depends on its last bit: these pin it to the
/// loop it replaced, kept here as the reference.
@Suite struct FixedPointExp2Tests {
    /// The replaced implementation (session 32), verbatim but for the table read.
    static func reference(_ value: Int64, _ y: Int64) -> Int64 {
        if value <= 0 { return 0 }
        let intPart = y >> 32
        let frac = UInt64(y & 0xFFFF_FFFF)
        var r: UInt64 = 1 << 62
        for k in 0..<32 where frac & (1 << UInt64(31 - k)) != 0 {
            let p = r.multipliedFullWidth(by: FixedPoint.exp2Steps[k])
            r = (p.high << 2) | (p.low >> 62)
        }
        let p = UInt64(value).multipliedFullWidth(by: r)
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

    @Test func topByteTableIsTheLoopsFirstEightSteps() {
        for b in 0..<256 {
            var r: UInt64 = 1 << 62
            for k in 0..<8 where b & (0x80 >> k) != 0 {
                let p = r.multipliedFullWidth(by: FixedPoint.exp2Steps[k])
                r = (p.high << 2) | (p.low >> 62)
            }
            #expect(FixedPoint.exp2TopByte(UInt32(b)) == r, "byte \(b)")
        }
    }

    @Test func edgeCasesMatchTheReference() {
        let values: [Int64] = [Int64.min, -1, 0, 1, 2, 3, 999, 40_000_000, 1 << 31, 1 << 32, (1 << 62) - 1,
                               1 << 62, Int64.max - 1, Int64.max]
        var ys: [Int64] = [Int64.min, Int64.min + 1, Int64.max, Int64.max - 1, 0, 1, -1, 0xFFFF_FFFF,
                           1 << 31, (1 << 32) - 1, -(1 << 32), -(1 << 32) + 1, 1 << 32]
        for intPart: Int64 in [-200, -129, -128, -127, -66, -65, -64, -63, -2, -1, 0, 1, 2, 30, 61, 62, 63, 64, 200] {
            for frac: Int64 in [0, 1, 0xFF, 0xFF_FFFF, 0x100_0000, 0x8000_0000, 0xFFFF_FFFF, 0x7FFF_FFFF, 0x5555_5555] {
                ys.append(intPart << 32 | frac)
            }
        }
        for bit in 0..<32 { ys.append(Int64(1) << Int64(bit)); ys.append(Int64(0xFFFF_FFFF) ^ (1 << Int64(bit))) }
        var mismatches = 0
        for v in values { for y in ys where FixedPoint.scaleByExp2(v, exponentQ32: y) != Self.reference(v, y) { mismatches += 1 } }
        #expect(mismatches == 0)
    }

    /// Every fraction's top byte with every lower pattern class, and millions of random inputs
    /// shaped like the latency sampler's (a median in ns, |y| of a few units) and unshaped.
    @Test func millionsOfRandomInputsMatchTheReference() {
        var rng = RandomStream(seed: 0xE2B2)
        var mismatches = 0
        var first: (Int64, Int64)?
        func check(_ v: Int64, _ y: Int64) {
            if FixedPoint.scaleByExp2(v, exponentQ32: y) != Self.reference(v, y) {
                mismatches += 1
                if first == nil { first = (v, y) }
            }
        }
        for top in 0..<256 {
            for _ in 0..<256 {
                let y = Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: rng.next()))) << 32
                    | Int64(top) << 24 | Int64(rng.next() & 0xFF_FFFF)
                check(Int64(rng.next() >> 1), y)
            }
        }
        for i in 0..<2_000_000 {
            let a = rng.next(), b = rng.next()
            // Sampler-like: value a latency median (1 µs…1 s), y = σ·Z·log2 e within ±9 units.
            check(Int64(1_000 + a % 1_000_000_000), Int64(bitPattern: b) % (9 << 32))
            // Any value, exponents around the saturation and underflow edges and beyond.
            check(Int64(bitPattern: a) >> UInt64(i % 64), Int64(bitPattern: b) >> UInt64(20 + i % 44))
        }
        #expect(mismatches == 0, "first mismatch \(String(describing: first))")
    }
}

/// `firstChance` answers, whenever it answers, what the seeded stream's `chance` does.
@Suite struct FirstChanceTests {
    @Test func agreesWithTheSeededStream() {
        var rng = RandomStream(seed: 0xC4A7)
        let ratios = [Ratio.never, .always, Ratio(1, 10), Ratio(1, 2), Ratio(999_999, 1_000_000), Ratio(1, 1_000_000_000),
                      Ratio(3, 7), Ratio(1 << 62, (1 << 63) + 1), Ratio((1 << 63) - 5, (1 << 63) + 3)]
        var mismatches = 0, undecided = 0
        for i in 0..<600_000 {
            let ratio = ratios[i % ratios.count]
            let seed = rng.next()
            var full = RandomStream(seed: seed)
            let expected = full.chance(ratio)
            switch RandomStream.firstChance(ratio, seed: seed) {
            case nil: undecided += 1
            case let answer?: if answer != expected { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
        // Only the huge denominators fall in Lemire's rejection zone at all often.
        #expect(undecided > 0 && undecided < 600_000 / ratios.count * 2)
    }
}
