#if canImport(Glibc)
import Glibc
#endif

/// Allocator settings for processes that run many worlds one after another.
enum ProcessMemory {
    /// The trim threshold in bytes: freed memory up to this much stays with the process.
    static let trimThreshold: Int32 = 64 << 20

    /// A sweep worker runs hundreds of short worlds: by default glibc gives the top of the heap
    /// back to the kernel whenever more than 128 KiB of it is free, so every seed faulted its
    /// memory in again (~360 minor faults a quickstart seed, ~2 % of its CPU time in the kernel;
    /// Docs/performance.md, session 35). Setting the threshold also fixes glibc's mmap threshold at
    /// its 128 KiB default; what matters is that freed heap is kept. No effect on any result.
    @discardableResult
    static func keepFreedMemory() -> Bool {
        #if canImport(Glibc)
        // malloc.h is not in Swift's Glibc module: look the function up (M_TRIM_THRESHOLD is -1).
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
        return unsafeBitCast(symbol, to: Mallopt.self)(-1, trimThreshold) == 1
        #else
        return false
        #endif
    }
}
