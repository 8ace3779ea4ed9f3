import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// A `Network` alone on a kernel, driven the way the World drives it: the kernel dispatches the
/// network's events, the bench hands them back and logs what reaches each end.
final class NetworkBench {
    enum Seen: Equatable {
        case accepted(ConnectionID)
        case opened(device: Int)
        case toServer(ConnectionID, [UInt8])
        case toDevice(Int, [UInt8])
        case serverClosed(ConnectionID, TransportCloseReason)
        case deviceClosed(Int, TransportCloseReason)
    }

    let sim: Simulator<WorldEvent>
    let network: Network
    var seen: [(time: SimTime, what: Seen)] = []

    /// `links`: device ids and their conditions (nil: the options' conditions).
    init(seed: UInt64, conditions: NetworkConditions, links: [(String, NetworkConditions?)]) {
        sim = Simulator(seed: seed)
        network = Network(kernel: sim, options: NetworkOptions(conditions: conditions))
        for (id, c) in links {
            sim.addNode(id)
            network.addLink(device: id, conditions: c)
        }
        sim.addNode("server")
    }

    struct Driver: SimHandler {
        let bench: NetworkBench
        mutating func handle(_ event: SimEvent<WorldEvent>, in sim: Simulator<WorldEvent>) {
            let n = bench.network
            switch event.payload {
            case .connectArrive(let c):
                if case .accepted(let id, _) = n.synArrived(Int(c), serverListening: true) {
                    bench.log(.accepted(id))
                    n.synAck(Int(c))
                }
            case .connectComplete(let c):
                if let d = n.connectCompleted(Int(c)) { bench.log(.opened(device: d)) }
            case .deliver(let c, let toServer):
                var bytes: [UInt8] = []
                switch n.deliver(connection: Int(c), toServer: toServer, into: &bytes) {
                case .server(let id): bench.log(.toServer(id, bytes))
                case .device(let d): bench.log(.toDevice(d, bytes))
                case nil: break
                }
            case .closeNotice(let c, let toServer, let reason):
                switch n.closeArrived(Int(c), toServer: toServer, reason: reason) {
                case .toServer(let id): bench.log(.serverClosed(id, reason))
                case .toDevice(let d, _, let current): if current { bench.log(.deviceClosed(d, reason)) }
                case nil: break
                }
            default:
                Issue.record("the network scheduled \(event.payload)")
            }
        }
    }

    func log(_ s: Seen) { seen.append((sim.now, s)) }

    func run(until t: SimTime) {
        var driver = Driver(bench: self)
        sim.run(&driver, until: t)
    }

    /// Opens device `d`'s connection and runs until both ends know it is open.
    func connect(_ d: Int) -> ConnectionID {
        let id = network.open(device: d)
        run(until: sim.now + .seconds(5))
        return id
    }

    /// Everything the server received on `id`, concatenated in arrival order.
    func serverBytes(_ id: ConnectionID) -> [UInt8] {
        var out: [UInt8] = []
        for s in seen { if case .toServer(id, let b) = s.what { out += b } }
        return out
    }

    static let ms = SimDuration.milliseconds(1)
    static let quiet = NetworkConditions(uplink: .fixed(.milliseconds(10)), downlink: .fixed(.milliseconds(10)),
                                         bandwidthBytesPerSecond: nil, splitProbability: ProbabilityValue(0),
                                         connectSetup: .fixed(.milliseconds(1)))
    static let rough = NetworkConditions(uplink: .logNormal(median: .milliseconds(40), sigmaMilli: 800, max: .seconds(2)),
                                         downlink: .uniform(.milliseconds(5), .milliseconds(200)),
                                         bandwidthBytesPerSecond: 20_000, splitProbability: ProbabilityValue(0.5))
}

@Suite struct NetworkTests {
    @Test func aConnectionOpensAtBothEndsAfterSetupAndOneRoundTrip() throws {
        let b = NetworkBench(seed: 1, conditions: NetworkBench.quiet, links: [("alice", nil)])
        let id = b.connect(0)
        let seen = b.seen.map(\.what)
        #expect(seen == [.accepted(id), .opened(device: 0)])
        // 1 ms setup + 10 ms up, then 10 ms down.
        #expect(b.seen.map(\.time) == [SimTime.zero + .milliseconds(11), SimTime.zero + .milliseconds(21)])
        #expect(b.network.stats.connectionsOpened == 1)
    }

    @Test func bytesSubmittedOnOneLinkArriveInOrderWhateverTheLatencyAndSegmentation() throws {
        let b = NetworkBench(seed: 7, conditions: NetworkBench.rough, links: [("alice", nil)])
        let id = b.connect(0)
        var sent: [UInt8] = []
        var next: UInt8 = 0
        for step in 0..<40 {
            // Some writes at the same instant, some a little later (latencies drawn afresh each time).
            let count = 1 + step % 7
            let bytes = (0..<count).map { _ in next &+= 1; return next }
            #expect(b.network.submit(device: 0, bytes) == .queued)
            sent += bytes
            if step % 3 == 2 { b.run(until: b.sim.now + .milliseconds(3)) }
        }
        b.run(until: b.sim.now + .seconds(30))
        #expect(b.serverBytes(id) == sent)
        // Split writes and coalesced reads: the reads are not the writes.
        let reads = b.seen.filter { if case .toServer = $0.what { true } else { false } }
        #expect(reads.count != 40)
        #expect(b.network.bytesInFlight == 0)
        #expect(b.network.stats.bytesToServer == sent.count)
    }

