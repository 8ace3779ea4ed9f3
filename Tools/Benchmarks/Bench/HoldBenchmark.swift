import SimKernel
import HeapModule

/// The classic "hold" priority-queue benchmark (pop the minimum, push it back later by a random
/// increment) over the kernel's 128-bit keys, run on the kernel's `QuaternaryHeap` and on
/// swift-collections' min-max `Heap`. `imsim bench kernel` prints both so the choice of the
/// kernel's queue stays measured, not assumed.
public enum HoldBenchmark {
    public struct Keys: Comparable {
        var bits: UInt128
        public static func < (a: Keys, b: Keys) -> Bool { a.bits < b.bits }
    }

    /// Returns a checksum of popped keys so the work cannot be optimised away.
    @inlinable public static func quaternary(pending: Int, operations: Int, seed: UInt64) -> UInt64 {
        var rng = RandomStream(seed: seed)
        var heap = QuaternaryHeap()
        var seq: UInt64 = 0
        for _ in 0..<pending { seq += 1; heap.insert(UInt128(rng.below(1_000_000)) << 64 | UInt128(seq)) }
        var check: UInt64 = 0
        for _ in 0..<operations {
            let m = heap.popMin()!
            check &+= UInt64(truncatingIfNeeded: m)
            seq += 1
            heap.insert(((m >> 64) + UInt128(rng.below(1_000_000) + 1)) << 64 | UInt128(seq))
        }
        return check
    }

    public static func collectionsHeap(pending: Int, operations: Int, seed: UInt64) -> UInt64 {
        var rng = RandomStream(seed: seed)
        var heap = Heap<Keys>()
        var seq: UInt64 = 0
        for _ in 0..<pending { seq += 1; heap.insert(Keys(bits: UInt128(rng.below(1_000_000)) << 64 | UInt128(seq))) }
        var check: UInt64 = 0
        for _ in 0..<operations {
            let m = heap.popMin()!.bits
            check &+= UInt64(truncatingIfNeeded: m)
            seq += 1
            heap.insert(Keys(bits: ((m >> 64) + UInt128(rng.below(1_000_000) + 1)) << 64 | UInt128(seq)))
        }
        return check
    }
}
