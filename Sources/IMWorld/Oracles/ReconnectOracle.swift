import IMClient
import IMServer
import IMWire
import SimKernel

/// Reconnect, heartbeat and stop rules (im-semantics §5), measured on each device's stream by
/// the device-local `ReconnectRule` — the same rule `imsim replay` applies to a capture. The
/// world feeds it the inputs, the frames read (decoded by the suite from the delivered bytes),
/// the effects and callbacks, in simulated time; the SDK's timers run on the device's monotonic
/// clock, so the rule converts the schedule with the device's drift. (The kick policy of a retry
/// is ReconnectKickPolicyOracle's.)
final class ReconnectOracle: Oracle {
    let name = "reconnect"
    let hooks: OracleHooks = [.dispatching, .input, .applied, .note]
    unowned let suite: OracleSuite
    private var rules: [ReconnectRule?] = []
    /// (time, device) of every deadline a rule announced, sorted by time; an entry re-checks its
    /// device's rule, so stale entries are harmless.
    private var deadlines: [(SimTime, Int)] = []
    private var watched: [Int64?] = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ world: World, _ d: Int) {
        while rules.count <= d { rules.append(nil); watched.append(nil) }
        if rules[d] == nil { rules[d] = ReconnectRule(scenario: world.scenario.client, driftPpm: world.devices[d].clock.driftPpm) }
    }

    private func rewatch(_ d: Int) {
        guard let next = rules[d]?.nextDeadline, watched[d] != next else { return }
        watched[d] = next
        let t = SimTime(nanoseconds: next)
        var lo = 0, hi = deadlines.count
        while lo < hi { let mid = (lo + hi) / 2; if deadlines[mid].0 <= t { lo = mid + 1 } else { hi = mid } }
        deadlines.insert((t, d), at: lo)
    }

    private func report(_ d: Int, _ findings: [ReconnectRule.Finding]) {
        for f in findings {
            suite.report(name, device: d, f.detail { SimTime(nanoseconds: $0).description })
        }
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(world, d)
        rules[d]!.input(input, inbound: suite.inboundFrames, at: world.now.nanoseconds)
        rewatch(d)
    }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        ensure(world, d)
        let found = rules[d]!.effects(effects.effects, at: world.now.nanoseconds)
        report(d, found)
        rewatch(d)
    }

    func world(_ world: World, note: WorldNote) {
        if case .lifecycle(let d, .killed) = note {
            ensure(world, d)
            rules[d]!.appRestarted()
        }
    }

    func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        while let first = deadlines.first, first.0 < event.time {
            deadlines.removeFirst()
            let d = first.1
            if watched[d] == first.0.nanoseconds { watched[d] = nil }
            guard world.isRunning(device: d) else { continue }
            report(d, rules[d]!.due(at: event.time.nanoseconds))
            rewatch(d)
        }
    }

    func finalCheck(_ world: World) {}
}
