
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

/// The pending-event set: a min-heap of compact 16-byte keys ordered by (time, insertion sequence)
/// plus a slab holding payloads. Cancellation is O(1) and lazy: the slot is marked and its key is
/// discarded when it reaches the top of the heap. No allocation per event in steady state.
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
        @usableFromInline var target: NodeID
        @usableFromInline var payload: Payload?
        @inlinable init(sequence: UInt64, target: NodeID, payload: Payload?) {
            self.sequence = sequence; self.target = target; self.payload = payload
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

    public init() {}

    /// Number of keys in the heap, including cancelled ones not yet discarded.
    @inlinable public var heapCount: Int { heap.count }
    @inlinable public var isEmpty: Bool { liveCount == 0 }

    @inlinable public mutating func insert(_ payload: Payload, to target: NodeID, at time: Int64) -> EventID {
        let seq = nextSequence
        nextSequence &+= 1
        precondition(seq < (1 << (64 - Self.slotBits)), "event sequence space exhausted")
        let slot: UInt32
        if let f = free.popLast() {
            slot = f
            slots[Int(f)] = Slot(sequence: seq, target: target, payload: payload)
        } else {
            precondition(UInt64(slots.count) < Self.slotMask, "too many pending events")
            slot = UInt32(slots.count)
            slots.append(Slot(sequence: seq, target: target, payload: payload))
        }
        heap.insert(Key(time: time, order: seq << Self.slotBits | UInt64(slot)).bits)
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
        if heap.count > 64 && heap.count > _liveCount + _liveCount / 2 { compact() }
        return true
    }

    /// Drops cancelled keys in one O(n) pass and re-heapifies once they are a third of the heap.
    /// Amortised O(1) per cancel, and it keeps the heap shallow under cancel-heavy timer use.
    @usableFromInline mutating func compact() {
        var keep: [UInt128] = []
        keep.reserveCapacity(_liveCount)
        for bits in heap.unordered {
            let key = Key(bits: bits)
            let slot = Int(key.order & Self.slotMask)
            if slots[slot].sequence == key.order >> Self.slotBits {
                keep.append(bits)
            } else {
                free.append(UInt32(slot))
            }
        }
        heap = QuaternaryHeap(keep)
    }

    /// Whether `id` is still pending.
    @inlinable public func isPending(_ id: EventID) -> Bool {
        let i = Int(id.slot)
        return i < slots.count && id.sequence != 0 && slots[i].sequence == id.sequence
    }

    /// Time of the earliest live event, discarding cancelled keys on the way.
    @inlinable public mutating func peekTime() -> Int64? {
        while let topBits = heap.min {
            let top = Key(bits: topBits)
            let slot = Int(top.order & Self.slotMask)
            if slots[slot].sequence == top.order >> Self.slotBits { return top.time }
            _ = heap.popMin()
            free.append(UInt32(slot))
        }
        return nil
    }

    /// Removes and returns the earliest live event.
    @inlinable public mutating func popMin() -> (time: Int64, sequence: UInt64, target: NodeID, payload: Payload)? {
        while let topBits = heap.popMin() {
            let top = Key(bits: topBits)
            let slot = Int(top.order & Self.slotMask)
            let seq = top.order >> Self.slotBits
            free.append(UInt32(slot))
            if slots[slot].sequence == seq {
                let target = slots[slot].target
                let payload = slots[slot].payload.take()!
                slots[slot].sequence = 0
                _liveCount -= 1
                return (top.time, seq, target, payload)
            }
        }
        return nil
    }
}
