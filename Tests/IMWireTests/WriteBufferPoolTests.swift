import Testing
@testable import IMWire

/// Delivered write buffers kept for later writes (`WriteBufferPool`): storage only, never bytes.
@Suite("Write buffer pool")
struct WriteBufferPoolTests {
    static func base(_ a: [UInt8]) -> UnsafeRawPointer? { a.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) } }

    @Test("an empty pool gives a fresh empty array")
    func emptyPool() {
        let pool = WriteBufferPool()
        let b = pool.take()
        #expect(b.isEmpty && b.capacity == 0 && pool.count == 0)
    }

    @Test("a recycled buffer comes back empty with its storage; the last recycled first")
    func storageReused() throws {
        let pool = WriteBufferPool()
        let a: [UInt8] = Array(repeating: 1, count: 100)
        let b: [UInt8] = Array(repeating: 2, count: 300)
        let (ca, cb) = (a.capacity, b.capacity)
        let (pa, pb) = (Self.base(a), Self.base(b))
        pool.recycle(consume a)
        pool.recycle(consume b)
        #expect(pool.count == 2)
        var first = pool.take()
        #expect(first.isEmpty && first.capacity == cb)
        first.append(contentsOf: [9, 9, 9])
        #expect(Self.base(first) == pb)
        #expect(first == [9, 9, 9])
        let second = pool.take()
        #expect(second.isEmpty && second.capacity == ca && Self.base(second) == pa)
        #expect(pool.count == 0)
    }

    @Test("a frame encoded into a reused buffer is the frame's bytes alone")
    func encodeIntoReused() throws {
        let pool = WriteBufferPool()
        let old: [UInt8] = Array(repeating: 0xEE, count: 512)
        pool.recycle(consume old)
        let frame = Frame.publish(Frame.Publish(topic: "ppMsgP", targetId: "bob", messageId: 7, body: [1, 2, 3]))
        var fresh: [UInt8] = []
        try StreamFraming.encode(frame, direction: .clientToServer, obfuscated: true, into: &fresh)
        var reused = pool.take()
        try StreamFraming.encode(frame, direction: .clientToServer, obfuscated: true, into: &reused)
        #expect(reused == fresh)
        var decoder = StreamDecoder(direction: .clientToServer, obfuscated: true)
        #expect(try decoder.feed(reused) == [frame])
    }

    @Test("a buffer still held elsewhere keeps its bytes for that holder")
    func sharedBuffer() {
        let pool = WriteBufferPool()
        let a: [UInt8] = [1, 2, 3, 4]
        let held = a
        pool.recycle(a)
        var b = pool.take()
        b.append(contentsOf: [7, 7])
        #expect(held == [1, 2, 3, 4])
        #expect(b == [7, 7])
    }

    @Test("empty, oversized and surplus buffers are not kept")
    func limits() {
        let pool = WriteBufferPool()
        let empty: [UInt8] = []
        pool.recycle(empty)
        #expect(pool.count == 0)
        let big = [UInt8](repeating: 0, count: WriteBufferPool.maxCapacity + 1)
        pool.recycle(big)
        #expect(pool.count == 0 && big.count == WriteBufferPool.maxCapacity + 1)
        for _ in 0..<(WriteBufferPool.maxBuffers + 5) {
            pool.recycle([1])
        }
        #expect(pool.count == WriteBufferPool.maxBuffers)
    }
}
