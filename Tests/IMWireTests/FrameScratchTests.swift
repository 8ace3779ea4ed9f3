import Testing
@testable import IMWire

/// The frames array a core reuses from read to read (`FrameScratch`, branch `cores13`).
@Suite("Frame scratch")
struct FrameScratchTests {
    static func frames(_ n: Int) -> [Frame] {
        (0..<n).map { i in
            .publish(Frame.Publish(topic: "t\(i)", targetId: "u\(i)", messageId: UInt16(i + 1), body: [UInt8(i), 1, 2]))
        }
    }

    static func bytes(_ frames: [Frame]) throws -> [UInt8] {
        var out: [UInt8] = []
        for f in frames { try StreamFraming.encode(f, direction: .serverToClient, into: &out) }
        return out
    }

    @Test("take gives an empty array with the storage of the last read; putBack keeps it, emptied")
    func storageKept() throws {
        var scratch = FrameScratch()
        var decoder = StreamDecoder(direction: .serverToClient)
        var frames = scratch.take()
        #expect(frames.isEmpty)
        try decoder.feed(try Self.bytes(Self.frames(5)), into: &frames)
        #expect(frames == Self.frames(5))
        let capacity = frames.capacity
        scratch.putBack(&frames)
        #expect(frames.isEmpty)
        #expect(scratch.capacity == capacity)

        var again = scratch.take()
        #expect(again.isEmpty)
        #expect(again.capacity == capacity)
        #expect(scratch.capacity == 0)                  // taken out: the array's storage is unique
        try decoder.feed(try Self.bytes(Self.frames(2)), into: &again)
        #expect(again == Self.frames(2))
        scratch.putBack(&again)
        #expect(scratch.capacity == capacity)
    }

    @Test("putBack releases the frames it empties (their payloads are no longer held)")
    func putBackReleases() {
        var scratch = FrameScratch()
        for n in [1, 2, 5] {
            var frames = scratch.take()
            #expect(frames.isEmpty)
            var bodies: [[UInt8]] = []
            for f in Self.frames(n) {
                guard case .publish(let p) = f else { continue }
                bodies.append(p.body)
                frames.append(f)
            }
            scratch.putBack(&frames)
            #expect(scratch.capacity >= n)
            // Held by nothing else: writing a byte does not copy the storage.
            for k in bodies.indices {
                let before = bodies[k].withUnsafeBufferPointer { $0.baseAddress }
                bodies[k][0] ^= 0xFF
                #expect(bodies[k].withUnsafeBufferPointer { $0.baseAddress } == before)
            }
        }
    }

    @Test("moveOut hands each frame over unchanged and leaves a payload-free frame in its place")
    func moveOut() {
        var frames = Self.frames(3)
        var moved: [Frame] = []
        for k in frames.indices { moved.append(FrameScratch.moveOut(&frames, at: k)) }
        #expect(moved == Self.frames(3))
        #expect(frames == Array(repeating: .pingReq(), count: 3))
    }
}
