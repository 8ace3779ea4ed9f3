/// What the kernel needs to know about an event payload: a small kind code and a stable digest
/// of its contents, both folded into the run's determinism digest.
public protocol SimPayload {
    var kind: UInt16 { get }
    var digest: UInt64 { get }
}

/// One dispatched event.
public struct SimEvent<Payload>: Sendable where Payload: Sendable {
    public let time: SimTime
    public let sequence: UInt64
    /// 0-based index in dispatch order.
    public let index: UInt64
    public let target: NodeID
    public let payload: Payload

    @inlinable init(time: SimTime, sequence: UInt64, index: UInt64, target: NodeID, payload: Payload) {
        self.time = time; self.sequence = sequence; self.index = index; self.target = target; self.payload = payload
    }
}

/// Receives events. Generic so the run loop specialises to a direct call.
public protocol SimHandler {
    associatedtype Payload: SimPayload & Sendable
    mutating func handle(_ event: SimEvent<Payload>, in sim: Simulator<Payload>)
}

public struct KernelCounters: Sendable, Equatable, Codable {
    public var eventsScheduled: UInt64 = 0
    public var eventsDispatched: UInt64 = 0
    public var timersCancelled: UInt64 = 0
    /// Cancels of events that had already fired, were cancelled, or never existed (harmless).
    public var cancelsIgnored: UInt64 = 0
    public var maxQueueDepth: Int = 0
    public init() {}
}

/// Why `run` returned.
public enum StopReason: Equatable, Sendable, CustomStringConvertible {
    case queueEmpty
    case reachedTime(SimTime)
    case reachedEventCount(UInt64)
    case predicate
    case stopRequested

    public var description: String {
        switch self {
        case .queueEmpty: "queue empty"
        case .reachedTime(let t): "reached \(t)"
        case .reachedEventCount(let n): "reached \(n) events"
        case .predicate: "stop condition met"
        case .stopRequested: "stop requested"
        }
    }
}

/// The discrete-event kernel: a plain single-threaded loop over a pending-event queue.
/// Knows nothing about IM. Time only moves when an event is dispatched.
public final class Simulator<Payload: SimPayload & Sendable> {
    // Single-threaded by design: skip dynamic exclusivity checks on the hot fields.
    @exclusivity(unchecked) @usableFromInline var _now: SimTime = .zero
    @inlinable public var now: SimTime { _now }
    @exclusivity(unchecked) @usableFromInline var queue: EventQueue<Payload>
    @exclusivity(unchecked) @usableFromInline var digestValue = Digest64()
    @exclusivity(unchecked) public var counters = KernelCounters()
    public let streams: RandomStreams
    @usableFromInline var stopFlag = false

    /// Human-readable node names, indexed by `NodeID`.
    public private(set) var nodeNames: [String] = []

    /// - Parameter queue: the pending-event set's layout; it changes the cost, never the order
    ///   of events (`QueueLayout`).
    public convenience init(seed: UInt64) { self.init(seed: seed, queue: .heap) }

    public init(seed: UInt64, queue layout: QueueLayout) {
        streams = RandomStreams(seed: seed)
        queue = EventQueue(layout: layout)
    }

    public var queueLayout: QueueLayout { queue.layout }

    public var seed: UInt64 { streams.seed }

    /// The determinism digest of everything dispatched so far.
    @inlinable public var digest: Digest64 { digestValue }

    /// Folds content into the determinism digest: what events carry (bytes a link delivers,
    /// what the app is told), so "same digest" means "same run", not only "same event schedule".
    @inlinable public func foldIntoDigest(_ x: UInt64) { digestValue.fold(x) }

    @discardableResult
    public func addNode(_ name: String) -> NodeID {
        nodeNames.append(name)
        return NodeID(UInt32(nodeNames.count - 1))
    }

    public func name(of node: NodeID) -> String {
        node.index < nodeNames.count ? nodeNames[node.index] : node.description
    }

    @inlinable public var pendingCount: Int { queue.liveCount }

    @inlinable @inline(__always) @discardableResult
    public func schedule(_ payload: Payload, to target: NodeID, at time: SimTime) -> EventID {
        precondition(time >= now, "cannot schedule in the past (\(time) < \(now))")
        let id = queue.insert(payload, to: target, at: time.nanoseconds)
        counters.eventsScheduled &+= 1
        if queue.liveCount > counters.maxQueueDepth { counters.maxQueueDepth = queue.liveCount }
        return id
    }

