import SimKernel

/// One direction of a simulated TCP stream: bytes arrive in order, never lost while the
/// connection lives, after latency + queueing delay, possibly split into segments. Segments that
/// are due together are handed over in one read (coalescing), so the receiver's stream decoder
/// sees frames split and joined at arbitrary byte boundaries.
struct Pipe {
    private(set) var segments: [(arrival: SimTime, bytes: [UInt8])] = []
    private var head = 0
    /// Arrival time of the last enqueued segment: later writes never overtake it.
    private(set) var lastArrival: SimTime = .zero
    /// The sender's link is busy serialising earlier bytes until then.
    private var busyUntil: SimTime = .zero
    private(set) var bytesQueued = 0

    var isEmpty: Bool { head == segments.count }
    var headArrival: SimTime? { isEmpty ? nil : segments[head].arrival }

    /// Enqueues a write; returns true when the head changed (the caller schedules delivery).
    mutating func write(_ bytes: [UInt8], now: SimTime, latency: SimDuration, bandwidth: Int64?,
                        split: Bool, rng: inout RandomStream) -> Bool {
        let wasEmpty = isEmpty
        var start = now > busyUntil ? now : busyUntil
        if let bw = bandwidth, bw > 0 {
            let tx = SimDuration(nanoseconds: Int64(bytes.count) * 1_000_000_000 / bw)
            start += tx
            busyUntil = start
        }
        var arrival = start + latency
        if arrival < lastArrival { arrival = lastArrival }
        if split && bytes.count >= 2 {
            // 2–3 segments at random cut points, each a little later than the previous.
            let pieces = bytes.count >= 3 ? rng.uniform(2..<4) : 2
            var cuts: [Int] = []
            for _ in 1..<pieces { cuts.append(rng.uniform(1..<bytes.count)) }
            cuts.sort()
            var from = 0
            for cut in cuts + [bytes.count] where cut > from {
                append(arrival, Array(bytes[from..<cut]))
                from = cut
                arrival += rng.uniform(SimDuration.microseconds(50)...SimDuration.milliseconds(2))
            }
        } else {
            append(arrival, bytes)
        }
        return wasEmpty
    }

    private mutating func append(_ arrival: SimTime, _ bytes: [UInt8]) {
        segments.append((arrival, bytes))
        lastArrival = arrival
        bytesQueued += bytes.count
    }

    /// Removes every segment due at or before `now`, concatenated (one read).
    mutating func takeDue(now: SimTime) -> [UInt8] {
        var out: [UInt8] = []
        while head < segments.count, segments[head].arrival <= now {
            if out.isEmpty { out = segments[head].bytes } else { out.append(contentsOf: segments[head].bytes) }
            bytesQueued -= segments[head].bytes.count
            segments[head].bytes = []
            head += 1
        }
        if head > 64 && head * 2 > segments.count {
            segments.removeFirst(head)
            head = 0
        }
        return out
    }

    /// Delays every queued segment so none arrives before `time` (a stalled path heals).
    mutating func holdUntil(_ time: SimTime) {
        for i in head..<segments.count where segments[i].arrival < time {
            segments[i].arrival = time
        }
        if lastArrival < time { lastArrival = time }
    }

    /// Drops everything in flight (reset).
    mutating func clear() {
        segments.removeAll(keepingCapacity: false)
        head = 0
        bytesQueued = 0
    }
}
