/// Names one scheduled event so it can be cancelled. Cheap to copy and compare.
public struct EventID: Hashable, Sendable, CustomStringConvertible {
    public let slot: UInt32
    public let sequence: UInt64
    @inlinable init(slot: UInt32, sequence: UInt64) { self.slot = slot; self.sequence = sequence }
    public var description: String { "#\(sequence)" }
}

/// Small integer address of a simulated node (device, server, link …).
public struct NodeID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let raw: UInt32
    @inlinable public init(_ raw: UInt32) { self.raw = raw }
    @inlinable public init(_ raw: Int) { self.raw = UInt32(raw) }
    @inlinable public static func < (a: NodeID, b: NodeID) -> Bool { a.raw < b.raw }
    @inlinable public var index: Int { Int(raw) }
    public var description: String { "n\(raw)" }
}

/// How the pending-event set is laid out. The order events come out in is the same for every
/// layout — (time, insertion sequence), unique keys — so the layout never changes a run, only its
/// cost (`imsim bench kernel` runs both on the same workload and checks the digests are equal).
public struct QueueLayout: Sendable, Equatable, CustomStringConvertible {
    /// log2 of a wheel bucket's width in nanoseconds; nil = one heap for everything.
    public let bucketShift: Int?
    /// Buckets in the wheel (a power of two, 64…4096); 0 for the heap.
    public let bucketCount: Int

    /// Every key in one 4-ary heap.
    public static let heap = QueueLayout(bucketShift: nil, bucketCount: 0)

    /// A timing wheel of `bucketCount` buckets of 2^`bucketShift` ns beside the heap: keys due
    /// within the wheel's span wait unsorted in their bucket and enter the (small, cache-resident)
    /// heap only when their bucket comes up; a timer cancelled before then never touches a heap.
    /// Keys beyond the span wait in a second heap. Pick the geometry so that the span covers the
    /// workload's usual timers and a bucket holds a few events: 2^12 ns × 1024 (4.1 µs buckets,
    /// 4.2 ms span) for `bench kernel`.
    public static func wheel(bucketShift: Int, bucketCount: Int = 64) -> QueueLayout {
        precondition((4...56).contains(bucketShift), "bucketShift out of range")
        precondition((64...4096).contains(bucketCount) && bucketCount & (bucketCount - 1) == 0,
                     "bucketCount must be a power of two in 64...4096")
        return QueueLayout(bucketShift: bucketShift, bucketCount: bucketCount)
    }

    public var description: String { bucketShift.map { "wheel(2^\($0) ns × \(bucketCount))" } ?? "heap" }
}

/// (time, sequence, slot) packed into one 128-bit integer so a comparison is two instructions:
/// high 64 bits = time with the sign bit flipped (orders like Int64), low 64 bits =
/// sequence << slotBits | slot (orders by sequence, which is unique).
@usableFromInline enum QueueKey {
    @inlinable static var slotBits: UInt64 { 28 }
    @inlinable static var slotMask: UInt64 { (1 << 28) - 1 }
    @inlinable static func make(time: Int64, sequence: UInt64, slot: UInt32) -> UInt128 {
        UInt128(UInt64(bitPattern: time) ^ (1 << 63)) << 64 | UInt128(sequence << slotBits | UInt64(slot))
    }
    @inlinable static func time(_ k: UInt128) -> Int64 { Int64(bitPattern: UInt64(truncatingIfNeeded: k >> 64) ^ (1 << 63)) }
    @inlinable static func sequence(_ k: UInt128) -> UInt64 { UInt64(truncatingIfNeeded: k) >> slotBits }
    @inlinable static func slot(_ k: UInt128) -> Int { Int(UInt64(truncatingIfNeeded: k) & slotMask) }
}

/// A 4-ary min-heap of keys over manually managed memory: no copy-on-write check per write.
/// Owned by exactly one (noncopyable) `EventQueue`, whose `deinit` frees `p`; never copied.
///
/// A handful of keys (a poured wheel bucket) is kept sorted instead, descending, so the minimum
/// is the last key and removing it is a decrement: cheaper than heapify plus sift-downs at that
/// size. An insert into a full sorted run turns it back into a heap (ascending is heap order).
/// The capacity never drops below `sortedLimit`.
@usableFromInline struct KeyHeap {
    @usableFromInline var p: UnsafeMutablePointer<UInt128>
    @usableFromInline var count = 0
    @usableFromInline var capacity: Int
    /// `p[0..<count]` is sorted descending (then `count <= sortedLimit`), else a 4-ary heap.
    @usableFromInline var sorted = false

