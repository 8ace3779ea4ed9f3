
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

    /// Every key in one 4-ary heap.
    public static let heap = QueueLayout(bucketShift: nil)

    /// A timing wheel of 64 buckets of 2^`bucketShift` ns beside the heap: keys due within the
    /// wheel's span wait unsorted in their bucket and enter the (small, cache-resident) heap only
    /// when their bucket comes up; a timer cancelled before then never touches a heap. Keys beyond
    /// the span wait in a second heap. Pick the bucket width so that the span (64 buckets) covers
    /// the workload's usual timers: 2^16 ns (65.5 µs buckets, 4.2 ms span) for `bench kernel`.
    public static func wheel(bucketShift: Int) -> QueueLayout {
        precondition((4...56).contains(bucketShift), "bucketShift out of range")
        return QueueLayout(bucketShift: bucketShift)
    }

    public var description: String { bucketShift.map { "wheel(2^\($0) ns × 64)" } ?? "heap" }
}

/// The pending-event set: compact 16-byte keys ordered by (time, insertion sequence) plus a slab
/// holding payloads. Cancellation is O(1) and lazy: the slot is marked and its key is discarded
/// when it reaches the front. No allocation per event in steady state.
///
/// With `QueueLayout.heap` every key is in one min-heap. With a wheel (`QueueLayout.wheel`) the
/// keys live in three places, by their bucket number b = time >> shift against `cur`:
/// `heap` holds b < cur, the 64 wheel buckets hold cur ≤ b < cur + 64 (unsorted), `far` holds the
/// rest. So the heap's minimum is the global minimum whenever the heap has a live key; when it
/// has none, the next occupied bucket is poured into it. Same keys, same order as the heap alone.
@usableFromInline let noSlot = UInt32.max

public struct EventQueue<Payload> {
    /// (time, sequence, slot) packed into one 128-bit integer so a comparison is two instructions:
    /// high 64 bits = time with the sign bit flipped (orders like Int64), low 64 bits =
    /// sequence << slotBits | slot (orders by sequence, which is unique).
    @usableFromInline struct Key: Comparable {
        @usableFromInline var bits: UInt128
        @inlinable init(time: Int64, order: UInt64) {
            bits = UInt128(UInt64(bitPattern: time) ^ (1 << 63)) << 64 | UInt128(order)
        }
        @inlinable init(bits: UInt128) { self.bits = bits }
        @inlinable var time: Int64 { Int64(bitPattern: UInt64(truncatingIfNeeded: bits >> 64) ^ (1 << 63)) }
        @inlinable var order: UInt64 { UInt64(truncatingIfNeeded: bits) }
        @inlinable static func < (a: Key, b: Key) -> Bool { a.bits < b.bits }
        @inlinable static func == (a: Key, b: Key) -> Bool { a.bits == b.bits }
    }

    @usableFromInline struct Slot {
        @usableFromInline var sequence: UInt64          // 0 = free or cancelled
        @usableFromInline var time: Int64
        @usableFromInline var target: NodeID
        /// The next slot in the same wheel bucket (`noSlot` ends the list).
        @usableFromInline var next: UInt32
        @usableFromInline var payload: Payload?
        @inlinable init(sequence: UInt64, time: Int64, target: NodeID, payload: Payload?) {
            self.sequence = sequence; self.time = time; self.target = target; self.next = noSlot; self.payload = payload
        }
    }

    @usableFromInline static var slotBits: UInt64 { 28 }
    @usableFromInline static var slotMask: UInt64 { (1 << 28) - 1 }

    @usableFromInline var heap = QuaternaryHeap()
    @usableFromInline var slots: [Slot] = []
    @usableFromInline var free: [UInt32] = []
    @usableFromInline var nextSequence: UInt64 = 1
    /// Pending events that were not cancelled.
    @usableFromInline var _liveCount = 0
    @inlinable public var liveCount: Int { _liveCount }

