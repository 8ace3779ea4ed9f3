import Benchmarks
import SimKernel
import Testing
@testable import IMWire

/// The buffer handling of stream framing (issue 30): the size computed before encoding, frames
/// sharing one buffer, and the decoder appending to a caller's array.
@Suite struct StreamFramingBufferTests {
    static let directions: [WireDirection] = [.clientToServer, .serverToClient]

    /// `payloadSize` (what `encode` reserves) is the length of the payload as the spec writes it
    /// (`FrameWriterTests.payload`, a byte-by-byte encoder), for every type.
    @Test(arguments: FrameType.allCases)
    func computedPayloadSizeIsTheEncodedLength(type: FrameType) throws {
        var rng = RandomStream(seed: 30 + UInt64(type.rawValue))
        for direction in Self.directions {
            for _ in 0..<50 {
                let frame = FrameGenerator.frame(type, direction: direction, using: &rng)
                let size = try FrameCodec.payloadSize(frame, direction)
                #expect(FrameWriterTests.payload(frame, direction, .cesu8).count == size)
                let stream = try StreamFraming.encode(frame, direction: direction)
                let lengthBytes = size < 128 ? 1 : size < 16_384 ? 2 : size < 2_097_152 ? 3 : 4
                #expect(stream.count == 2 + lengthBytes + size)
            }
        }
    }

    /// Frames encoded into one buffer (one write) are the concatenation of each encoded alone.
    @Test func framesSharingABufferAreTheirConcatenation() throws {
        var rng = RandomStream(seed: 3011)
        for direction in Self.directions {
            for obfuscated in [false, true] {
                var shared: [UInt8] = []
                var separate: [UInt8] = []
                for round in 0..<60 {
                    let type = FrameType.allCases[round % FrameType.allCases.count]
                    let frame = FrameGenerator.frame(type, direction: direction, using: &rng)
                    try StreamFraming.encode(frame, direction: direction, obfuscated: obfuscated, into: &shared)
                    separate += try StreamFraming.encode(frame, direction: direction, obfuscated: obfuscated)
                }
                #expect(shared == separate)
            }
        }
    }

    /// `feed(_:into:)` appends what `feed(_:)` returns, split anywhere, and keeps the array's
    /// earlier contents.
    @Test func feedIntoAppendsTheFramesFeedReturns() throws {
        var rng = RandomStream(seed: 3012)
        var frames: [Frame] = []
        var stream: [UInt8] = []
        for round in 0..<40 {
            let type = FrameType.allCases[round % FrameType.allCases.count]
            let f = FrameGenerator.frame(type, direction: .serverToClient, using: &rng)
            frames.append(f)
            stream += try StreamFraming.encode(f, direction: .serverToClient)
        }
        for cut in [1, 7, stream.count / 3, stream.count - 1] {
            var a = StreamDecoder(direction: .serverToClient)
            var b = StreamDecoder(direction: .serverToClient)
            var viaFeed = try a.feed(Array(stream[..<cut]))
            viaFeed += try a.feed(Array(stream[cut...]))
            let sentinel = Frame.pingResp()
            var into: [Frame] = [sentinel]
            try b.feed(Array(stream[..<cut]), into: &into)
            try b.feed(Array(stream[cut...]), into: &into)
            #expect(viaFeed == frames)
            #expect(into == [sentinel] + frames)
            #expect(a.consumedByteCount == b.consumedByteCount)
            #expect(b.notes.isEmpty)
        }
    }

    /// Good frames then a bad one: the good ones are appended without a throw, the next call
    /// throws (as `feed(_:)`); a read that completes no frame throws at once, leaving the array.
    @Test func feedIntoThrowsOnlyWhenNoFrameCompleted() throws {
        let good = try StreamFraming.encode(.pingResp(), direction: .serverToClient)
        var bad = good
        bad[1] ^= 0xFF  // checksum
        var d = StreamDecoder(direction: .serverToClient)
        var frames: [Frame] = [.pingResp()]
        try d.feed(good + bad, into: &frames)
        #expect(frames == [.pingResp(), .pingResp()])
        #expect(throws: WireError.self) { try d.feed(good, into: &frames) }
        #expect(frames.count == 2)

        var e = StreamDecoder(direction: .serverToClient)
        var kept: [Frame] = [.pingResp()]
        #expect(throws: WireError.self) { try e.feed(bad, into: &kept) }
        #expect(kept == [.pingResp()])
    }
}