    /// Largest sorted run: insertion sort's quadratic cost stays below the heap's at this size.
    @inlinable static var sortedLimit: Int { 16 }

    @inlinable init() {
        capacity = 16
        p = .allocate(capacity: 16)
    }

    @inlinable var min: UInt128? { count > 0 ? top : nil }
    /// The minimum; the heap must not be empty.
    @inlinable @inline(__always) var top: UInt128 { p[sorted ? count &- 1 : 0] }

    @usableFromInline mutating func grow() {
        let n = UnsafeMutablePointer<UInt128>.allocate(capacity: capacity * 2)
        n.moveInitialize(from: p, count: count)
        p.deallocate()
        p = n
        capacity *= 2
    }

    @inlinable mutating func insert(_ key: UInt128) {
        if count == capacity { grow() }
        if sorted {
            if count < Self.sortedLimit {
                var i = count
                while i > 0 && p[i &- 1] < key { p[i] = p[i &- 1]; i &-= 1 }
                p[i] = key
                count &+= 1
                return
            }
            toHeap()
        }
        let i = count
        count &+= 1
        QuaternaryHeapOps.siftUp(p, at: i, key: key)
    }

    /// Replaces the keys (the heap is empty) with `n` unordered keys from `src`. A short run is
    /// placed directly in descending order by rank (the number of larger keys), with no branch
    /// on a comparison: insertion sort mispredicts about once a key on a poured bucket.
    @inlinable mutating func fill(from src: UnsafeMutablePointer<UInt128>, count n: Int) {
        assert(count == 0 && capacity >= Self.sortedLimit && Self.sortedLimit <= 16)
        guard n <= Self.sortedLimit else {
            for k in 0..<n { appendUnordered(src[k]) }
            heapify()
            return
        }
        var ranks: (UInt64, UInt64) = (0, 0)   // 16 one-byte ranks
        withUnsafeMutableBytes(of: &ranks) { r in
            for a in 0..<n {
                let key = src[a]
                var ra = r[a]
                var b = a &+ 1
                while b < n {
                    let larger = unsafeBitCast(src[b] > key, to: UInt8.self)
                    ra &+= larger
                    r[b] &+= 1 &- larger
                    b &+= 1
                }
                p[Int(ra)] = key
            }
        }
        count = n
        sorted = true
    }

    /// Reverses the sorted run: ascending order is a valid heap.
    @usableFromInline mutating func toHeap() {
        var i = 0, j = count &- 1
        while i < j { let t = p[i]; p[i] = p[j]; p[j] = t; i &+= 1; j &-= 1 }
        sorted = false
    }

    /// Appends without ordering; call `heapify()` before the next heap operation.
    @inlinable mutating func appendUnordered(_ key: UInt128) {
        if count == capacity { grow() }
        p[count] = key
        count &+= 1
    }

    /// Restores the order: a short run is insertion-sorted, a longer one heapified (Floyd, O(n)).
    @inlinable mutating func heapify() {
        if count <= Self.sortedLimit {
            var i = 1
            while i < count {
                let k = p[i]
                var j = i
                while j > 0 && p[j &- 1] < k { p[j] = p[j &- 1]; j &-= 1 }
                p[j] = k
                i &+= 1
            }
            sorted = true
        } else {
            sorted = false
            QuaternaryHeapOps.heapify(p, count: count)
        }
    }

    /// Removes the minimum; the heap must not be empty.
    @inlinable @inline(__always) mutating func removeMin() {
        assert(count > 0)
        count &-= 1
        if !sorted && count > 0 { QuaternaryHeapOps.siftDown(p, count: count, from: 0, item: p[count]) }
    }

}

/// The keys of one wheel bucket, unsorted (cancelled ones included until the bucket is poured).
@usableFromInline struct KeyRun {
    @usableFromInline var p: UnsafeMutablePointer<UInt128>
    @usableFromInline var count: Int32
    @usableFromInline var capacity: Int32
    @inlinable init(p: UnsafeMutablePointer<UInt128>, count: Int32, capacity: Int32) {
        self.p = p; self.count = count; self.capacity = capacity
    }
}