    // The wheel (unused with `QueueLayout.heap`).
    @usableFromInline let useWheel: Bool
    @usableFromInline let shift: UInt64
    /// Bucket number of the wheel's first bucket; the heap holds every key of an earlier bucket.
    @usableFromInline var cur: UInt64 = 0
    /// First slot of each bucket's list (`noSlot` = empty); the lists run through `Slot.next`, so
    /// a bucket costs no array of its own. A cancelled slot stays on its list (not reused) until
    /// its bucket is poured.
    @usableFromInline var buckets: [UInt32]
    /// Bit i set = bucket i holds keys.
    @usableFromInline var occupied: UInt64 = 0
    /// Keys in the buckets, cancelled ones included.
    @usableFromInline var wheelCount = 0
    /// Keys due after the wheel's span.
    @usableFromInline var far = QuaternaryHeap()
    public let layout: QueueLayout

    public init(layout: QueueLayout = .heap) {
        self.layout = layout
        useWheel = layout.bucketShift != nil
        shift = UInt64(layout.bucketShift ?? 0)
        buckets = useWheel ? Array(repeating: noSlot, count: 64) : []
    }

    /// Number of keys held, including cancelled ones not yet discarded.
    @inlinable public var heapCount: Int { heap.count + far.count + wheelCount }
    @inlinable public var isEmpty: Bool { liveCount == 0 }

    @inlinable func isLive(_ bits: UInt128) -> Bool {
        let order = UInt64(truncatingIfNeeded: bits)
        return slots[Int(order & Self.slotMask)].sequence == order >> Self.slotBits
    }

    @inlinable func bucket(_ bits: UInt128) -> UInt64 { UInt64(truncatingIfNeeded: bits >> 64) >> shift }

    @inlinable mutating func place(_ bits: UInt128) {
        guard useWheel else { heap.insert(bits); return }
        let b = bucket(bits)
        if b < cur {
            heap.insert(bits)
        } else if b < cur &+ 64 {
            let i = Int(b & 63)
            let slot = Int(UInt64(truncatingIfNeeded: bits) & Self.slotMask)
            slots[slot].next = buckets[i]
            buckets[i] = UInt32(slot)
            occupied |= 1 << UInt64(i)
            wheelCount &+= 1
        } else {
            far.insert(bits)
        }
    }

    /// Makes the heap's top the earliest live key; false when nothing live is left.
    @inlinable mutating func settle() -> Bool {
        while true {
            while let top = heap.min {
                if isLive(top) { return true }
                _ = heap.popMin()
                free.append(UInt32(UInt64(truncatingIfNeeded: top) & Self.slotMask))
            }
            if !useWheel || !refill() { return false }
        }
    }

    /// The heap is empty: pours the next occupied bucket into it (jumping the wheel forward to the
    /// far heap's minimum when the wheel is empty). False when there is nothing left anywhere.
    @usableFromInline mutating func refill() -> Bool {
        if wheelCount == 0 {
            guard let m = far.min else { return false }
            cur = bucket(m)
            migrateFar()
            if wheelCount == 0 { return true }   // only cancelled keys moved: the caller looks again
        }
        let r = UInt64(cur & 63)
        let j = UInt64((occupied >> r | occupied << ((64 &- r) & 63)).trailingZeroBitCount)
        let nb = cur &+ j
        let i = Int(nb & 63)
        cur = nb &+ 1
        var s = buckets[i]
        buckets[i] = noSlot
        occupied &= ~(1 << UInt64(i))
        while s != noSlot {
            let slot = Int(s)
            let next = slots[slot].next
            let seq = slots[slot].sequence
            if seq != 0 {
                heap.appendUnordered(Key(time: slots[slot].time, order: seq << Self.slotBits | UInt64(s)).bits)
            } else {
                free.append(s)
            }
            wheelCount &-= 1
            s = next
        }
        heap.heapify()
        migrateFar()
        return true
    }

    /// Moves far keys that the wheel's window now covers into their buckets.
    @usableFromInline mutating func migrateFar() {
        while let m = far.min, bucket(m) < cur &+ 64 {
            _ = far.popMin()
            if isLive(m) { place(m) } else { free.append(UInt32(UInt64(truncatingIfNeeded: m) & Self.slotMask)) }
        }
    }

