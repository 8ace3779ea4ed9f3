import Foundation
import IMWire
import IMWorld
import SimKernel

/// The size of a scenario and of its failing run.
public struct ShrinkSize: Sendable, Codable, Equatable {
    public var scriptSteps: Int
    public var users: Int
    public var devices: Int
    public var groups: Int
    public var chatrooms: Int
    /// Workload rate fields set.
    public var workloadRates: Int
    /// Random fault kinds enabled.
    public var faultKinds: Int
    /// Kernel events dispatched until the violation.
    public var eventsUntilFailure: UInt64
    public var failureTime: String

    public var text: String {
        "\(scriptSteps) script steps, \(users) users, \(devices) devices, \(groups) groups, \(chatrooms) chatrooms, " +
            "\(workloadRates) workload rates, \(faultKinds) fault kinds; fails after \(eventsUntilFailure) events (t=\(failureTime))"
    }
}

/// What `shrink` found.
public struct ShrinkResult: Sendable {
    public var oracle: String
    public var seed: UInt64
    public var before: ShrinkSize
    public var after: ShrinkSize
    /// The minimal scenario (JSON as written) and its violation.
    public var json: JSONValue
    public var violation: Violation
    /// Scenario runs spent (cache hits not counted).
    public var runs: Int
    /// The run budget ran out before no edit helped any more.
    public var budgetExhausted: Bool

    public var text: String { ScenarioText.format(json) }
}

/// Progress of a shrink (for the command line).
public struct ShrinkProgress: Sendable {
    public var runs: Int
    public var maxRuns: Int
    public var phase: String
    public var size: ShrinkSize
}

/// Delta-debugs a failing scenario to a minimal one that still fails the same oracle with the
/// same seed: ddmin over the script steps; greedy removal of the workload (rates zeroed, then
/// halved), the random faults (kinds off, rates halved, swarm off), users and extra devices
/// (with everything that names them), groups and chatrooms, population size and the duration.
/// Every candidate is a normal `ScenarioRun` with the oracle on, stopped at its first violation;
/// the total number of runs is bounded. Deterministic: the same input, seed and budget give the
/// same result.
public final class Shrinker {
    public let seed: UInt64
    public let maxRuns: Int
    public private(set) var oracle: String
    private var current: JSONValue
    private var currentResult: Outcome
    private var cache: [String: Outcome?] = [:]
    public private(set) var runs = 0
    private let scenarioArgument: String
    private var progress: (ShrinkProgress) -> Void = { _ in }
    private var phase = "start"

    struct Outcome {
        var violation: Violation
        var events: UInt64
    }

    public enum Failure: Error, CustomStringConvertible {
        case doesNotLoad(String)
        case doesNotFail(seed: UInt64, oracle: String?)
        public var description: String {
            switch self {
            case .doesNotLoad(let m): "the scenario does not load: \(m)"
            case .doesNotFail(let seed, let oracle):
                "the scenario does not fail\(oracle.map { " the \($0) oracle" } ?? "") with seed \(seed): nothing to shrink"
            }
        }
    }

    /// - Parameters:
    ///   - oracle: the oracle that must keep failing (nil: the first violation's, all oracles on).
    public init(scenario json: JSONValue, seed: UInt64, oracle: String? = nil, maxRuns: Int = 400,
                scenarioArgument: String = "shrunk.json") throws {
        self.seed = seed
        self.maxRuns = max(1, maxRuns)
        self.scenarioArgument = scenarioArgument
        current = json
        do { _ = try ScenarioText.scenario(json) } catch { throw Failure.doesNotLoad("\(error)") }
        self.oracle = oracle ?? ""
        // The first run decides the oracle (when not given) and must fail.
        guard let first = Self.evaluate(json, seed: seed, oracle: oracle, scenarioArgument: scenarioArgument) else {
            throw Failure.doesNotFail(seed: seed, oracle: oracle)
        }
        runs = 1
        self.oracle = first.violation.oracle
        currentResult = first
        cache[Self.key(json)] = first
    }

    /// Runs the passes until none helps or the budget is spent.
    public func run(progress: @escaping (ShrinkProgress) -> Void = { _ in }) -> ShrinkResult {
        self.progress = progress
        let original = current
        let before = size(original, currentResult)
        var changed = true
        while changed && runs < maxRuns {
            changed = false
            changed = pass("faults", faultEdits) || changed
            changed = pass("workload", workloadEdits) || changed
            changed = pass("users", userEdits) || changed
            changed = pass("devices", deviceEdits) || changed
            changed = pass("places", placeEdits) || changed
            changed = pass("population", populationEdits) || changed
            changed = ddminScript() || changed
            changed = pass("step repeats", repeatEdits) || changed
            changed = pass("duration", durationEdits) || changed
        }
        // Say what the file is.
        let note = "Shrunk by imsim shrink (seed \(seed), oracle \(oracle)): \(before.scriptSteps) → \(ScenarioEdits.size(current).steps) script steps."
        let described = (current["description"]?.stringValue).map { $0 + " " + note } ?? note
        current = current.setting("description", .string(described))
        return ShrinkResult(oracle: oracle, seed: seed, before: before, after: size(current, currentResult), json: current,
                            violation: currentResult.violation, runs: runs, budgetExhausted: runs >= maxRuns)
    }

