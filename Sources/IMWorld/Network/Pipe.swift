import SimKernel

/// One direction of a simulated TCP stream: bytes arrive in order, never lost while the
/// connection lives, after latency + queueing delay, possibly split into segments. Segments that
/// are due together are handed over in one read (coalescing), so the receiver's stream decoder
/// sees frames split and joined at arbitrary byte boundaries.
struct Pipe {
    /// Segments `head..<tail` are queued; slots before `head` were read (their bytes emptied)
    /// and slots from `tail` on are spare, reused by later writes (a drained pipe starts again
    /// at slot 0 instead of growing or shifting its array: ~130 M instructions an hour).
    private var slots: [(arrival: SimTime, bytes: [UInt8])] = []
    private var head = 0
    private var tail = 0
    /// Arrival time of the last enqueued segment: later writes never overtake it.
    private(set) var lastArrival: SimTime = .zero
    /// The sender's link is busy serialising earlier bytes until then.
    private var busyUntil: SimTime = .zero
    private(set) var bytesQueued = 0

    /// The queued segments, the next due first.
    var segments: ArraySlice<(arrival: SimTime, bytes: [UInt8])> { slots[head..<tail] }
    var isEmpty: Bool { head == tail }
    var headArrival: SimTime? { isEmpty ? nil : slots[head].arrival }

    /// Enqueues a write as one segment; returns true when the head changed (the caller
    /// schedules delivery).
    mutating func write(_ bytes: [UInt8], now: SimTime, latency: SimDuration, bandwidth: Int64?) -> Bool {
        let wasEmpty = isEmpty
        append(arrival(of: bytes.count, now: now, latency: latency, bandwidth: bandwidth), bytes)
        return wasEmpty
    }

    /// When a write of `count` bytes arrives (its link serialises it after the earlier bytes;
    /// it never overtakes them).
    private mutating func arrival(of count: Int, now: SimTime, latency: SimDuration, bandwidth: Int64?) -> SimTime {
        var start = now > busyUntil ? now : busyUntil
        if let bw = bandwidth, bw > 0 {
            let tx = SimDuration(nanoseconds: Int64(count) * 1_000_000_000 / bw)
            start += tx
            busyUntil = start
        }
        let arrival = start + latency
        return arrival < lastArrival ? lastArrival : arrival
    }

    /// Enqueues a write, in 2–3 segments when `split` (cut points drawn from `rng`); returns true
    /// when the head changed (the caller schedules delivery).
    mutating func write(_ bytes: [UInt8], now: SimTime, latency: SimDuration, bandwidth: Int64?,
                        split: Bool, rng: inout RandomStream) -> Bool {
        let wasEmpty = isEmpty
        var arrival = self.arrival(of: bytes.count, now: now, latency: latency, bandwidth: bandwidth)
        if split && bytes.count >= 2 {
            // 2–3 segments at random cut points (drawn in this order, then sorted), each a
            // little later than the previous. No arrays: ~15 % of writes split.
            let pieces = bytes.count >= 3 ? rng.uniform(2..<4) : 2
            var first = rng.uniform(1..<bytes.count)
            var second = bytes.count
            if pieces == 3 {
                let other = rng.uniform(1..<bytes.count)
                if other < first { second = first; first = other } else { second = other }
            }
            var from = 0
            for k in 0..<3 {
                let cut = k == 0 ? first : k == 1 ? second : bytes.count
                guard cut > from else { continue }
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
        if tail < slots.count { slots[tail] = (arrival, bytes) } else { slots.append((arrival, bytes)) }
        tail += 1
        lastArrival = arrival
        bytesQueued += bytes.count
    }

    /// Removes every segment due at or before `now`, concatenated (one read).
    mutating func takeDue(now: SimTime) -> [UInt8] {
        var out: [UInt8] = []
        while head < tail, slots[head].arrival <= now {
            bytesQueued -= slots[head].bytes.count
            if out.isEmpty {
                // Moved out, not copied: no retain/release pair per read.
                swap(&out, &slots[head].bytes)
            } else {
                out.append(contentsOf: slots[head].bytes)
                slots[head].bytes = []
            }
            head += 1
        }
        if head == tail {
            head = 0
            tail = 0
        } else if head > 64 && head * 2 > tail {
            slots.removeFirst(head)
            tail -= head
            head = 0
        }
        return out
    }

    /// Delays every queued segment so none arrives before `time` (a stalled path heals).
    mutating func holdUntil(_ time: SimTime) {
        for i in head..<tail where slots[i].arrival < time {
            slots[i].arrival = time
        }
        if lastArrival < time { lastArrival = time }
    }

    /// Drops everything in flight (reset).
    mutating func clear() {
        slots.removeAll(keepingCapacity: false)
        head = 0
        tail = 0
        bytesQueued = 0
    }
}
