import IMClient
import SimKernel

/// The kernel events of one device's armed client timers, by timer: a slot per timer without a
/// payload and a short list of request timeouts (a few at a time). Replaces a
/// `[ClientTimer: EventID]`, whose hashing, probing and deletes cost ~100 M instructions in the
/// mixed-1k hour (572 k finds). Nothing iterates it except `armedBySchedule`, which sorts.
struct ClientTimerTable {
    private var connackTimeout: EventID?
    private var heartbeat: EventID?
    private var pingTimeout: EventID?
    private var reconnect: EventID?
    private var backgroundClose: EventID?
    private var connectTimeLimit: EventID?
    private var poll: EventID?
    private var storeRetry: EventID?
    /// Armed request timeouts, in no meaningful order (looked up by messageId).
    private var requests: [(messageId: UInt16, event: EventID)] = []

    init() {}

    subscript(timer: ClientTimer) -> EventID? {
        get {
            switch timer {
            case .connackTimeout: connackTimeout
            case .heartbeat: heartbeat
            case .pingTimeout: pingTimeout
            case .reconnect: reconnect
            case .backgroundClose: backgroundClose
            case .connectTimeLimit: connectTimeLimit
            case .poll: poll
            case .storeRetry: storeRetry
            case .requestTimeout(let m): requestIndex(m).map { requests[$0].event }
            }
        }
        set {
            switch timer {
            case .connackTimeout: connackTimeout = newValue
            case .heartbeat: heartbeat = newValue
            case .pingTimeout: pingTimeout = newValue
            case .reconnect: reconnect = newValue
            case .backgroundClose: backgroundClose = newValue
            case .connectTimeLimit: connectTimeLimit = newValue
            case .poll: poll = newValue
            case .storeRetry: storeRetry = newValue
            case .requestTimeout(let m):
                if let i = requestIndex(m) {
                    if let e = newValue { requests[i].event = e } else { requests.swapAt(i, requests.count - 1); requests.removeLast() }
                } else if let e = newValue {
                    requests.append((m, e))
                }
            }
        }
    }

    /// Removes the timer's event and returns it (nil when it was not armed).
    @discardableResult
    mutating func removeValue(forKey timer: ClientTimer) -> EventID? {
        let old = self[timer]
        if old != nil { self[timer] = nil }
        return old
    }

    var isEmpty: Bool {
        connackTimeout == nil && heartbeat == nil && pingTimeout == nil && reconnect == nil
            && backgroundClose == nil && connectTimeLimit == nil && poll == nil && storeRetry == nil
            && requests.isEmpty
    }

    /// Every armed timer's event, in the order they were scheduled (event sequence).
    var armedBySchedule: [EventID] {
        var all = requests.map(\.event)
        for e in [connackTimeout, heartbeat, pingTimeout, reconnect, backgroundClose, connectTimeLimit, poll, storeRetry] {
            if let e { all.append(e) }
        }
        return all.sorted { $0.sequence < $1.sequence }
    }

    private func requestIndex(_ m: UInt16) -> Int? {
        for i in requests.indices where requests[i].messageId == m { return i }
        return nil
    }
}