    // MARK: - Testing a candidate

    private static func key(_ v: JSONValue) -> String { v.serializedString }

    private static func evaluate(_ v: JSONValue, seed: UInt64, oracle: String?, scenarioArgument: String) -> Outcome? {
        guard let scenario = try? ScenarioText.scenario(v) else { return nil }
        var o = OracleOptions(scenarioArgument: scenarioArgument)
        if let oracle { o.enabled = [oracle] }
        o.stopAtFirstViolation = true
        guard let run = try? ScenarioRun(scenario: scenario, seed: seed, scenarioArgument: scenarioArgument, oracles: o) else { return nil }
        run.run()
        guard let v = run.violations.first(where: { oracle == nil || $0.oracle == oracle }) else { return nil }
        return Outcome(violation: v, events: run.world.sim.counters.eventsDispatched)
    }

    /// Keeps `candidate` if it still fails the oracle.
    private func attempt(_ candidate: JSONValue) -> Bool {
        guard runs < maxRuns else { return false }
        let k = Self.key(candidate)
        if k == Self.key(current) { return false }
        let outcome: Outcome?
        if let cached = cache[k] {
            outcome = cached
        } else {
            runs += 1
            outcome = Self.evaluate(candidate, seed: seed, oracle: oracle, scenarioArgument: scenarioArgument)
            cache[k] = outcome
            progress(ShrinkProgress(runs: runs, maxRuns: maxRuns, phase: phase, size: size(outcome == nil ? current : candidate, outcome ?? currentResult)))
        }
        guard let outcome else { return false }
        current = candidate
        currentResult = outcome
        return true
    }

    /// Tries each edit (recomputed from the current scenario after every success).
    private func pass(_ name: String, _ edits: (JSONValue) -> [JSONValue]) -> Bool {
        phase = name
        var any = false
        var progressMade = true
        while progressMade && runs < maxRuns {
            progressMade = false
            for candidate in edits(current) where attempt(candidate) {
                any = true
                progressMade = true
                break
            }
        }
        return any
    }

    // MARK: - Edits

    private func faultEdits(_ v: JSONValue) -> [JSONValue] {
        var out: [JSONValue] = []
        if v["swarm"]?.boolValue == true { out.append(v.setting("swarm", .bool(false))) }
        guard let faults = v["faults"] else { return out }
        out.append(v.setting("faults", nil))
        let kinds = ScenarioEdits.objects(faults["random"] ?? .null)
        for k in kinds {
            let rest = kinds.filter { $0.key != k.key }
            out.append(v.setting("faults", faults.setting("random", .object(rest))))
        }
        for k in kinds {
            guard let rate = k.value["rate"]?.stringValue, let half = ScenarioEdits.halvedRate(rate) else { continue }
            let edited = kinds.map { $0.key == k.key ? JSONValue.Member($0.key, $0.value.setting("rate", .string(half))) : $0 }
            out.append(v.setting("faults", faults.setting("random", .object(edited))))
        }
        return out
    }

    private func workloadEdits(_ v: JSONValue) -> [JSONValue] {
        guard let w = v["workload"] else { return [] }
        var out = [v.setting("workload", nil)]
        let fields = ScenarioEdits.objects(w)
        for f in fields where f.key.hasSuffix("Rate") || f.key == "bursts" || f.key == "recallProbability" {
            out.append(v.setting("workload", w.setting(f.key, nil)))
        }
        for f in fields where f.key.hasSuffix("Rate") {
            if let r = f.value.stringValue, let half = ScenarioEdits.halvedRate(r) {
                out.append(v.setting("workload", w.setting(f.key, .string(half))))
            }
        }
        return out
    }

    private func userEdits(_ v: JSONValue) -> [JSONValue] {
        ScenarioEdits.users(v).reversed().map { ScenarioEdits.removingUser(v, $0.id) }
    }

    private func deviceEdits(_ v: JSONValue) -> [JSONValue] {
        var out: [JSONValue] = []
        for u in ScenarioEdits.users(v) where u.devices.count > 1 {
            for d in u.devices.reversed() { out.append(ScenarioEdits.removingDevice(v, user: u.id, device: d)) }
        }
        return out
    }