    @inlinable @discardableResult
    public func schedule(_ payload: Payload, to target: NodeID, after delay: SimDuration) -> EventID {
        schedule(payload, to: target, at: deadline(after: delay))
    }

    /// Now + `delay`, saturating: a delay past the end of time (a hostile latency) parks the event
    /// at .max; a negative one means now.
    @inlinable @inline(__always) func deadline(after delay: SimDuration) -> SimTime {
        let (at, overflow) = now.nanoseconds.addingReportingOverflow(Swift.max(0, delay.nanoseconds))
        return overflow ? .max : SimTime(nanoseconds: at)
    }

    /// Cancels a pending event; harmless for fired, cancelled or unknown ids.
    @inlinable @discardableResult
    public func cancel(_ id: EventID) -> Bool {
        if queue.cancel(id) {
            counters.timersCancelled &+= 1
            return true
        }
        counters.cancelsIgnored &+= 1
        return false
    }

    /// Re-arms a timer: `cancel(timer)` (when not nil) then `schedule(payload, to: target, after:
    /// delay)`, with the same events, order and counters, but a pending timer's slot is reused
    /// in place instead of freed and taken again. Returns the new event's id.
    @inlinable @inline(__always) @discardableResult
    public func rearm(_ timer: EventID?, _ payload: Payload, to target: NodeID, after delay: SimDuration) -> EventID {
        let time = deadline(after: delay)
        if let t = timer {
            if let id = queue.replace(t, with: payload, to: target, at: time.nanoseconds) {
                counters.timersCancelled &+= 1
                counters.eventsScheduled &+= 1
                return id
            }
            counters.cancelsIgnored &+= 1
        }
        return schedule(payload, to: target, at: time)
    }

    @inlinable public func isPending(_ id: EventID) -> Bool { queue.isPending(id) }

    /// Time of the next live event, if any.
    @inlinable public func nextEventTime() -> SimTime? {
        queue.peekTime().map(SimTime.init(nanoseconds:))
    }

    /// Asks `run` to return after the current event.
    public func requestStop() { stopFlag = true }

    /// Pops the next event, advances time and folds it into the digest.
    @inlinable public func next() -> SimEvent<Payload>? {
        queue.settle() ? dispatchSettled() : nil
    }

    /// Dispatches the queue's front after `settle()` said there is one.
    @inlinable @inline(__always) func dispatchSettled() -> SimEvent<Payload> {
        let e = queue.popSettled()
        _now = SimTime(nanoseconds: e.time)
        let index = counters.eventsDispatched
        counters.eventsDispatched &+= 1
        digestValue.fold(UInt64(bitPattern: e.time))
        digestValue.fold(UInt64(e.payload.kind) << 32 | UInt64(e.target.raw))
        digestValue.fold(e.payload.digest)
        return SimEvent(time: _now, sequence: e.sequence, index: index, target: e.target, payload: e.payload)
    }

    /// Runs until the queue is empty, the next event would be later than `until`, `maxEvents`
    /// have been dispatched in total, `stopWhen` returns true after an event, or `requestStop()`.
    /// Time is left at `until` when that limit is hit, so a later run continues seamlessly.
    @inlinable @discardableResult
    public func run<H: SimHandler>(
        _ handler: inout H,
        until: SimTime? = nil,
        maxEvents: UInt64? = nil,
        stopWhen: ((SimEvent<Payload>) -> Bool)? = nil
    ) -> StopReason where H.Payload == Payload {
        stopFlag = false
        while true {
            if let limit = maxEvents, counters.eventsDispatched >= limit { return .reachedEventCount(limit) }
            // One settle per event: the front found here is the one dispatched.
            guard queue.settle() else {
                if let u = until, u > _now { _now = u }
                return .queueEmpty
            }
            if let u = until, queue.settledTime > u.nanoseconds {
                if u > _now { _now = u }
                return .reachedTime(u)
            }
            let event = dispatchSettled()
            handler.handle(event, in: self)
            if stopFlag { stopFlag = false; return .stopRequested }
            if let p = stopWhen, p(event) { return .predicate }
        }
    }
}
