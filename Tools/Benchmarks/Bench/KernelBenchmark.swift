import SimKernel
/// The fixed workload of `imsim bench kernel` and of the kernel determinism tests:
/// `nodes` nodes play ping-pong with random delays (10 µs–1 ms) to random peers; every message a
/// node receives re-arms its idle timer (1–3 ms), so most timers are cancelled before they fire.
/// `Tools/bench/simpy_pingpong.py` is the same workload in SimPy.
public enum KernelBenchmark {
    public enum Message: SimPayload, Sendable {
        case ping(from: UInt32)
        case pong(from: UInt32)
        case idleTimeout

        @inlinable public var kind: UInt16 {
            switch self {
            case .ping: 1
            case .pong: 2
            case .idleTimeout: 3
            }
        }
        @inlinable public var digest: UInt64 {
            switch self {
            case .ping(let f), .pong(let f): UInt64(f)
            case .idleTimeout: 0
            }
        }
    }

    public struct Result: Sendable, Codable, Equatable {
        public var nodes: Int
        public var events: UInt64
        public var pingsSent: UInt64
        public var timeoutsFired: UInt64
        public var finalTime: String
        public var digest: String
        public var counters: KernelCounters
    }

    public struct Handler: SimHandler {
        public typealias Payload = Message
        @usableFromInline var rngs: [RandomStream]
        @usableFromInline var timers: [EventID?]
        @usableFromInline var pings: UInt64 = 0
        @usableFromInline var timeouts: UInt64 = 0
        @usableFromInline let nodeCount: Int

        @inlinable init(nodeCount: Int, streams: RandomStreams) {
            self.nodeCount = nodeCount
            rngs = (0..<nodeCount).map { streams.stream("bench.node", $0) }
            timers = Array(repeating: nil, count: nodeCount)
        }

        @inlinable static var minDelay: SimDuration { .microseconds(10) }
        @inlinable static var maxDelay: SimDuration { .milliseconds(1) }

        @inlinable mutating func sendPing(from i: Int, in sim: Simulator<Message>) {
            var peer = rngs[i].uniform(0..<(nodeCount - 1))
            if peer >= i { peer += 1 }
            let delay = rngs[i].uniform(Self.minDelay...Self.maxDelay)
            sim.schedule(.ping(from: UInt32(i)), to: NodeID(UInt32(peer)), after: delay)
            pings &+= 1
        }

        @inlinable mutating func rearm(_ i: Int, in sim: Simulator<Message>) {
            let d = rngs[i].uniform(SimDuration.milliseconds(1)...SimDuration.milliseconds(3))
            timers[i] = sim.rearm(timers[i], .idleTimeout, to: NodeID(UInt32(i)), after: d)
        }

        @inlinable public mutating func handle(_ event: SimEvent<Message>, in sim: Simulator<Message>) {
            let i = event.target.index
            switch event.payload {
            case .ping(let from):
                let delay = rngs[i].uniform(Self.minDelay...Self.maxDelay)
                sim.schedule(.pong(from: UInt32(i)), to: NodeID(from), after: delay)
                rearm(i, in: sim)
            case .pong:
                sendPing(from: i, in: sim)
                rearm(i, in: sim)
            case .idleTimeout:
                timeouts &+= 1
                timers[i] = nil
                rearm(i, in: sim)
            }
        }
    }

    /// The queue layout `bench kernel` runs by default: 1024 buckets of 4.1 µs span 4.2 ms, which
    /// covers the 1–3 ms idle timers and the 10 µs–1 ms pings, and a bucket holds a handful of
    /// events (~2M events per simulated second), so the heap they are poured into stays tiny.
    public static let wheel = QueueLayout.wheel(bucketShift: 12, bucketCount: 1024)

    /// Runs the workload for exactly `events` dispatched events.
    public static func run(seed: UInt64, nodes: Int, events: UInt64) -> Result {
        run(seed: seed, nodes: nodes, events: events, queue: wheel)
    }

    public static func run(seed: UInt64, nodes: Int, events: UInt64, queue: QueueLayout) -> Result {
        precondition(nodes >= 2, "need at least two nodes")
        let sim = Simulator<Message>(seed: seed, queue: queue)
        for i in 0..<nodes { sim.addNode("node\(i)") }
        var handler = Handler(nodeCount: nodes, streams: sim.streams)
        for i in 0..<nodes {
            handler.sendPing(from: i, in: sim)
            handler.rearm(i, in: sim)
        }
        sim.run(&handler, maxEvents: events)
        return Result(
            nodes: nodes, events: sim.counters.eventsDispatched, pingsSent: handler.pings,
            timeoutsFired: handler.timeouts, finalTime: sim.now.preciseDescription,
            digest: sim.digest.description, counters: sim.counters)
    }
}