    @inlinable public mutating func insert(_ payload: Payload, to target: NodeID, at time: Int64) -> EventID {
        let seq = nextSequence
        nextSequence &+= 1
        precondition(seq < (1 << (64 - Self.slotBits)), "event sequence space exhausted")
        let slot: UInt32
        if let f = free.popLast() {
            slot = f
            slots[Int(f)] = Slot(sequence: seq, time: time, target: target, payload: payload)
        } else {
            precondition(UInt64(slots.count) < Self.slotMask, "too many pending events")
            slot = UInt32(slots.count)
            slots.append(Slot(sequence: seq, time: time, target: target, payload: payload))
        }
        place(Key(time: time, order: seq << Self.slotBits | UInt64(slot)).bits)
        _liveCount += 1
        return EventID(slot: slot, sequence: seq)
    }

    /// Cancels a pending event. Returns false (and does nothing) for an event that already fired,
    /// was already cancelled, or never existed.
    @inlinable @discardableResult
    public mutating func cancel(_ id: EventID) -> Bool {
        let i = Int(id.slot)
        guard i < slots.count, id.sequence != 0, slots[i].sequence == id.sequence else { return false }
        slots[i].sequence = 0
        slots[i].payload = nil
        _liveCount -= 1
        if heap.count &+ far.count > 64 && heap.count &+ far.count > _liveCount + _liveCount / 2 { compact() }
        // Cancelled keys in buckets go when the bucket is poured; bound them anyway (a burst of
        // schedule-and-cancel at one instant).
        if wheelCount > 4 &* _liveCount &+ 4096 { compactWheel() }
        return true
    }

    /// Drops cancelled keys in one O(n) pass and re-heapifies once they are a third of the heaps.
    /// Amortised O(1) per cancel, and it keeps the heap shallow under cancel-heavy timer use.
    @usableFromInline mutating func compact() {
        heap = QuaternaryHeap(liveKeys(heap.unordered))
        if useWheel { far = QuaternaryHeap(liveKeys(far.unordered)) }
    }

    @usableFromInline mutating func compactWheel() {
        for i in 0..<64 where buckets[i] != noSlot {
            var s = buckets[i]
            var kept = noSlot
            while s != noSlot {
                let next = slots[Int(s)].next
                if slots[Int(s)].sequence != 0 {
                    slots[Int(s)].next = kept
                    kept = s
                } else {
                    free.append(s)
                    wheelCount &-= 1
                }
                s = next
            }
            buckets[i] = kept
            if kept == noSlot { occupied &= ~(1 << UInt64(i)) }
        }
    }

    /// The live keys of `keys`; the slots of the others go back to the free list.
    @usableFromInline mutating func liveKeys(_ keys: [UInt128]) -> [UInt128] {
        var keep: [UInt128] = []
        keep.reserveCapacity(keys.count)
        for bits in keys {
            if isLive(bits) { keep.append(bits) } else { free.append(UInt32(UInt64(truncatingIfNeeded: bits) & Self.slotMask)) }
        }
        return keep
    }

    /// Whether `id` is still pending.
    @inlinable public func isPending(_ id: EventID) -> Bool {
        let i = Int(id.slot)
        return i < slots.count && id.sequence != 0 && slots[i].sequence == id.sequence
    }

    /// The id of the pending event with this insertion sequence (a linear search: tests only).
    func pendingID(sequence: UInt64) -> EventID? {
        slots.indices.first { slots[$0].sequence == sequence }.map { EventID(slot: UInt32($0), sequence: sequence) }
    }

    /// Time of the earliest live event, discarding cancelled keys on the way.
    @inlinable public mutating func peekTime() -> Int64? {
        guard settle(), let top = heap.min else { return nil }
        return Key(bits: top).time
    }

    /// Removes and returns the earliest live event.
    @inlinable public mutating func popMin() -> (time: Int64, sequence: UInt64, target: NodeID, payload: Payload)? {
        guard settle(), let topBits = heap.popMin() else { return nil }
        let top = Key(bits: topBits)
        let slot = Int(top.order & Self.slotMask)
        let seq = top.order >> Self.slotBits
        free.append(UInt32(slot))
        let target = slots[slot].target
        let payload = slots[slot].payload.take()!
        slots[slot].sequence = 0
        _liveCount -= 1
        return (top.time, seq, target, payload)
    }
}
