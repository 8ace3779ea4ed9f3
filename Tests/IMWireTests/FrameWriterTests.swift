import Benchmarks
import SimKernel
import Testing
@testable import IMWire

/// The frame writer (session 33, `wire14`): frames are written through one pointer into storage
/// of their exact size. Checked against a byte-by-byte transcription of wire-protocol §1.2–1.4,
/// with header strings of every UTF-8 length in both string encodings.
@Suite struct FrameWriterTests {
    // MARK: reference (appends, as the spec reads)

    static func u16(_ v: UInt16, _ out: inout [UInt8]) { out += [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func u32(_ v: UInt32, _ out: inout [UInt8]) { for s in [24, 16, 8, 0] { out.append(UInt8((v >> UInt32(s)) & 0xFF)) } }
    static func i64(_ v: Int64, _ out: inout [UInt8]) {
        let u = UInt64(bitPattern: v)
        for s in stride(from: 56, through: 0, by: -8) { out.append(UInt8((u >> UInt64(s)) & 0xFF)) }
    }

    /// CESU-8 from the UTF-16 code units: each unit (a surrogate too) as its own 1–3-byte sequence.
    static func string(_ s: String, _ e: WireStringEncoding, _ out: inout [UInt8]) {
        var b: [UInt8] = []
        if e == .utf8 {
            b = Array(s.utf8)
        } else {
            for unit in s.utf16 {
                let u = UInt32(unit)
                switch u {
                case 0..<0x80: b.append(UInt8(u))
                case 0x80..<0x800: b += [UInt8(0xC0 | u >> 6), UInt8(0x80 | u & 0x3F)]
                default: b += [UInt8(0xE0 | u >> 12), UInt8(0x80 | (u >> 6) & 0x3F), UInt8(0x80 | u & 0x3F)]
                }
            }
        }
        u16(UInt16(b.count), &out)
        out += b
    }

    static func payload(_ f: Frame, _ d: WireDirection, _ e: WireStringEncoding) -> [UInt8] {
        var o: [UInt8] = []
        let s2c = d == .serverToClient
        switch f {
        case .connect(let c):
            string(c.protocolName, e, &o); o.append(c.protocolVersion); o.append(c.connectFlags); u16(c.keepAlive, &o)
            string(c.clientId, e, &o)
            if let k = c.appKey { string(k, e, &o) }
            if let t = c.token { string(t, e, &o) }
        case .connack(let c):
            o += [c.reserved, c.statusCode]
            if let s = c.session { string(s.userId, e, &o); string(s.sessionId, e, &o); i64(s.timestamp, &o) }
        case .publish(let p):
            if s2c { u32(p.date, &o) }
            string(p.topic, e, &o); string(p.targetId, e, &o); u16(p.messageId, &o); o += p.body
        case .puback(let p):
            u16(p.messageId, &o)
            if s2c { u32(p.date, &o); u16(p.status, &o); u16(p.millis, &o); string(p.messageUId, e, &o) }
        case .query(let q):
            string(q.topic, e, &o); string(q.targetId, e, &o); u16(q.messageId, &o); o += q.body
        case .queryAck(let q):
            u16(q.messageId, &o); u32(q.date, &o); u16(q.status, &o); o += q.body
        case .queryConfirm(let q):
            u16(q.messageId, &o)
        case .subscribeFamily(let r):
            o += r.payload
        case .pingReq, .pingResp:
            break
        case .disconnect(let d):
            o += [d.reserved, d.statusCode]
        }
        return o
    }

    static func stream(_ f: Frame, _ d: WireDirection, _ e: WireStringEncoding, obfuscated: Bool) -> [UInt8] {
        var p = payload(f, d, e)
        if obfuscated { for i in p.indices { p[i] ^= StreamFraming.obfuscationKey[i % 8] } }
        var length: [UInt8] = []
        var n = p.count
        repeat {
            length.append(UInt8(n & 0x7F) | (n >> 7 > 0 ? 0x80 : 0))
            n >>= 7
        } while n > 0
        let byte0 = f.flags.byte0(f.type)
        return [byte0, length.reduce(byte0, ^)] + length + p
    }

    // MARK: frames with any header text

    static let pieces = ["", "a", "pullMsg", "é", "你好", "😀", "a😀b", "\u{0}", "\u{7F}", "\u{FFFF}",
                         "\u{10000}", "\u{10FFFF}", "abcdefgh", "abcdefg😀", "user-12345678"]

    static func text(_ rng: inout RandomStream) -> String {
        var s = ""
        for _ in 0..<Int(rng.below(6)) { s += pieces[Int(rng.below(UInt64(pieces.count)))] }
        return s
    }

    static func body(_ rng: inout RandomStream) -> [UInt8] {
        // Sizes around the 1-, 2- and 3-byte remaining-length boundaries.
        let n = [0, 1, 90, 127, 200, 16_300, 16_384, 20_000][Int(rng.below(8))]
        return (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    /// Every frame type with random header strings (non-BMP text included).
    static func frame(_ type: FrameType, _ d: WireDirection, _ rng: inout RandomStream) -> Frame {
        var f = FrameGenerator.frame(type, direction: d, using: &rng)
        switch f {
        case .connect(var c):
            c.protocolName = text(&rng); c.clientId = text(&rng)
            c.appKey = rng.below(3) == 0 ? nil : text(&rng); c.token = rng.below(3) == 0 ? nil : text(&rng)
            f = .connect(c)
        case .connack(var c):
            if rng.below(4) > 0 { c.session = .init(userId: text(&rng), sessionId: text(&rng), timestamp: Int64(bitPattern: rng.next())) }
            f = .connack(c)
        case .publish(var p):
            p.topic = text(&rng); p.targetId = text(&rng); p.body = body(&rng); f = .publish(p)
        case .puback(var p):
            if d == .serverToClient { p.messageUId = text(&rng) }
            f = .puback(p)
        case .query(var q):
            q.topic = text(&rng); q.targetId = text(&rng); q.body = body(&rng); f = .query(q)
        case .queryAck(var q):
            q.body = body(&rng); f = .queryAck(q)
        default:
            break
        }
        return f
    }

    @Test(arguments: WireStringEncoding.allCases)
    func streamBytesAreTheSpecsBytes(encoding: WireStringEncoding) throws {
        var rng = RandomStream(seed: 3301)
        for d in [WireDirection.clientToServer, .serverToClient] {
            for round in 0..<300 {
                let f = Self.frame(FrameType.allCases[round % FrameType.allCases.count], d, &rng)
                for obfuscated in [false, true] {
                    let expected = Self.stream(f, d, encoding, obfuscated: obfuscated)
                    #expect(try StreamFraming.encode(f, direction: d, obfuscated: obfuscated, strings: encoding) == expected)
                    // Appended after other bytes, and into an empty buffer with room: same bytes.
                    var after: [UInt8] = [1, 2, 3]
                    try StreamFraming.encode(f, direction: d, obfuscated: obfuscated, strings: encoding, into: &after)
                    #expect(after == [1, 2, 3] + expected)
                    var roomy: [UInt8] = []
                    roomy.reserveCapacity(expected.count + 100)
                    let capacity = roomy.capacity
                    try StreamFraming.encode(f, direction: d, obfuscated: obfuscated, strings: encoding, into: &roomy)
                    #expect(roomy == expected)
                    #expect(roomy.capacity == capacity)   // written into the room it had
                }
                let message = try MessageFraming.encode(f, direction: d, strings: encoding)
                #expect(message == [f.flags.byte0(f.type)] + Self.payload(f, d, encoding))
            }
        }
    }

    /// A fresh write gets storage of the frame's exact size (one allocation, no growth).
    @Test func aFreshBufferIsAllocatedOnceAtTheFramesSize() throws {
        var rng = RandomStream(seed: 3302)
        for round in 0..<100 {
            let f = Self.frame(FrameType.allCases[round % FrameType.allCases.count], .serverToClient, &rng)
            var out: [UInt8] = []
            try StreamFraming.encode(f, direction: .serverToClient, into: &out)
            #expect(out.count == Self.stream(f, .serverToClient, .cesu8, obfuscated: false).count)
            #expect(out.capacity >= out.count)
            #expect(out.capacity < out.count + 32)      // the allocator's rounding at most
        }
    }

    /// The O(1) ASCII test (UTF-16 count = UTF-8 count) agrees with a byte scan, small and long
    /// strings, native and built from substrings.
    @Test func asciiTestAgreesWithAScan() {
        var rng = RandomStream(seed: 3304)
        for round in 0..<500 {
            var s = Self.text(&rng)
            if round % 3 == 0 { s = String(repeating: s, count: 1 + Int(rng.below(12))) }
            if round % 5 == 0, let i = s.firstIndex(where: { _ in true }) { s = String(s[i...]) }
            #expect(WireString.isASCII(s, utf8Count: s.utf8.count) == s.utf8.allSatisfy { $0 < 0x80 })
        }
    }

    /// The writer's CESU-8 against the reference, one string at a time (lengths and surrogates).
    @Test func cesu8StringsMatchTheUTF16Transcription() {
        var rng = RandomStream(seed: 3303)
        for _ in 0..<500 {
            let s = Self.text(&rng)
            for e in WireStringEncoding.allCases {
                var expected: [UInt8] = []
                Self.string(s, e, &expected)
                let size = try? WireString.size(s, "s", e)
                #expect(size == expected.count)
                let p = UnsafeMutablePointer<UInt8>.allocate(capacity: expected.count)
                defer { p.deallocate() }
                var w = ByteWriter(p)
                w.string(s, e)
                #expect(w.p == p + expected.count)
                #expect(Array(UnsafeBufferPointer(start: p, count: expected.count)) == expected)
            }
        }
    }
}