    @Test func aResetDropsUndeliveredBytesAndTellsEachSide() throws {
        let b = NetworkBench(seed: 2, conditions: NetworkBench.quiet, links: [("alice", nil)])
        let id = b.connect(0)
        #expect(b.network.submit(device: 0, [1, 2, 3]) == .queued)
        #expect(b.network.submit(server: id, [4, 5]) == .queued)
        #expect(b.network.bytesInFlight == 5)
        b.run(until: b.sim.now + .milliseconds(5))   // both still in flight (10 ms each way)
        b.network.reset(device: 0)
        #expect(b.network.bytesInFlight == 0)
        // Nothing more can be written on the reset connection.
        #expect(b.network.submit(device: 0, [6]) == .lost(id))
        b.run(until: b.sim.now + .seconds(1))
        let after = b.seen.dropFirst(2).map(\.what)
        #expect(!after.contains { if case .toServer = $0 { true } else if case .toDevice = $0 { true } else { false } })
        #expect(after.contains(.serverClosed(id, .reset)))
        #expect(after.contains(.deviceClosed(0, .reset)))
        #expect(b.network.stats.bytesLost == 1)
    }

    @Test func twoLinksDrawIndependently() throws {
        // The same seed; alice's link differs (its latency, and its traffic in one bench only).
        let busy = NetworkBench(seed: 5, conditions: NetworkBench.rough,
                                links: [("alice", NetworkBench.quiet), ("bob", nil)])
        let idle = NetworkBench(seed: 5, conditions: NetworkBench.rough, links: [("alice", nil), ("bob", nil)])
        for _ in 0..<30 { _ = busy.network.latency(0, toServer: true) }
        let a = (0..<60).map { i in busy.network.latency(1, toServer: i % 2 == 0) }
        let b = (0..<60).map { i in idle.network.latency(1, toServer: i % 2 == 0) }
        #expect(a == b)
        #expect(Set(a).count > 30)

        // In a run: alice connects and writes on one network only; bob's arrivals do not move.
        _ = busy.network.open(device: 0)
        let bobBusy = busy.network.open(device: 1)
        let bobIdle = idle.network.open(device: 1)
        busy.run(until: .zero + .seconds(5))
        idle.run(until: .zero + .seconds(5))
        for i in 0..<10 {
            _ = busy.network.submit(device: 0, [UInt8](repeating: UInt8(i), count: 100))
            _ = busy.network.submit(device: 1, [UInt8(i), 1, 2, 3])
            _ = idle.network.submit(device: 1, [UInt8(i), 1, 2, 3])
            busy.run(until: busy.sim.now + .milliseconds(7))
            idle.run(until: idle.sim.now + .milliseconds(7))
        }
        busy.run(until: .zero + .seconds(30))
        idle.run(until: .zero + .seconds(30))
        func bob(_ bench: NetworkBench, _ id: ConnectionID) -> [String] {
            bench.seen.compactMap {
                switch $0.what {
                case .toServer(id, let bytes): "\($0.time) \(bytes)"
                case .accepted(id): "\($0.time) accepted"
                case .opened(device: 1): "\($0.time) opened"
                default: nil
                }
            }
        }
        #expect(bob(busy, bobBusy).count >= 3)
        #expect(bob(busy, bobBusy) == bob(idle, bobIdle))
        #expect(busy.serverBytes(ConnectionID(0)).count == 1000)
    }

    /// A FIN is the last segment of its direction: the peer reads every byte sent before the
    /// close, then EOF — even when the last bytes are due at the very instant of the FIN (the
    /// FIN is scheduled at the last segment's arrival before that segment's delivery is).
    @Test(arguments: [true, false])
    func aFinNeverOvertakesTheBytesSentBeforeIt(deviceCloses: Bool) throws {
        let b = NetworkBench(seed: 4, conditions: NetworkBench.quiet, links: [("alice", nil)])
        let id = b.connect(0)
        let start = b.seen.count
        func write(_ bytes: [UInt8]) {
            if deviceCloses { _ = b.network.submit(device: 0, bytes) } else { _ = b.network.submit(server: id, bytes) }
        }
        write([1, 2, 3])                                // due at t + 10 ms
        b.run(until: b.sim.now + .milliseconds(1))
        write([4, 5])                                   // due at t + 11 ms, behind the first
        if deviceCloses { b.network.close(device: 0) } else { b.network.close(server: id) }   // FIN due at t + 11 ms too
        b.run(until: b.sim.now + .seconds(1))
        let seen = b.seen.dropFirst(start).map(\.what)
        if deviceCloses {
            #expect(seen == [.toServer(id, [1, 2, 3]), .toServer(id, [4, 5]), .serverClosed(id, .closedByPeer)])
        } else {
            #expect(seen == [.toDevice(0, [1, 2, 3]), .toDevice(0, [4, 5]), .deviceClosed(0, .closedByPeer)])
        }
    }

    @Test func aPartitionHoldsBytesUntilItHeals() throws {
        let b = NetworkBench(seed: 3, conditions: NetworkBench.quiet, links: [("alice", nil)])
        let id = b.connect(0)
        let t0 = b.sim.now
        b.network.partition(device: 0, until: t0 + .seconds(2))
        _ = b.network.submit(device: 0, [9, 9])
        b.run(until: t0 + .seconds(3))
        let arrival = try #require(b.seen.first { $0.what == .toServer(id, [9, 9]) })
        #expect(arrival.time == t0 + .seconds(2))
    }
}