/// The pending-event set: compact 16-byte keys ordered by (time, insertion sequence) plus a slab
/// holding payloads. Cancellation is O(1): the slot is freed at once (the next insert reuses it,
/// still in cache) and its key, which no longer matches the slot's sequence, is discarded
/// wherever it is met. No allocation per event in steady state.
///
/// With `QueueLayout.heap` every key is in one min-heap. With a wheel (`QueueLayout.wheel`) the
/// keys live in three places, by their bucket number b = time >> shift against `cur`:
/// `heap` holds b < cur, the wheel's N buckets hold cur ≤ b < cur + N (unsorted), `far` holds the
/// rest. So the heap's minimum is the global minimum whenever the heap has a live key; when it
/// has none, the next occupied bucket is poured into it. Same keys, same order as the heap alone.
///
/// Noncopyable, over manually allocated memory: the slab, the free list, the heaps and the
/// buckets are owned by exactly one queue, so writes need no uniqueness checks; `deinit` frees
/// them (and the payloads still pending).
public struct EventQueue<Payload>: ~Copyable {
    @usableFromInline struct Slot {
        @usableFromInline var sequence: UInt64          // 0 = free
        @usableFromInline var target: NodeID
        @usableFromInline var payload: Payload?
        @inlinable init(sequence: UInt64, target: NodeID, payload: Payload?) {
            self.sequence = sequence; self.target = target; self.payload = payload
        }
    }

    /// Slots `0..<slotCount` are initialised; each is either on the free list (sequence 0) or
    /// live and named by exactly one live key (in `heap`, `far` or a bucket). Keys of cancelled
    /// events stay where they are until met; their slot's sequence no longer matches.
    @usableFromInline var slots: UnsafeMutablePointer<Slot>
    @usableFromInline var slotCount = 0
    @usableFromInline var slotCapacity: Int
    /// Free slot numbers (capacity `slotCapacity`: a slot is on it at most once).
    @usableFromInline var free: UnsafeMutablePointer<UInt32>
    @usableFromInline var freeCount = 0
    @usableFromInline var heap = KeyHeap()
    @usableFromInline var nextSequence: UInt64 = 1
    /// Pending events that were not cancelled.
    @usableFromInline var _liveCount = 0
    @inlinable public var liveCount: Int { _liveCount }

    // The wheel (unused with `QueueLayout.heap`).
    @usableFromInline let useWheel: Bool
    @usableFromInline let shift: UInt64
    /// Buckets in the wheel (power of two) and that minus one.
    @usableFromInline let bucketCount: UInt64
    @usableFromInline let bucketMask: UInt64
    /// Bucket number of the wheel's first bucket; the heap holds every key of an earlier bucket.
    @usableFromInline var cur: UInt64 = 0
    /// Each bucket's keys; a poured bucket's buffer is kept for its next keys. A bucket that has
    /// never held a key has no buffer (capacity 0, `p` = `noKeys`): a wide wheel costs no
    /// allocation per bucket up front.
    @usableFromInline var buckets: UnsafeMutablePointer<KeyRun>
    @usableFromInline let noKeys: UnsafeMutablePointer<UInt128>
    /// Bit i of word w set = bucket 64w + i holds keys; bit w of `summary` = word w is not 0.
    @usableFromInline var occupied: UnsafeMutablePointer<UInt64>
    @usableFromInline var summary: UInt64 = 0
    /// Keys in the buckets, cancelled ones included.
    @usableFromInline var wheelCount = 0
    /// Keys due after the wheel's span.
    @usableFromInline var far = KeyHeap()
    public let layout: QueueLayout

    public init(layout: QueueLayout = .heap) {
        self.layout = layout
        useWheel = layout.bucketShift != nil
        shift = UInt64(layout.bucketShift ?? 0)
        let n = useWheel ? layout.bucketCount : 0
        bucketCount = UInt64(Swift.max(n, 64))
        bucketMask = bucketCount - 1
        buckets = .allocate(capacity: n)
        noKeys = .allocate(capacity: 1)
        buckets.initialize(repeating: KeyRun(p: noKeys, count: 0, capacity: 0), count: n)
        occupied = .allocate(capacity: Int(bucketCount) / 64)
        occupied.initialize(repeating: 0, count: Int(bucketCount) / 64)
        slotCapacity = 64
        slots = .allocate(capacity: 64)
        free = .allocate(capacity: 64)
    }

