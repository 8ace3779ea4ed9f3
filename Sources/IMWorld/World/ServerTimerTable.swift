import IMServer
import IMWire
import SimKernel

/// The kernel events of the server's armed timers, by timer: the per-connection timers (nearly
/// all of them) in a slot per connection (connection ids are the network's dense indexes), the
/// offline sweep in one slot, the rare room timers in a dictionary. Replaces a
/// `[ServerTimer: EventID]`, whose probing compared, copied and destroyed the timers (string
/// payloads included): ~100 M instructions in the mixed-1k hour. Nothing iterates it except
/// `armedBySchedule`, which sorts.
struct ServerTimerTable {
    struct ConnectionTimers {
        var sessionIdle: EventID?
        var connectDeadline: EventID?
        /// Armed QUERYACK retries, in no meaningful order (looked up by messageId).
        var queryAckRetries: [(messageId: UInt16, event: EventID)] = []
    }

    /// Connections with an id below this have a slot; any other id (not one the network hands
    /// out) goes to `others`.
    static let slotLimit: UInt64 = 1 << 20
    private var byConnection: [ConnectionTimers] = []
    private var offlineExpiry: EventID?
    private var others: [ServerTimer: EventID] = [:]

    init() {}

    subscript(timer: ServerTimer) -> EventID? {
        get {
            switch timer {
            case .sessionIdle(let c) where c.raw < Self.slotLimit:
                return c.raw < UInt64(byConnection.count) ? byConnection[Int(c.raw)].sessionIdle : nil
            case .connectDeadline(let c) where c.raw < Self.slotLimit:
                return c.raw < UInt64(byConnection.count) ? byConnection[Int(c.raw)].connectDeadline : nil
            case .queryAckRetry(let c, let m) where c.raw < Self.slotLimit:
                guard c.raw < UInt64(byConnection.count) else { return nil }
                for r in byConnection[Int(c.raw)].queryAckRetries where r.messageId == m { return r.event }
                return nil
            case .offlineExpiry:
                return offlineExpiry
            default:
                return others[timer]
            }
        }
        set {
            switch timer {
            case .sessionIdle(let c) where c.raw < Self.slotLimit:
                slot(c, creating: newValue != nil) { $0.sessionIdle = newValue }
            case .connectDeadline(let c) where c.raw < Self.slotLimit:
                slot(c, creating: newValue != nil) { $0.connectDeadline = newValue }
            case .queryAckRetry(let c, let m) where c.raw < Self.slotLimit:
                slot(c, creating: newValue != nil) { t in
                    if let i = t.queryAckRetries.firstIndex(where: { $0.messageId == m }) {
                        if let e = newValue {
                            t.queryAckRetries[i].event = e
                        } else {
                            t.queryAckRetries.swapAt(i, t.queryAckRetries.count - 1)
                            t.queryAckRetries.removeLast()
                        }
                    } else if let e = newValue {
                        t.queryAckRetries.append((m, e))
                    }
                }
            case .offlineExpiry:
                offlineExpiry = newValue
            default:
                others[timer] = newValue
            }
        }
    }

    /// Removes the timer's event and returns it (nil when it was not armed).
    @discardableResult
    mutating func removeValue(forKey timer: ServerTimer) -> EventID? {
        let old = self[timer]
        if old != nil { self[timer] = nil }
        return old
    }

    /// Every armed timer's event, in the order they were scheduled (event sequence).
    var armedBySchedule: [EventID] {
        var all = Array(others.values)
        if let e = offlineExpiry { all.append(e) }
        for t in byConnection {
            if let e = t.sessionIdle { all.append(e) }
            if let e = t.connectDeadline { all.append(e) }
            for r in t.queryAckRetries { all.append(r.event) }
        }
        return all.sorted { $0.sequence < $1.sequence }
    }

    /// Connection `c`'s slot, modified in place; a missing slot is only made for a value.
    private mutating func slot(_ c: ConnectionID, creating: Bool, _ body: (inout ConnectionTimers) -> Void) {
        let i = Int(c.raw)
        if i >= byConnection.count {
            guard creating else { return }
            byConnection.append(contentsOf: repeatElement(ConnectionTimers(), count: i + 1 - byConnection.count))
        }
        body(&byConnection[i])
    }
}
