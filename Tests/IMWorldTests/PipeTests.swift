import SimKernel
import Testing
@testable import IMWorld

@Suite struct PipeTests {
    @Test func bytesArriveInOrderEvenWhenLatencyShrinks() {
        var p = Pipe()
        var rng = RandomStream(seed: 1)
        _ = p.write([1, 2, 3], now: .zero, latency: .milliseconds(100), bandwidth: nil, split: false, rng: &rng)
        _ = p.write([4, 5], now: SimTime(nanoseconds: 1_000_000), latency: .milliseconds(10), bandwidth: nil, split: false, rng: &rng)
        // The second write cannot overtake the first.
        #expect(p.takeDue(now: SimTime(nanoseconds: 50_000_000)) == [])
        #expect(p.takeDue(now: SimTime(nanoseconds: 100_000_000)) == [1, 2, 3, 4, 5])
        #expect(p.isEmpty)
    }

    @Test func segmentsDueTogetherCoalesceIntoOneRead() {
        var p = Pipe()
        var rng = RandomStream(seed: 2)
        for i in 0..<5 {
            _ = p.write([UInt8(i)], now: .zero, latency: .milliseconds(20), bandwidth: nil, split: false, rng: &rng)
        }
        #expect(p.takeDue(now: SimTime(nanoseconds: 20_000_000)) == [0, 1, 2, 3, 4])
    }

    @Test func splitWritesArriveInPiecesThatJoinBack() {
        var rng = RandomStream(seed: 3)
        var sawSplit = false
        for _ in 0..<50 {
            var p = Pipe()
            let bytes = (0..<100).map { UInt8($0) }
            _ = p.write(bytes, now: .zero, latency: .milliseconds(10), bandwidth: nil, split: true, rng: &rng)
            var got: [UInt8] = []
            var reads = 0
            var t = SimTime.zero
            while !p.isEmpty {
                t = p.headArrival!
                let chunk = p.takeDue(now: t)
                if !chunk.isEmpty { reads += 1 }
                got += chunk
            }
            #expect(got == bytes)
            if reads > 1 { sawSplit = true }
        }
        #expect(sawSplit)
    }

    @Test func bandwidthAddsQueueingDelay() {
        var p = Pipe()
        var rng = RandomStream(seed: 4)
        // 1000 bytes at 10 kB/s = 100 ms on the wire, then 10 ms latency.
        _ = p.write([UInt8](repeating: 7, count: 1000), now: .zero, latency: .milliseconds(10), bandwidth: 10_000, split: false, rng: &rng)
        _ = p.write([UInt8](repeating: 8, count: 1000), now: .zero, latency: .milliseconds(10), bandwidth: 10_000, split: false, rng: &rng)
        #expect(p.headArrival == SimTime(nanoseconds: 110_000_000))
        #expect(p.takeDue(now: SimTime(nanoseconds: 110_000_000)).count == 1000)
        #expect(p.headArrival == SimTime(nanoseconds: 210_000_000))
    }

    @Test func holdDelaysEverythingAndClearDropsIt() {
        var p = Pipe()
        var rng = RandomStream(seed: 5)
        _ = p.write([1], now: .zero, latency: .milliseconds(10), bandwidth: nil, split: false, rng: &rng)
        p.holdUntil(SimTime(nanoseconds: 5_000_000_000))
        #expect(p.takeDue(now: SimTime(nanoseconds: 1_000_000_000)) == [])
        #expect(p.takeDue(now: SimTime(nanoseconds: 5_000_000_000)) == [1])
        _ = p.write([2], now: .zero, latency: .milliseconds(10), bandwidth: nil, split: false, rng: &rng)
        p.clear()
        #expect(p.isEmpty && p.bytesQueued == 0)
    }
}
