#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The real clock of the runtime: epoch milliseconds from the OS wall clock, clamped so that it
/// never goes backwards (an NTP step back would otherwise give the server's messageUIds and a
/// capture's timestamps a time that runs backwards; the cores and the capture format require
/// non-decreasing time). Not `Sendable`: each host owns one and reads it on its event loop.
public struct WallClock {
    private var last: Int64 = 0
    /// A fixed offset added to the OS clock (a skewed device clock in tests).
    public var offsetMs: Int64

    public init(offsetMs: Int64 = 0) { self.offsetMs = offsetMs }

    /// The current epoch time in ms, never less than the previous reading.
    public mutating func nowMs() -> Int64 {
        let t = WallClock.osEpochMs() + offsetMs
        if t > last { last = t }
        return last
    }

    /// The OS wall clock in epoch ms (CLOCK_REALTIME).
    public static func osEpochMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// The OS wall clock in epoch ns (CLOCK_REALTIME): packet timestamps of `serve --pcap`.
    public static func osEpochNs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// A monotonic reading in ns (CLOCK_MONOTONIC), for latency measurement.
    public static func monotonicNs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
