import IMServer
import IMWire
import SimKernel

/// What `imsim run` prints: one run's outcome, as text or JSON.
public struct RunReport: Sendable, Codable {
    public var scenario: String
    public var seed: UInt64
    public var simulatedTime: String
    public var simulatedNanoseconds: Int64
    public var wallSeconds: Double
    public var events: UInt64
    public var digest: String
    public var devices: Int
    public var messagesSent: Int
    public var accepted: Int
    public var rejected: Int
    public var delivered: Int
    public var sendFailed: Int
    public var dropped: [String: Int]
    public var connectionsOpened: Int
    public var reconnects: Int
    public var refused: Int
    public var faults: Int
    public var appKills: Int
    public var serverCrashes: Int
    public var convergedAt: String?
    public var stopReason: String
    public var violations: [Violation]

    public var simWallRatio: Double { wallSeconds > 0 ? Double(simulatedNanoseconds) / 1e9 / wallSeconds : 0 }

    public init(world: World, statistics s: RunStatistics, wallSeconds: Double, stopReason: StopReason,
                violations: [Violation]) {
        scenario = world.scenario.name
        seed = world.seed
        simulatedTime = world.now.description
        simulatedNanoseconds = world.now.nanoseconds
        self.wallSeconds = wallSeconds
        events = world.sim.counters.eventsDispatched
        digest = world.sim.digest.description
        devices = world.deviceCount
        messagesSent = world.stats.apiSends
        accepted = s.accepted
        rejected = s.rejected
        delivered = s.delivered
        sendFailed = s.sendFailed
        dropped = Dictionary(uniqueKeysWithValues: s.droppedByReason.map { ($0.0.rawValue, $0.1) })
        connectionsOpened = world.stats.connectionsOpened
        reconnects = world.stats.reconnects
        refused = world.stats.connectionsRefused
        faults = world.stats.faultsInjected
        appKills = world.stats.appKills
        serverCrashes = world.stats.serverCrashes
        convergedAt = world.convergedAt?.description
        self.stopReason = stopReason.description
        self.violations = violations
    }

    /// The human summary.
    public var text: String {
        var lines: [String] = []
        let ratio = simWallRatio
        lines.append("imsim run \(scenario) --seed \(seed)")
        lines.append("  simulated \(simulatedTime) in \(fmt(wallSeconds, 3)) s wall (\(fmt(ratio, 0))× real time), \(events) events, \(devices) devices")
        var msg = "  messages: \(messagesSent) sent, \(accepted) accepted, \(rejected) rejected, \(delivered) delivered, \(sendFailed) send failures"
        let dropTotal = dropped.values.reduce(0, +)
        if dropTotal > 0 {
            msg += ", \(dropTotal) dropped (" + dropped.keys.sorted().map { "\($0) \(dropped[$0]!)" }.joined(separator: ", ") + ")"
        }
        lines.append(msg)
        lines.append("  network: \(connectionsOpened) connections, \(reconnects) reconnects, \(refused) refused; \(faults) faults, \(appKills) app kills, \(serverCrashes) server crashes")
        lines.append("  liveness: " + (convergedAt.map { "converged at \($0)" } ?? "did not converge (\(stopReason))"))
        if violations.isEmpty {
            lines.append("  oracles: no violations")
        } else {
            lines.append("  oracles: \(violations.count) violation(s)")
            for v in violations.prefix(5) { lines.append(v.text.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")) }
        }
        lines.append("  digest \(digest)")
        return lines.joined(separator: "\n")
    }
}

func fmt(_ x: Double, _ digits: Int) -> String {
    // Locale-free fixed-point formatting without String(format:).
    let scale = [1.0, 10, 100, 1000, 10000][min(digits, 4)]
    let v = (x * scale).rounded() / scale
    if digits == 0 { return String(Int64(v)) }
    var s = String(v)
    if let dot = s.firstIndex(of: ".") {
        let decimals = s.distance(from: dot, to: s.endIndex) - 1
        if decimals < digits { s += String(repeating: "0", count: digits - decimals) }
    }
    return s
}
