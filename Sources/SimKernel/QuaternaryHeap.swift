/// A 4-ary min-heap of 128-bit keys, written for the kernel's one hot loop: the children of a
/// node share a cache line, the tree is half as deep as a binary heap's, and sift-down picks the
/// smallest child without data-dependent branches. `EventQueue`'s `KeyHeap` runs the same steps
/// (`QuaternaryHeapOps`) over its own noncopyable memory; `imsim bench kernel` measures this array-backed one against
/// swift-collections' min-max `Heap` on the same keys (Tools/Benchmarks, Docs/performance.md).
public struct QuaternaryHeap: Sendable {
    @usableFromInline var storage: [UInt128] = []

    @inlinable public init() {}
    @inlinable public init(_ keys: [UInt128]) {
        storage = keys
        heapify()
    }

    @inlinable public var count: Int { storage.count }
    @inlinable public var min: UInt128? { storage.first }
    @inlinable public var unordered: [UInt128] { storage }

    @inlinable public mutating func insert(_ key: UInt128) {
        let i = storage.count
        storage.append(key)
        storage.withUnsafeMutableBufferPointer { QuaternaryHeapOps.siftUp($0.baseAddress!, at: i, key: key) }
    }

    /// Appends without ordering; call `heapify()` before the next heap operation.
    @inlinable public mutating func appendUnordered(_ key: UInt128) { storage.append(key) }
    @inlinable public mutating func reserveAppend(_ n: Int) { storage.reserveCapacity(storage.count + n) }
    /// Restores the heap order in O(n) (Floyd).
    @inlinable public mutating func heapify() {
        let n = storage.count
        storage.withUnsafeMutableBufferPointer { QuaternaryHeapOps.heapify($0.baseAddress!, count: n) }
    }

    @inlinable public mutating func popMin() -> UInt128? {
        guard let last = storage.popLast() else { return nil }
        if storage.isEmpty { return last }
        let top = storage[0]
        let n = storage.count
        storage.withUnsafeMutableBufferPointer { QuaternaryHeapOps.siftDown($0.baseAddress!, count: n, from: 0, item: last) }
        return top
    }
}

/// The 4-ary min-heap's steps over raw memory, shared by `QuaternaryHeap` (array-backed) and
/// `EventQueue`'s `KeyHeap` (noncopyable memory): one algorithm, two owners of the keys.
@usableFromInline enum QuaternaryHeapOps {
    /// Places `key` (just appended at `i`) by moving larger parents down.
    @inlinable static func siftUp(_ p: UnsafeMutablePointer<UInt128>, at start: Int, key: UInt128) {
        var i = start
        while i > 0 {
            let parent = (i &- 1) >> 2
            let pv = p[parent]
            if pv <= key { break }
            p[i] = pv
            i = parent
        }
        p[i] = key
    }

    /// Restores the heap order of `p[0..<n]` in O(n) (Floyd).
    @inlinable static func heapify(_ p: UnsafeMutablePointer<UInt128>, count n: Int) {
        guard n > 1 else { return }
        var i = (n &- 2) >> 2
        while i >= 0 { siftDown(p, count: n, from: i, item: p[i]); i &-= 1 }
    }

    /// Places `item` at `start` and sifts it down: the smallest of four children is picked
    /// without data-dependent branches (the children share a cache line).
    @inlinable static func siftDown(_ p: UnsafeMutablePointer<UInt128>, count n: Int, from start: Int, item: UInt128) {
        var i = start
        while true {
            let c = 4 &* i &+ 1
            if c >= n { break }
            var m = c
            var mv = p[c]
            if c &+ 3 < n {
                let v1 = p[c &+ 1], v2 = p[c &+ 2], v3 = p[c &+ 3]
                let a = v1 < mv
                m = a ? c &+ 1 : m; mv = a ? v1 : mv
                let b = v2 < mv
                m = b ? c &+ 2 : m; mv = b ? v2 : mv
                let d = v3 < mv
                m = d ? c &+ 3 : m; mv = d ? v3 : mv
            } else {
                var j = c &+ 1
                while j < n { let v = p[j]; if v < mv { mv = v; m = j }; j &+= 1 }
            }
            if mv >= item { break }
            p[i] = mv
            i = m
        }
        p[i] = item
    }
}
