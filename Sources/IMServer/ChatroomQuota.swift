/// The chatroom drop policy of im-semantics §6, per room and per window.
///
/// Windows are tumbling and aligned to server time: window *k* covers
/// `[k·quotaWindowMs, (k+1)·quotaWindowMs)`. Each window has `quotaCapacity` slots:
/// `quotaReservedHigh` reserved for high-priority messages and the rest shared. Messages are
/// admitted one by one in server-receive order, so "dropping takes the latest arrivals" falls out.
///
/// - low: a shared slot, else dropped (B13: then a reserved slot, else dropped);
/// - high: a reserved slot, then a shared slot, else dropped;
/// - whitelisted (type or sender): never dropped; takes a shared slot, then a reserved slot, while
///   any remain (so it can crowd out later low and high messages).
struct ChatroomQuota: Sendable, Hashable {
    enum Priority: Sendable, Hashable { case low, high, whitelisted }
    enum Slot: Sendable, Hashable { case reserved, shared, none }

    private(set) var window: Int64 = .min
    private(set) var reservedUsed = 0
    private(set) var sharedUsed = 0

    /// Admits a message arriving at `now`; returns the slot it took, or nil when it is dropped.
    mutating func admit(_ priority: Priority, now: Int64, windowMs: Int64, capacity: Int, reservedHigh: Int,
                        lowMayTakeReserved: Bool) -> Slot? {
        let w = windowMs > 0 ? floorDiv(now, windowMs) : now
        if w != window {
            window = w
            reservedUsed = 0
            sharedUsed = 0
        }
        let reserved = max(0, min(reservedHigh, capacity))
        let shared = max(0, capacity - reserved)
        let reservedFree = reservedUsed < reserved
        let sharedFree = sharedUsed < shared
        switch priority {
        case .low:
            if sharedFree { sharedUsed += 1; return .shared }
            if lowMayTakeReserved, reservedFree { reservedUsed += 1; return .reserved }
            return nil
        case .high:
            if reservedFree { reservedUsed += 1; return .reserved }
            if sharedFree { sharedUsed += 1; return .shared }
            return nil
        case .whitelisted:
            if sharedFree { sharedUsed += 1; return .shared }
            if reservedFree { reservedUsed += 1; return .reserved }
            return Slot.none
        }
    }

    private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}