    deinit {
        slots.deinitialize(count: slotCount)
        slots.deallocate()
        free.deallocate()
        for i in 0..<(useWheel ? Int(bucketCount) : 0) where buckets[i].capacity > 0 { buckets[i].p.deallocate() }
        noKeys.deallocate()
        buckets.deallocate()
        occupied.deallocate()
        heap.p.deallocate()
        far.p.deallocate()
    }

    /// Number of keys held, including cancelled ones not yet discarded.
    @inlinable public var heapCount: Int { heap.count + far.count + wheelCount }
    @inlinable public var isEmpty: Bool { liveCount == 0 }

    @inlinable @inline(__always) func isLive(_ key: UInt128) -> Bool {
        slots[QueueKey.slot(key)].sequence == QueueKey.sequence(key)
    }

    @inlinable func bucket(_ key: UInt128) -> UInt64 { UInt64(truncatingIfNeeded: key >> 64) &>> shift }

    @inlinable @inline(__always) mutating func release(_ slot: Int) {
        assert(freeCount < slotCount && slots[slot].sequence == 0)
        free[freeCount] = UInt32(truncatingIfNeeded: slot)
        freeCount &+= 1
    }

    @inlinable @inline(__always) mutating func place(_ key: UInt128) {
        guard useWheel else { heap.insert(key); return }
        let b = bucket(key)
        if b < cur {
            heap.insert(key)
        } else if b < cur &+ bucketCount {
            let i = Int(b & bucketMask)
            if buckets[i].count == buckets[i].capacity { growBucket(i) }
            buckets[i].p[Int(buckets[i].count)] = key
            buckets[i].count &+= 1
            occupied[i &>> 6] |= 1 &<< UInt64(i & 63)
            summary |= 1 &<< UInt64(i &>> 6)
            wheelCount &+= 1
        } else {
            far.insert(key)
        }
    }

    @usableFromInline mutating func growBucket(_ i: Int) {
        let old = Int(buckets[i].capacity)
        let cap = Swift.max(8, old * 2)
        let n = UnsafeMutablePointer<UInt128>.allocate(capacity: cap)
        n.moveInitialize(from: buckets[i].p, count: Int(buckets[i].count))
        if old > 0 { buckets[i].p.deallocate() }
        buckets[i].p = n
        buckets[i].capacity = Int32(cap)
    }

    /// Makes the heap's top the earliest live key; false when nothing live is left.
    @inlinable @inline(__always) mutating func settle() -> Bool {
        // Most of the time the top is live: that test inline, the discarding loop out of line.
        if heap.count > 0 && isLive(heap.top) { return true }
        return settleSlow()
    }

    @inlinable mutating func settleSlow() -> Bool {
        while true {
            while heap.count > 0 {
                if isLive(heap.top) { return true }
                heap.removeMin()
            }
            if !useWheel || !refill() { return false }
        }
    }

    /// The first occupied bucket at or after position `r`, cyclically; the wheel must hold keys.
    @inlinable @inline(__always) func nextOccupied(from r: Int) -> Int {
        let w = r &>> 6
        let here = occupied[w] & (UInt64.max &<< UInt64(r & 63))
        if here != 0 { return w &<< 6 | here.trailingZeroBitCount }
        let later = w == 63 ? 0 : summary & (UInt64.max &<< UInt64(w &+ 1))
        let w2 = later != 0 ? later.trailingZeroBitCount : summary.trailingZeroBitCount
        return w2 &<< 6 | occupied[w2].trailingZeroBitCount
    }

    /// The heap is empty: pours the next occupied bucket into it (jumping the wheel forward to the
    /// far heap's minimum when the wheel is empty). False when there is nothing left anywhere.
    @inlinable mutating func refill() -> Bool {
        if wheelCount == 0 {
            guard let m = far.min else { return false }
            cur = bucket(m)
            migrateFar()
            if wheelCount == 0 { return true }   // only cancelled keys moved: the caller looks again
        }
        let r = Int(cur & bucketMask)
        let i = nextOccupied(from: r)
        let nb = cur &+ (UInt64(truncatingIfNeeded: i &- r) & bucketMask)
        cur = nb &+ 1
        occupied[i &>> 6] &= ~(1 &<< UInt64(i & 63))
        if occupied[i &>> 6] == 0 { summary &= ~(1 &<< UInt64(i &>> 6)) }
        // Live keys only (counted without a branch: live and cancelled keys are interleaved at
        // random); the bucket keeps its buffer for the keys to come.
        let run = buckets[i]
        let n = Int(run.count)
        var live = 0
        for k in 0..<n {
            let key = run.p[k]
            run.p[live] = key
            live &+= Int(unsafeBitCast(isLive(key), to: UInt8.self))
        }
        wheelCount &-= n
        buckets[i].count = 0
        heap.fill(from: run.p, count: live)
        migrateFar()
        return true
    }