    private func placeEdits(_ v: JSONValue) -> [JSONValue] {
        var out: [JSONValue] = []
        for key in ["chatrooms", "groups"] {
            for p in ScenarioEdits.array(v, key).reversed() {
                if let id = p["id"]?.stringValue { out.append(ScenarioEdits.removingPlace(v, key: key, id: id)) }
            }
            if v[key] != nil && ScenarioEdits.array(v, key).isEmpty { out.append(v.setting(key, nil)) }
        }
        // Fewer members (groups keep at least one).
        for key in ["groups", "chatrooms"] {
            let places = ScenarioEdits.array(v, key)
            for (i, p) in places.enumerated() {
                let members = p["members"]?.arrayValue ?? []
                guard members.count > (key == "groups" ? 1 : 0) else { continue }
                for m in members.indices.reversed() {
                    var edited = places
                    var list = members
                    list.remove(at: m)
                    edited[i] = p.setting("members", .array(list))
                    out.append(v.setting(key, .array(edited)))
                }
            }
        }
        return out
    }

    private func populationEdits(_ v: JSONValue) -> [JSONValue] {
        guard let p = v["population"] else { return [] }
        var out: [JSONValue] = []
        for field in ["users", "groups", "chatrooms", "chatroomMembers", "groupSize"] {
            guard let n = p[field]?.int64Value, n > (field == "users" ? 1 : 0) else { continue }
            out.append(v.setting("population", p.setting(field, .int(n / 2))))
        }
        if let f = p["secondDeviceFraction"], f != .number("0") { out.append(v.setting("population", p.setting("secondDeviceFraction", .int(0)))) }
        return out
    }

    private func repeatEdits(_ v: JSONValue) -> [JSONValue] {
        let steps = ScenarioEdits.array(v, "script")
        var out: [JSONValue] = []
        for (i, s) in steps.enumerated() {
            guard let n = s["count"]?.int64Value, n > 1 else { continue }
            var edited = steps
            edited[i] = n / 2 > 1 ? s.setting("count", .int(n / 2)) : s.setting("count", nil).setting("interval", nil)
            out.append(v.setting("script", .array(edited)))
        }
        return out
    }

    private func durationEdits(_ v: JSONValue) -> [JSONValue] {
        // Just past the failure (whole seconds), the liveness phase following as before.
        let failureNs = currentResult.violation.timeNanoseconds
        let seconds = failureNs / 1_000_000_000 + 1
        guard let d = v["duration"]?.stringValue, let dur = try? SimDuration(parsing: d), dur > .seconds(seconds) else { return [] }
        var out = v.setting("duration", .string(SimDuration.seconds(seconds).description))
        if let l = v["liveness"], l["healAt"] != nil { out = out.setting("liveness", l.setting("healAt", nil)) }
        // Script steps after the new end never run; drop them so the file says so.
        let keep = ScenarioEdits.array(out, "script").filter {
            guard let at = $0["at"]?.stringValue, let t = try? SimDuration(parsing: at) else { return true }
            return t <= .seconds(seconds)
        }
        return [out.setting("script", .array(keep))]
    }

    /// ddmin (Zeller) over the script steps.
    private func ddminScript() -> Bool {
        phase = "script (ddmin)"
        var items = ScenarioEdits.array(current, "script")
        guard !items.isEmpty else { return false }
        let start = items.count
        func with(_ list: [JSONValue]) -> JSONValue { current.setting("script", .array(list)) }
        if attempt(with([])) { return true }
        var n = 2
        while items.count >= 2 && runs < maxRuns {
            let chunk = (items.count + n - 1) / n
            let chunks = stride(from: 0, to: items.count, by: chunk).map { Array(items[$0..<min($0 + chunk, items.count)]) }
            var reduced = false
            for c in chunks where attempt(with(c)) {
                items = c
                n = 2
                reduced = true
                break
            }
            if !reduced {
                for i in chunks.indices {
                    let complement = chunks.enumerated().filter { $0.offset != i }.flatMap(\.element)
                    if attempt(with(complement)) {
                        items = complement
                        n = max(n - 1, 2)
                        reduced = true
                        break
                    }
                }
            }
            if !reduced {
                if n >= items.count { break }
                n = min(items.count, 2 * n)
            }
        }
        if items.count == 1 { _ = attempt(with([])) }
        return ScenarioEdits.array(current, "script").count < start
    }

    private func size(_ v: JSONValue, _ o: Outcome) -> ShrinkSize {
        let s = ScenarioEdits.size(v)
        return ShrinkSize(scriptSteps: s.steps, users: s.users, devices: s.devices, groups: s.groups, chatrooms: s.chatrooms,
                          workloadRates: s.workload, faultKinds: s.faults, eventsUntilFailure: o.events, failureTime: o.violation.time)
    }
}
