import Testing
@testable import IMTrace
@testable import IMTraceFormat
import SimKernel

@Suite struct VarintTests {
    private func encode(_ v: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        out.appendVarint(v)
        return out
    }

    private func decode(_ bytes: [UInt8]) throws(Varint.Failure) -> (UInt64, Int) {
        try bytes.withBytes { (raw) throws(Varint.Failure) in
            var p = 0
            let v = try Varint.read(raw, &p)
            return (v, p)
        }
    }

    @Test func edgeCaseEncodings() {
        #expect(encode(0) == [0x00])
        #expect(encode(1) == [0x01])
        #expect(encode(127) == [0x7F])
        #expect(encode(128) == [0x80, 0x01])
        #expect(encode(300) == [0xAC, 0x02])
        #expect(encode(16_383) == [0xFF, 0x7F])
        #expect(encode(16_384) == [0x80, 0x80, 0x01])
        #expect(encode(1 << 63) == [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])
        #expect(encode(.max) == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
    }

    static let unsignedEdges: [UInt64] = {
        var v: [UInt64] = [0, 1, 127, 128, 255, 256, 16_383, 16_384, 1 << 21, 1 << 32, 1 << 56, 1 << 63, .max]
        v += [UInt64(1) << 32 - 1, UInt64(1) << 56 - 1, UInt64(1) << 63 - 1, UInt64.max - 1]
        return v
    }()

    static let deltas: [Int64] = {
        var v: [Int64] = [0, 1, -1, 999, 1_000, -1_000, 1_000_000, 15_000_000_000, 16_000_000_000, -3_000_000_000]
        v += [1_234_567, 86_400_000_000_000, .max, .min, Int64.max - 1, Int64.min + 1]
        v += [Int64(1) << 61, -(Int64(1) << 61), (Int64(1) << 61) - 1]
        return v
    }()

    @Test(arguments: unsignedEdges)
    func roundTripAndLength(_ v: UInt64) throws {
        let bytes = encode(v)
        #expect(bytes.count == Varint.length(v))
        let (back, consumed) = try decode(bytes)
        #expect(back == v)
        #expect(consumed == bytes.count)
    }

    @Test func zigzag() {
        let pairs: [(Int64, UInt64)] = [(0, 0), (-1, 1), (1, 2), (-2, 3), (2, 4), (63, 126), (-64, 127), (64, 128),
                                        (.max, .max - 1), (.min, .max)]
        for (s, u) in pairs {
            #expect(Varint.zigzag(s) == u, "zigzag(\(s))")
            #expect(Varint.unzigzag(u) == s, "unzigzag(\(u))")
        }
        #expect(encode(Varint.zigzag(-1)) == [0x01])
        #expect(encode(Varint.zigzag(-64)) == [0x7F])
        #expect(encode(Varint.zigzag(-65)) == [0x81, 0x01])
    }

    @Test func truncatedAndOverlong() {
        #expect(throws: Varint.Failure.truncated) { try decode([]) }
        #expect(throws: Varint.Failure.truncated) { try decode([0x80]) }
        #expect(throws: Varint.Failure.truncated) { try decode([0xFF, 0xFF, 0xFF]) }
        // 10th byte above 1: bits beyond 64.
        #expect(throws: Varint.Failure.overlong) { try decode([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]) }
        // 11 bytes.
        #expect(throws: Varint.Failure.overlong) { try decode([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x81, 0x00]) }
    }

    @Test(arguments: deltas)
    func timeCodeRoundTrip(_ delta: Int64) throws {
        var out: [UInt8] = []
        TimeCode.append(delta, to: &out)
        let back = try out.withBytes { (raw) throws(Varint.Failure) -> Int64 in
            var p = 0
            let v = try TimeCode.read(raw, &p)
            #expect(p == raw.count)
            return v
        }
        #expect(back == delta)
    }

    @Test func timeCodeIsCompactForRoundUnits() {
        func size(_ d: Int64) -> Int {
            var out: [UInt8] = []
            TimeCode.append(d, to: &out)
            return out.count
        }
        #expect(size(0) == 1)
        #expect(size(1_000_000) == 1)          // 1 ms
        #expect(size(15_000_000_000) == 1)     // 15 s
        #expect(size(-1_000_000) == 1)         // -1 ms
        #expect(size(250_000_000) == 2)        // 250 ms
        #expect(size(1_234_000) == 2)          // 1234 µs
        #expect(size(1_234_567) == 4)          // ns-exact: no scale helps
        #expect(size(.max) == 9)               // escape + 8 bytes
        // Code 3 (zero seconds) is never produced except as the escape.
        var zero: [UInt8] = []
        TimeCode.append(0, to: &zero)
        #expect(zero == [0])
    }

    /// The block buffer's varint (inline 1–2 bytes, a loop-free path up to 8 bytes, the loop
    /// beyond) and time code write the same bytes as the reference `[UInt8]` encoders, at every
    /// length and at every fill of the buffer (a store near its end must grow it first).
    @Test func blockBufferEncodingsMatchTheReference() {
        var values: [UInt64] = Self.unsignedEdges
        for bits in 0..<64 {
            let p = UInt64(1) << UInt64(bits)
            values += [p, p &- 1, p | 1, p | p >> 1 | 0x55]
        }
        var rng = SplitMix64(seed: 9)
        for _ in 0..<2_000 { values.append(rng.next() >> (rng.next() % 64)) }
        for fill in [0, 1, 5, 9, 15, 16] {
            let buffer = ByteBuffer(capacity: 16)
            var reference: [UInt8] = []
            for _ in 0..<fill { buffer.append(0xEE); reference.append(0xEE) }
            for v in values {
                buffer.appendVarint(v)
                reference.appendVarint(v)
                buffer.appendTimeCode(Int64(bitPattern: v))
                TimeCode.append(Int64(bitPattern: v), to: &reference)
            }
            #expect(Array(buffer.bytes) == reference, "fill \(fill)")
        }
    }
}
