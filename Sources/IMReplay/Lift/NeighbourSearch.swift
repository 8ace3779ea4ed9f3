import IMWire
import IMWorld
import SimKernel

/// Explores the neighbourhood of a lifted scenario: the same script in a world whose network
/// jitters (log-normal latency around the lifted one, split writes) and whose links sometimes
/// reset or slow down (random `reset` and `latencySpike` faults) — which moves deliveries, moves
/// reconnects and loses in-flight acks. The neighbours are one scenario file; seed K is
/// neighbour K (`imsim run NEIGHBOURS.json --seed K`).
public enum NeighbourSearch {
    /// The neighbour scenario of a lifted one (same name + `-neighbours`).
    public static func template(of lifted: LiftedScenario) -> JSONValue {
        let l = lifted.oneWayLatencyMs
        let durationMs = lifted.scenario.duration.duration.milliseconds
        let faultEvery = SimDuration.milliseconds(max(10_000, durationMs * 2)).description
        var net = ObjectBuilder()
        net.add("latency", .object(["logNormal": .object(["median": .string(SimDuration.milliseconds(l).description),
                                                          "sigma": .number("0.5"),
                                                          "max": .string(SimDuration.milliseconds(10 * l).description)])]))
        net.add("bandwidthBytesPerSecond", .null)
        net.add("splitProbability", .number("0.1"))
        net.add("connectSetup", lifted.json["network"]?["connectSetup"] ?? .object(["fixed": .string("10ms")]))
        let faults = JSONValue.object([
            "random": .object([
                "reset": .object(["rate": .string("1/\(faultEvery)")]),
                "latencySpike": .object(["rate": .string("1/\(faultEvery)"), "duration": .array([.string("500ms"), .string("5s")]),
                                         "factor": .int(4)]),
            ]),
        ])
        var out = lifted.json
        out = out.setting("name", .string((lifted.json["name"]?.stringValue ?? "lifted") + "-neighbours"))
        out = out.setting("description", .string("Neighbours of \(lifted.json["name"]?.stringValue ?? "a lifted capture"): the lifted script with a jittered network and random resets and latency spikes; seed K is neighbour K."))
        out = out.setting("network", net.value)
        // Faults go before the script and liveness for readability: rebuild the member order.
        guard case .object(let m) = out else { return out }
        var members: [JSONValue.Member] = []
        for x in m {
            if x.key == "script" { members.append(.init("faults", faults)) }
            members.append(x)
        }
        return .object(members)
    }

    /// Runs `scenario` at `seed` with only `oracle` (or all oracles when nil) and returns the
    /// first violation on `device` (any device when nil).
    public static func run(_ scenario: Scenario, seed: UInt64, oracle: String?, device: String?,
                           scenarioArgument: String) -> Violation? {
        var o = OracleOptions(scenarioArgument: scenarioArgument)
        if let oracle, OracleOptions.allNames.contains(oracle) { o.enabled = [oracle] }
        o.stopAtFirstViolation = device == nil
        guard let run = try? ScenarioRun(scenario: scenario, seed: seed, scenarioArgument: scenarioArgument, oracles: o) else { return nil }
        if device != nil {
            // Stop at the first violation on the device of interest (others may come first).
            var found: Violation?
            let probe = ViolationProbe(device: device!) { v in found = v }
            probe.attach(run)
            run.run()
            return found ?? run.violations.first { $0.device == device && (oracle == nil || $0.oracle == oracle) }
        }
        run.run()
        return run.violations.first
    }

    /// Seeds 1…n of the neighbour scenario that reproduce (`oracle`, `device`).
    public static func explore(_ neighbours: Scenario, count: Int, oracle: String?, device: String?, scenarioArgument: String,
                               progress: (Int, Int) -> Void = { _, _ in }) -> [UInt64] {
        var hits: [UInt64] = []
        for i in 1...max(1, count) where count > 0 {
            if run(neighbours, seed: UInt64(i), oracle: oracle, device: device, scenarioArgument: scenarioArgument) != nil {
                hits.append(UInt64(i))
            }
            progress(i, hits.count)
        }
        return hits
    }
}

/// Stops a run at the first violation on one device.
final class ViolationProbe: WorldObserver {
    let device: String
    let found: (Violation) -> Void
    private weak var run: ScenarioRun?
    private var seen = 0

    init(device: String, found: @escaping (Violation) -> Void) {
        self.device = device
        self.found = found
    }

    func attach(_ run: ScenarioRun) {
        self.run = run
        run.world.addObserver(self)
    }

    private func check(_ world: World) {
        guard let run, run.violations.count > seen else { return }
        for v in run.violations[seen...] where v.device == device {
            found(v)
            world.requestStop()
            seen = run.violations.count
            return
        }
        seen = run.violations.count
    }

    func world(_ world: World, dispatching event: SimEvent<WorldEvent>) { check(world) }
    func worldDidFinish(_ world: World) { check(world) }
}
