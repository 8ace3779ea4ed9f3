import SimKernel

/// A device's wall clock: server time + offset + drift, with steps (NTP jumps, the user setting
/// the clock). The client core reads it as "now"; its timers run on the monotonic clock, which
/// the world models as simulated time scaled by the drift.
public struct DeviceClock: Sendable, Hashable {
    /// Server epoch ms at simulated time zero (the same for every device).
    public let epochMs: Int64
    /// Current offset from server time, ms (changes with steps).
    public private(set) var offsetMs: Int64
    /// Drift in parts per million: +100 means the device clock runs 100 µs/s fast.
    public let driftPpm: Int64

    public init(epochMs: Int64, offsetMs: Int64 = 0, driftPpm: Int64 = 0) {
        precondition(abs(driftPpm) < 100_000, "drift must be below 10%")
        self.epochMs = epochMs
        self.offsetMs = offsetMs
        self.driftPpm = driftPpm
    }

    /// Device wall-clock ms at simulated time `t`.
    public func wallMs(at t: SimTime) -> Int64 {
        // 128-bit, then clamped: a hostile epoch or offset saturates instead of trapping
        // (the scenario loader refuses such values; programmatic worlds must not crash either).
        // The same sum in 64 bits when nothing overflows (every real clock): the 128-bit division
        // is a library call (~100 instructions, 414k reads in the mixed-1k hour).
        let ms = t.milliseconds
        let (skew, o1) = ms.multipliedReportingOverflow(by: driftPpm)
        let (a, o2) = epochMs.addingReportingOverflow(ms)
        let (b, o3) = a.addingReportingOverflow(offsetMs)
        let (c, o4) = b.addingReportingOverflow(skew / 1_000_000)
        if !(o1 || o2 || o3 || o4) { return c }
        let elapsedMs = Int128(ms)
        return Int64(clamping: Int128(epochMs) + elapsedMs + Int128(offsetMs) + elapsedMs * Int128(driftPpm) / 1_000_000)
    }

    /// Steps the wall clock by `deltaMs` (NTP correction or user change); saturating.
    public mutating func step(byMs deltaMs: Int64) { offsetMs = Int64(clamping: Int128(offsetMs) + Int128(deltaMs)) }

    /// Simulated duration that elapses while the device's monotonic clock advances by `d`.
    public func simDuration(forLocal d: SimDuration) -> SimDuration {
        if driftPpm == 0 { return d }
        let wide = Int128(d.nanoseconds) * 1_000_000 / Int128(1_000_000 + driftPpm)
        return SimDuration(nanoseconds: Int64(clamping: wide))
    }
}

/// The server's clock: server epoch ms + simulated ms. Server time is the truth that `dataTime`,
/// `sentTime` and every cursor are measured in.
public struct ServerClock: Sendable, Hashable {
    public let epochMs: Int64
    public init(epochMs: Int64) { self.epochMs = epochMs }
    public func ms(at t: SimTime) -> Int64 { Int64(clamping: Int128(epochMs) + Int128(t.milliseconds)) }
}
