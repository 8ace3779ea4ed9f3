import Benchmarks
import PropertyBased
import SimKernel
import Testing
@testable import IMWire

@Suite struct StreamDecoderTests {
    /// Several frames of different types in one buffer.
    static func sampleStream(obfuscated: Bool, seed: UInt64 = 7) throws -> (frames: [Frame], bytes: [UInt8]) {
        var rng = RandomStream(seed: seed)
        var frames: [Frame] = [.pingResp(), try WireBenchmark.samplePublish(3)]
        for t: FrameType in [.puback, .queryAck, .connack, .disconnect, .publish] {
            frames.append(FrameGenerator.frame(t, direction: .serverToClient, using: &rng))
        }
        var bytes: [UInt8] = []
        for f in frames { try StreamFraming.encode(f, direction: .serverToClient, obfuscated: obfuscated, into: &bytes) }
        return (frames, bytes)
    }

    @Test(arguments: [false, true])
    func everySplitPointYieldsTheSameFrames(obfuscated: Bool) throws {
        let (frames, bytes) = try Self.sampleStream(obfuscated: obfuscated)
        for cut in 0...bytes.count {
            var d = StreamDecoder(direction: .serverToClient, obfuscated: obfuscated)
            var got = try d.feed(Array(bytes[..<cut]))
            got += try d.feed(Array(bytes[cut...]))
            #expect(got == frames, "split at \(cut)")
            try d.finish()
        }
    }

    @Test func everyPairOfSplitPointsYieldsTheSameFrames() throws {
        let (frames, bytes) = try Self.sampleStream(obfuscated: false, seed: 11)
        let step = max(1, bytes.count / 60)
        for a in stride(from: 0, through: bytes.count, by: step) {
            for b in stride(from: a, through: bytes.count, by: step) {
                var d = StreamDecoder(direction: .serverToClient)
                let got = try d.feed(Array(bytes[..<a])) + d.feed(Array(bytes[a..<b])) + d.feed(Array(bytes[b...]))
                #expect(got == frames, "splits at \(a), \(b)")
            }
        }
    }

    @Test func byteByByte() throws {
        let (frames, bytes) = try Self.sampleStream(obfuscated: true, seed: 3)
        var d = StreamDecoder(direction: .serverToClient, obfuscated: true)
        var got: [Frame] = []
        for b in bytes { got += try d.feed([b]) }
        #expect(got == frames)
        #expect(d.frameCount == frames.count && d.consumedByteCount == bytes.count)
    }

    @Test func randomChunkingProperty() async {
        await propertyCheck(count: 50, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = RandomStream(seed: seed)
            var frames: [Frame] = []
            var bytes: [UInt8] = []
            let dir: WireDirection = rng.below(2) == 0 ? .clientToServer : .serverToClient
            for _ in 0..<(1 + Int(rng.below(8))) {
                let f = FrameGenerator.frame(direction: dir, using: &rng)
                frames.append(f)
                try? StreamFraming.encode(f, direction: dir, into: &bytes)
            }
            var d = StreamDecoder(direction: dir)
            var got: [Frame] = []
            var at = 0
            while at < bytes.count {
                let n = 1 + Int(rng.below(UInt64(bytes.count)))
                got += (try? d.feed(Array(bytes[at..<min(bytes.count, at + n)]))) ?? []
                at += n
            }
            #expect(got == frames, "seed \(seed)")
            #expect(d.failure == nil && d.bufferedByteCount == 0)
        }
    }

    @Test func goodFramesBeforeABadOneAreDeliveredThenTheErrorIsFinal() throws {
        let good = try StreamFraming.encode(.pingReq(), direction: .clientToServer)
        var bad = try StreamFraming.encode(.queryConfirm(.init(messageId: 9)), direction: .clientToServer)
        bad[1] ^= 0xFF
        var d = StreamDecoder(direction: .clientToServer)
        #expect(try d.feed(good + good + bad) == [.pingReq(), .pingReq()])
        let expected = WireError.badChecksum(expected: bad[1] ^ 0xFF, found: bad[1], offset: 2 * good.count + 1)
        #expect(d.failure == expected)
        #expect(throws: expected) { _ = try d.feed([]) }
        #expect(throws: expected) { _ = try d.feed(good) }
        #expect(throws: expected) { try d.finish() }
    }

    @Test func oversizeLengthIsRejectedFromTheHeaderWithoutWaitingOrAllocating() throws {
        // Claims 268,435,455 payload bytes; only the 6 header bytes ever arrive.
        let byte0: UInt8 = 0x30
        let length: [UInt8] = [0xFF, 0xFF, 0xFF, 0x7F]
        let header = [byte0, length.reduce(byte0, ^)] + length
        var d = StreamDecoder(direction: .serverToClient)
        #expect(throws: WireError.frameTooLarge(size: 6 + 268_435_455, limit: StreamDecoder.defaultMaxFrameSize, offset: 2)) {
            _ = try d.feed(header)
        }
        #expect(d.bufferedByteCount == 0)
        // A custom limit, all headers included.
        let frame = try StreamFraming.encode(WireBenchmark.samplePublish(), direction: .serverToClient)
        var exact = StreamDecoder(direction: .serverToClient, maxFrameSize: frame.count)
        #expect(try exact.feed(frame).count == 1)
        var tight = StreamDecoder(direction: .serverToClient, maxFrameSize: frame.count - 1)
        #expect(throws: WireError.frameTooLarge(size: frame.count, limit: frame.count - 1, offset: 2)) {
            _ = try tight.feed(Array(frame.prefix(4)))
        }
    }

    @Test func defaultLimitAdmitsA128KiBBody() throws {
        let body = [UInt8](repeating: 0x41, count: 128 * 1024)
        let p = Frame.publish(Frame.Publish(date: 1, topic: .s_msg, targetId: "some-user-id", messageId: 1, body: body))
        let bytes = try StreamFraming.encode(p, direction: .serverToClient)
        var d = StreamDecoder(direction: .serverToClient)
        var got: [Frame] = []
        for chunk in stride(from: 0, to: bytes.count, by: 1500) {
            got += try d.feed(Array(bytes[chunk..<min(bytes.count, chunk + 1500)]))
        }
        #expect(got == [p])
    }

    @Test func finishReportsAnIncompleteFrame() throws {
        let bytes = try StreamFraming.encode(WireBenchmark.samplePublish(), direction: .serverToClient)
        var d = StreamDecoder(direction: .serverToClient)
        _ = try d.feed(Array(bytes.prefix(10)))
        #expect(throws: WireError.truncated(field: "payload", needed: bytes.count, had: 10, offset: 0)) { try d.finish() }
        var e = StreamDecoder(direction: .serverToClient)
        _ = try e.feed([0x30])
        #expect(throws: WireError.truncated(field: "fixed header", needed: 2, had: 1, offset: 0)) { try e.finish() }
        var f = StreamDecoder(direction: .serverToClient)
        _ = try f.feed([0x30, 0x00, 0x80])
        #expect(throws: WireError.truncated(field: "remaining length", needed: 4, had: 3, offset: 0)) { try f.finish() }
    }
}
