import SimKernel
import Testing
@testable import IMWorld

/// `DeviceClock.wallMs` sums in 64 bits when nothing overflows and falls back to 128 bits with
/// clamping otherwise; both must give the exact 128-bit answer, clamped.
@Suite struct DeviceClockWallTests {
    func reference(_ c: DeviceClock, _ t: SimTime) -> Int64 {
        let e = Int128(t.milliseconds)
        return Int64(clamping: Int128(c.epochMs) + e + Int128(c.offsetMs) + e * Int128(c.driftPpm) / 1_000_000)
    }

    @Test func wallTimeIsTheExactClampedSum() {
        var rng = Xoshiro256StarStar(seed: 31)
        let epochs: [Int64] = [0, 1_700_000_000_000, .max, .min, .max - 5, -1_000]
        let drifts: [Int64] = [0, 1, -1, 99_999, -99_999, 150, -37]
        var checked = 0
        for epoch in epochs {
            for drift in drifts {
                for _ in 0..<200 {
                    let offset = Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64)
                    var clock = DeviceClock(epochMs: epoch, offsetMs: 0, driftPpm: drift)
                    clock.step(byMs: offset)
                    let ns = Int64(bitPattern: rng.next() >> 1) >> Int64(rng.next() % 63)
                    let t = SimTime.zero + .nanoseconds(ns)
                    #expect(clock.wallMs(at: t) == reference(clock, t))
                    checked += 1
                }
            }
        }
        #expect(checked == 6 * 7 * 200)
    }

    @Test func ordinaryClocksAddUp() {
        let clock = DeviceClock(epochMs: 1_700_000_000_000, offsetMs: -2_500, driftPpm: 200)
        // 1,000 s at +200 ppm: 200 ms fast, minus the 2.5 s offset.
        #expect(clock.wallMs(at: SimTime.zero + .seconds(1_000)) == 1_700_000_000_000 + 1_000_000 - 2_500 + 200)
    }
}