    /// Moves far keys that the wheel's window now covers into their buckets.
    @inlinable mutating func migrateFar() {
        while let m = far.min, bucket(m) < cur &+ bucketCount {
            far.removeMin()
            if isLive(m) { place(m) }
        }
    }

    @usableFromInline mutating func growSlots() {
        precondition(UInt64(slotCapacity) < QueueKey.slotMask, "too many pending events")
        let cap = Swift.min(slotCapacity * 2, Int(QueueKey.slotMask))
        let s = UnsafeMutablePointer<Slot>.allocate(capacity: cap)
        s.moveInitialize(from: slots, count: slotCount)
        slots.deallocate()
        slots = s
        let f = UnsafeMutablePointer<UInt32>.allocate(capacity: cap)
        f.moveInitialize(from: free, count: freeCount)
        free.deallocate()
        free = f
        slotCapacity = cap
    }

    @inlinable @inline(__always) public mutating func insert(_ payload: Payload, to target: NodeID, at time: Int64) -> EventID {
        let seq = nextSequence
        nextSequence &+= 1
        precondition(seq < (1 << (64 - QueueKey.slotBits)), "event sequence space exhausted")
        let slot: UInt32
        if freeCount > 0 {
            freeCount &-= 1
            slot = free[freeCount]
            assert(slots[Int(slot)].sequence == 0 && slots[Int(slot)].payload == nil)
            slots[Int(slot)].sequence = seq
            slots[Int(slot)].target = target
            slots[Int(slot)].payload = payload
        } else {
            if slotCount == slotCapacity { growSlots() }
            slot = UInt32(truncatingIfNeeded: slotCount)
            (slots + slotCount).initialize(to: Slot(sequence: seq, target: target, payload: payload))
            slotCount &+= 1
        }
        place(QueueKey.make(time: time, sequence: seq, slot: slot))
        _liveCount &+= 1
        return EventID(slot: slot, sequence: seq)
    }

    /// Cancels a pending event. Returns false (and does nothing) for an event that already fired,
    /// was already cancelled, or never existed.
    @inlinable @inline(__always) @discardableResult
    public mutating func cancel(_ id: EventID) -> Bool {
        let i = Int(id.slot)
        guard i < slotCount, id.sequence != 0, slots[i].sequence == id.sequence else { return false }
        slots[i].sequence = 0
        slots[i].payload = nil
        release(i)
        _liveCount &-= 1
        if heap.count &+ far.count > 64 && heap.count &+ far.count > _liveCount + _liveCount / 2 { compact() }
        // Cancelled keys in buckets go when the bucket is poured; bound them anyway (a burst of
        // schedule-and-cancel at one instant).
        if wheelCount > 4 &* _liveCount &+ 4096 { compactWheel() }
        return true
    }

    /// `cancel(id)` then `insert(payload, to: target, at: time)` in one step, when `id` is
    /// pending: the new event gets the next sequence (so the same order as the two calls) and
    /// takes over the slot in place. Nil, and nothing done, when `id` is not pending.
    @inlinable @inline(__always)
    public mutating func replace(_ id: EventID, with payload: Payload, to target: NodeID, at time: Int64) -> EventID? {
        let i = Int(id.slot)
        guard i < slotCount, id.sequence != 0, slots[i].sequence == id.sequence else { return nil }
        let seq = nextSequence
        nextSequence &+= 1
        precondition(seq < (1 << (64 - QueueKey.slotBits)), "event sequence space exhausted")
        // The old key no longer matches the slot: it is discarded where it is met, as on cancel.
        slots[i].sequence = seq
        slots[i].target = target
        slots[i].payload = payload
        place(QueueKey.make(time: time, sequence: seq, slot: id.slot))
        if heap.count &+ far.count > 64 && heap.count &+ far.count > _liveCount + _liveCount / 2 { compact() }
        if wheelCount > 4 &* _liveCount &+ 4096 { compactWheel() }
        return EventID(slot: id.slot, sequence: seq)
    }

