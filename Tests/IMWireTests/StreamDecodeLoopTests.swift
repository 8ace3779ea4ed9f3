import Testing
@testable import IMWire

/// Issue 23, item 7: `imsim decode FILE` streams — frames are handed on chunk by chunk, never
/// all held (51 MB of frames took 3 GB).
@Suite struct StreamDecodeLoopTests {
    @Test func framesAreHandedOnChunkByChunk() throws {
        let ping = try StreamFraming.encode(.pingReq(), direction: .clientToServer)
        let count = 200_000
        var stream: [UInt8] = []
        stream.reserveCapacity(ping.count * count)
        for _ in 0..<count { stream += ping }
        var at = 0
        let chunk = 4096
        var decoder = StreamDecoder(direction: .clientToServer)
        var emitted = 0
        var lastOffset = -1
        let stats = try StreamDecodeLoop.run(&decoder, read: {
            defer { at = min(stream.count, at + chunk) }
            return Array(stream[at..<min(stream.count, at + chunk)])
        }) { frame, offset, size in
            #expect(frame == .pingReq())
            #expect(offset > lastOffset && size == ping.count)
            lastOffset = offset
            emitted += 1
        }
        #expect(emitted == count)
        #expect(stats.frames == count)
        #expect(stats.bytes == stream.count)
        // Bounded by one chunk's frames, not by the file.
        #expect(stats.peakFramesHeld <= chunk / ping.count + 1)
    }

    @Test func aTornLastFrameIsAnErrorAfterTheFramesBeforeIt() throws {
        let ping = try StreamFraming.encode(.pingReq(), direction: .clientToServer)
        var stream = ping + ping
        stream += ping.prefix(1)
        var done = false
        var decoder = StreamDecoder(direction: .clientToServer)
        var emitted = 0
        #expect(throws: WireError.self) {
            _ = try StreamDecodeLoop.run(&decoder, read: { defer { done = true }; return done ? [] : stream }) { _, _, _ in emitted += 1 }
        }
        #expect(emitted == 2)
    }
}