    /// Drops cancelled keys in one O(n) pass and re-heapifies once they are a third of the heaps.
    /// Amortised O(1) per cancel, and it keeps the heap shallow under cancel-heavy timer use.
    @inlinable mutating func compact() {
        var j = 0
        for i in 0..<heap.count {
            let k = heap.p[i]
            if isLive(k) { heap.p[j] = k; j &+= 1 }
        }
        heap.count = j
        heap.heapify()
        j = 0
        for i in 0..<far.count {
            let k = far.p[i]
            if isLive(k) { far.p[j] = k; j &+= 1 }
        }
        far.count = j
        far.heapify()
    }

    @inlinable mutating func compactWheel() {
        for i in 0..<Int(bucketCount) where buckets[i].count > 0 {
            let p = buckets[i].p
            var j = 0
            for k in 0..<Int(buckets[i].count) where isLive(p[k]) { p[j] = p[k]; j &+= 1 }
            wheelCount &-= Int(buckets[i].count) &- j
            buckets[i].count = Int32(truncatingIfNeeded: j)
            if j == 0 {
                occupied[i &>> 6] &= ~(1 &<< UInt64(i & 63))
                if occupied[i &>> 6] == 0 { summary &= ~(1 &<< UInt64(i &>> 6)) }
            }
        }
    }

    /// Whether `id` is still pending.
    @inlinable public func isPending(_ id: EventID) -> Bool {
        let i = Int(id.slot)
        return i < slotCount && id.sequence != 0 && slots[i].sequence == id.sequence
    }

    /// The id of the pending event with this insertion sequence (a linear search: tests only).
    func pendingID(sequence: UInt64) -> EventID? {
        (0..<slotCount).first { slots[$0].sequence == sequence }.map { EventID(slot: UInt32($0), sequence: sequence) }
    }

    /// Checks the bookkeeping (tests): every slot is free or named by exactly one live key, the
    /// occupancy bits match the buckets, and the live count matches the slots.
    func checkInvariants() -> Bool {
        var named = [Int](repeating: 0, count: slotCount)
        for i in 0..<freeCount { named[Int(free[i])] += 1 }
        let free = Set((0..<freeCount).map { Int(self.free[$0]) })
        if free.contains(where: { slots[$0].sequence != 0 }) { return false }
        func name(_ k: UInt128) { if isLive(k) { named[QueueKey.slot(k)] += 1 } }
        for i in 0..<heap.count { name(heap.p[i]) }
        for i in 0..<far.count { name(far.p[i]) }
        var inBuckets = 0
        if useWheel {
            for i in 0..<Int(bucketCount) {
                let run = buckets[i]
                let bit = occupied[i >> 6] >> UInt64(i & 63) & 1 == 1
                if bit != (run.count > 0) { return false }
                for k in 0..<Int(run.count) { name(run.p[k]) }
                inBuckets += Int(run.count)
            }
            for w in 0..<Int(bucketCount / 64) where (occupied[w] != 0) != (summary >> UInt64(w) & 1 == 1) { return false }
        }
        let live = (0..<slotCount).filter { slots[$0].sequence != 0 }.count
        return named.allSatisfy { $0 == 1 } && inBuckets == wheelCount && live == _liveCount
            && (0..<slotCount).allSatisfy { (slots[$0].sequence == 0) == (slots[$0].payload == nil) }
    }

    /// Time of the earliest live event, discarding cancelled keys on the way.
    @inlinable public mutating func peekTime() -> Int64? {
        settle() ? QueueKey.time(heap.top) : nil
    }

    /// Removes and returns the earliest live event.
    @inlinable public mutating func popMin() -> (time: Int64, sequence: UInt64, target: NodeID, payload: Payload)? {
        settle() ? popSettled() : nil
    }

    /// Time of the earliest live event after `settle()` returned true.
    @inlinable var settledTime: Int64 { QueueKey.time(heap.top) }

    /// Removes the earliest live event after `settle()` returned true.
    @inlinable @inline(__always) mutating func popSettled() -> (time: Int64, sequence: UInt64, target: NodeID, payload: Payload) {
        let top = heap.top
        heap.removeMin()
        let slot = QueueKey.slot(top)
        assert(slots[slot].sequence == QueueKey.sequence(top))
        let target = slots[slot].target
        let payload = slots[slot].payload.take()!
        slots[slot].sequence = 0
        release(slot)
        _liveCount &-= 1
        return (QueueKey.time(top), QueueKey.sequence(top), target, payload)
    }
}
