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
    /// The kind of event that fails (the violation's conversation type, or `-`), kept throughout.
    public var eventKind: String
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
    /// What was removed or reduced, in order.
    public var removed: [String]
    /// Why each remaining element is needed: what the run did without it (final pass).
    public var needed: [String]

    public var text: String { ScenarioText.format(json) }
}

/// Progress of a shrink (for the command line).
public struct ShrinkProgress: Sendable {
    public var runs: Int
    public var maxRuns: Int
    public var phase: String
    public var size: ShrinkSize
}

/// What one candidate run did. Codable so a candidate can run in another process (`--jobs`).
public enum ShrinkVerdict: Sendable, Codable, Equatable {
    /// Fails the oracle on the same kind of event, after `events` kernel events; `involvement`
    /// says who acted when (for the focused user cut).
    case fails(Violation, events: UInt64, involvement: Involvement?)
    case passes
    case failsOtherwise(String)
    case doesNotLoad(String)

    var why: String {
        switch self {
        case .fails: "still fails"
        case .passes: "passes"
        case .failsOtherwise(let s): "fails otherwise (\(s))"
        case .doesNotLoad(let s): "does not load (\(s))"
        }
    }
}

/// Delta-debugs a failing scenario to a minimal one that still fails the same oracle on the same
/// kind of event with the same seed. A generated population is first written out as explicit
/// users, groups and rooms (it runs identically, so it is not run again), so users can go one by
/// one; a large world first keeps only the users that acted near the failure. Greedy passes to a
/// fixpoint: the duration (just past the violation, or for a verdict given at the end the heal
/// bisected down to the cause), the random prefix, the users that did nothing near the failure,
/// faults (kinds, then each kind on each device, rates halved, swarm off), workload (kinds off,
/// rates halved), users (ddmin over the list), devices, groups, chatrooms and their members,
/// smaller constants (deadline, history ring, quota, offline kick), the script (ddmin) and step
/// repeats; then a
/// final pass tries each remaining element once more and records why it is needed. Every
/// candidate is a pure function of (scenario, seed): `evaluator` may run a batch in parallel
/// processes, and the result does not depend on how many (the first candidate in order that
/// still fails is kept), unless the run budget runs out.
public final class Shrinker {
    public let seed: UInt64
    public let maxRuns: Int
    public private(set) var oracle: String
    public private(set) var eventKind = "-"
    private var current: JSONValue
    private var currentResult: Outcome
    private var cache: [String: ShrinkVerdict] = [:]
    public private(set) var runs = 0
    private let scenarioArgument: String
    private var progress: (ShrinkProgress) -> Void = { _ in }
    private var phase = "start"
    private var removed: [String] = []
    /// Runs candidates; the default runs them one after another in this process.
    public var evaluator: ([JSONValue]) -> [ShrinkVerdict]
    /// Candidates handed to `evaluator` at once (the number of parallel jobs).
    public var batchSize = 1

    struct Outcome {
        var violation: Violation
        var events: UInt64
        var involvement: Involvement?
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
        let arg = scenarioArgument
        evaluator = { list in list.map { Shrinker.evaluate($0, seed: seed, oracle: oracle, eventKind: nil, scenarioArgument: arg) } }
        // The first run decides the oracle and the event kind (when not given) and must fail.
        guard case .fails(let v, let events, let involvement) = Self.evaluate(json, seed: seed, oracle: oracle, eventKind: nil,
                                                                              scenarioArgument: scenarioArgument) else {
            throw Failure.doesNotFail(seed: seed, oracle: oracle)
        }
        runs = 1
        self.oracle = v.oracle
        eventKind = Self.eventKind(v)
        let (o, k) = (self.oracle, eventKind)
        evaluator = { list in list.map { Shrinker.evaluate($0, seed: seed, oracle: o, eventKind: k, scenarioArgument: arg) } }
        currentResult = Outcome(violation: v, events: events, involvement: involvement)
        cache[Self.key(json)] = .fails(v, events: events, involvement: involvement)
    }

    /// The kind of event a violation is about: its conversation type (`private`, `group`,
    /// `chatroom`, …) or `-`.
    public static func eventKind(_ v: Violation) -> String {
        guard let c = v.conversation, let colon = c.firstIndex(of: ":") else { return "-" }
        return String(c[..<colon])
    }

    /// Runs the passes until none helps or the budget is spent.
    public func run(progress: @escaping (ShrinkProgress) -> Void = { _ in }) -> ShrinkResult {
        self.progress = progress
        let original = current
        let before = size(original, currentResult)
        phase = "population"
        if let expanded = Self.expandingPopulation(current, seed: seed) {
            // The written-out population runs identically (same streams, same digest:
            // ShrinkerPassesTests.anExpandedPopulationRunsIdentically), so it is not run again —
            // in a 1,000-user world that run would cost as much as the whole rest.
            cache[Self.key(expanded)] = .fails(currentResult.violation, events: currentResult.events,
                                               involvement: currentResult.involvement)
            _ = attempt([expanded], names: ["population written out as explicit users, groups and chatrooms"])
        }
        // A large world: first keep only the users that acted near the failure, so that every
        // later candidate is a small run.
        if ScenarioEdits.users(current).count >= Self.largeWorld { _ = focusUsers() }
        var needed: [String] = []
        var finalRound = 0
        while runs < maxRuns {
            var changed = true
            while changed && runs < maxRuns {
                changed = false
                // Cheap, big cuts first: the duration (every passing candidate runs to the end),
                // the users that did nothing near the failure, whole fault and workload kinds,
                // users (ddmin), then smaller things.
                changed = pass("duration", durationEdits) || changed
                changed = earlierHeal() || changed
                changed = randomPrefix() || changed
                changed = focusUsers() || changed
                changed = pass("faults", faultEdits) || changed
                changed = pass("workload", workloadEdits) || changed
                changed = ddminUsers() || changed
                changed = pass("devices", deviceEdits) || changed
                changed = pass("places", placeEdits) || changed
                changed = pass("constants", constantEdits) || changed
                changed = pass("population", populationEdits) || changed
                changed = ddminScript() || changed
                changed = pass("step repeats", repeatEdits) || changed
                // Many candidates each: only once the cheap passes find nothing.
                if !changed { changed = pass("fault instances", faultInstanceEdits) }
                if !changed { changed = pass("rates", rateEdits) }
            }
            // One more try for each remaining element; what still cannot go says why.
            phase = "final"
            finalRound += 1
            needed = []
            var again = false
            for (name, candidate) in elementRemovals(current) where runs < maxRuns {
                let k = Self.key(candidate)
                if k == Self.key(current) { continue }
                if attempt([candidate], names: [name]) != nil { again = true; break }
                needed.append("\(name): without it the run \(cache[k]?.why ?? "was not tried (budget)")")
            }
            if !again || finalRound >= 4 { break }
        }
        // Say what the file is.
        let note = "Shrunk by imsim shrink (seed \(seed), oracle \(oracle)): \(before.scriptSteps) → \(ScenarioEdits.size(current).steps) script steps."
        let described = (current["description"]?.stringValue).map { $0 + " " + note } ?? note
        current = current.setting("description", .string(described))
        return ShrinkResult(oracle: oracle, eventKind: eventKind, seed: seed, before: before, after: size(current, currentResult),
                            json: current, violation: currentResult.violation, runs: runs, budgetExhausted: runs >= maxRuns,
                            removed: removed, needed: needed)
    }

    // MARK: - Testing a candidate

    private static func key(_ v: JSONValue) -> String { v.serializedString }

    /// One candidate run, stopped at its first violation. Public so a child process can run it.
    public static func evaluate(_ v: JSONValue, seed: UInt64, oracle: String?, eventKind: String?,
                                scenarioArgument: String) -> ShrinkVerdict {
        let scenario: Scenario
        do { scenario = try ScenarioText.scenario(v) } catch { return .doesNotLoad("\(error)") }
        var o = OracleOptions(scenarioArgument: scenarioArgument)
        // Liveness alone converges as with every oracle: the suite keeps the convergence
        // trackers (no-loss, recall, storage) running whatever is enabled.
        if let oracle { o.enabled = [oracle] }
        o.stopAtFirstViolation = true
        let run: ScenarioRun
        let recorder = InvolvementRecorder()
        do { run = try ScenarioRun(scenario: scenario, seed: seed, scenarioArgument: scenarioArgument, oracles: o, observers: [recorder]) } catch {
            return .doesNotLoad("\(error)")
        }
        run.run()
        guard let first = run.violations.first else { return .passes }
        guard let v = run.violations.first(where: { oracle == nil || $0.oracle == oracle }) else {
            return .failsOtherwise(first.oracle)
        }
        if let eventKind, Self.eventKind(v) != eventKind {
            return .failsOtherwise("\(v.oracle) on a \(Self.eventKind(v)) event, not \(eventKind)")
        }
        return .fails(v, events: run.world.sim.counters.eventsDispatched, involvement: recorder.involvement(run.world, violation: v))
    }

    /// Keeps the first of `candidates` (in order) that still fails; returns its index. The
    /// uncached ones are run in batches of `batchSize` (in parallel when `evaluator` does so).
    @discardableResult
    private func attempt(_ candidates: [JSONValue], names: [String]? = nil) -> Int? {
        let currentKey = Self.key(current)
        var i = 0
        while i < candidates.count {
            let k = Self.key(candidates[i])
            if k == currentKey { i += 1; continue }
            if let cached = cache[k] {
                if case .fails(let v, let events, let inv) = cached { return accept(i, candidates[i], Outcome(violation: v, events: events, involvement: inv), names) }
                i += 1
                continue
            }
            guard runs < maxRuns else { return nil }
            // The next batch of uncached, distinct candidates from i on.
            var batch: [Int] = []
            var seen: Set<String> = []
            var j = i
            while j < candidates.count && batch.count < max(1, min(batchSize, maxRuns - runs)) {
                let kj = Self.key(candidates[j])
                if kj != currentKey && cache[kj] == nil && !seen.contains(kj) { batch.append(j); seen.insert(kj) }
                j += 1
            }
            let verdicts = evaluator(batch.map { candidates[$0] })
            for (b, verdict) in zip(batch, verdicts) {
                runs += 1
                cache[Self.key(candidates[b])] = verdict
            }
            let best = batch.first { if case .fails = cache[Self.key(candidates[$0])]! { true } else { false } }
            progress(ShrinkProgress(runs: runs, maxRuns: maxRuns, phase: phase,
                                    size: size(best.map { candidates[$0] } ?? current,
                                               best.flatMap { outcome(cache[Self.key(candidates[$0])]!) } ?? currentResult)))
            // Candidates before the batch's first failure that were cached all passed: loop on
            // from i so a cached earlier failure (if any) still wins in order.
            for x in i..<j {
                if case .fails(let v, let events, let inv)? = cache[Self.key(candidates[x])], Self.key(candidates[x]) != currentKey {
                    return accept(x, candidates[x], Outcome(violation: v, events: events, involvement: inv), names)
                }
            }
            i = j
        }
        return nil
    }

    private func outcome(_ v: ShrinkVerdict) -> Outcome? {
        if case .fails(let violation, let events, let inv) = v { return Outcome(violation: violation, events: events, involvement: inv) }
        return nil
    }

    private func accept(_ i: Int, _ candidate: JSONValue, _ o: Outcome, _ names: [String]?) -> Int {
        current = candidate
        currentResult = o
        if let names, i < names.count { removed.append(names[i]) } else { removed.append(phase) }
        return i
    }

    /// Tries the edits (recomputed from the current scenario after every success).
    private func pass(_ name: String, _ edits: (JSONValue) -> [(String, JSONValue)]) -> Bool {
        phase = name
        var any = false
        while runs < maxRuns {
            let list = edits(current)
            guard attempt(list.map(\.1), names: list.map { "\(name): \($0.0)" }) != nil else { break }
            any = true
        }
        return any
    }

    // MARK: - Edits

    /// The population written out (nil without one).
    static func expandingPopulation(_ v: JSONValue, seed: UInt64) -> JSONValue? {
        guard v["population"] != nil, let s = try? ScenarioText.scenario(v),
              let p = try? s.expandedPopulation(seed: seed) else { return nil }
        var out = v.setting("population", nil)
        let users = p.users.map { u in
            JSONValue.object(["id": .string(u.id),
                              "devices": .array(u.devices.map { .object(["id": .string($0.id), "platform": .string($0.platform)]) })])
        }
        out = out.setting("users", .array(ScenarioEdits.array(v, "users") + users))
        if !p.groups.isEmpty {
            let groups = p.groups.map { JSONValue.object(["id": .string($0.id), "members": .array($0.members.map { .string($0) })]) }
            out = out.setting("groups", .array(ScenarioEdits.array(v, "groups") + groups))
        }
        if !p.chatrooms.isEmpty {
            let rooms = p.chatrooms.map {
                JSONValue.object(["id": .string($0.id), "members": .array($0.members.map { .string($0) }), "joinCount": .int($0.joinCount)])
            }
            out = out.setting("chatrooms", .array(ScenarioEdits.array(v, "chatrooms") + rooms))
        }
        return out
    }

    private func faultEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        if v["swarm"]?.boolValue == true { out.append(("swarm off", v.setting("swarm", .bool(false)))) }
        guard let faults = v["faults"] else { return out }
        out.append(("every random fault", v.setting("faults", nil)))
        let kinds = ScenarioEdits.objects(faults["random"] ?? .null)
        for k in kinds {
            let rest = kinds.filter { $0.key != k.key }
            out.append(("\(k.key)", v.setting("faults", faults.setting("random", .object(rest)))))
        }
        return out
    }

    /// Each fault instance: a kind on one device (each device's chain is its own stream, so the
    /// others keep their schedules).
    private func faultInstanceEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        guard let faults = v["faults"] else { return out }
        let kinds = ScenarioEdits.objects(faults["random"] ?? .null)
        let allDevices = ScenarioEdits.users(v).flatMap(\.devices)
        for k in kinds where FaultKind(rawValue: k.key)?.isPerDevice ?? false {
            let on = k.value["devices"]?.arrayValue?.compactMap(\.stringValue) ?? allDevices
            guard on.count > 1 || k.value["devices"] == nil else { continue }
            for d in on.reversed() {
                let list = on.filter { $0 != d }
                let edited = kinds.map { $0.key == k.key ? JSONValue.Member($0.key, $0.value.setting("devices", .array(list.map { .string($0) }))) : $0 }
                out.append(("\(k.key) on \(d)", v.setting("faults", faults.setting("random", .object(edited)))))
            }
        }
        return out
    }

    /// Fault and workload rates halved.
    private func rateEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        let faults = v["faults"] ?? .object([])
        let kinds = ScenarioEdits.objects(faults["random"] ?? .null)
        for k in kinds {
            guard let rate = k.value["rate"]?.stringValue, let half = ScenarioEdits.halvedRate(rate) else { continue }
            let edited = kinds.map { $0.key == k.key ? JSONValue.Member($0.key, $0.value.setting("rate", .string(half))) : $0 }
            out.append(("\(k.key) rate halved to \(half)", v.setting("faults", faults.setting("random", .object(edited)))))
        }
        guard let w = v["workload"] else { return out }
        for f in ScenarioEdits.objects(w) where f.key.hasSuffix("Rate") {
            if let r = f.value.stringValue, let half = ScenarioEdits.halvedRate(r) {
                out.append(("\(f.key) halved to \(half)", v.setting("workload", w.setting(f.key, .string(half)))))
            }
        }
        if let b = w["bursts"], let r = b["rate"]?.stringValue, let half = ScenarioEdits.halvedRate(r) {
            out.append(("burst rate halved to \(half)", v.setting("workload", w.setting("bursts", b.setting("rate", .string(half))))))
        }
        return out
    }

    private func workloadEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        guard let w = v["workload"] else { return [] }
        var out: [(String, JSONValue)] = [("the whole workload", v.setting("workload", nil))]
        let fields = ScenarioEdits.objects(w)
        for f in fields where f.key.hasSuffix("Rate") || f.key == "bursts" || f.key.hasSuffix("Probability") {
            out.append(("\(f.key)", v.setting("workload", w.setting(f.key, nil))))
        }
        return out
    }

    private func userEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        ScenarioEdits.users(v).reversed().map { ("user \($0.id)", ScenarioEdits.removingUser(v, $0.id)) }
    }

    /// ddmin over the users: halves, quarters, … of the list, then single users (users named
    /// nowhere else go together, which is what makes a 1,000-member room shrinkable).
    private func ddminUsers() -> Bool {
        phase = "users (ddmin)"
        var ids = ScenarioEdits.users(current).map(\.id)
        guard ids.count >= 2 else { return false }
        let start = ids.count
        var n = 2
        while ids.count >= 2 && runs < maxRuns {
            let chunk = (ids.count + n - 1) / n
            let chunks = Swift.stride(from: 0, to: ids.count, by: chunk).map { Array(ids[$0..<min($0 + chunk, ids.count)]) }
            // Remove one chunk (keep the complement), largest removals first.
            let candidates = chunks.map { ScenarioEdits.removingUsers(current, Set($0)) }
            let names = chunks.map { c in "users: " + (c.count == 1 ? "user \(c[0])" : "\(c.count) users (\(c.first!)…\(c.last!))") }
            if let i = attempt(candidates, names: names) {
                let gone = Set(chunks[i])
                ids.removeAll { gone.contains($0) }
                n = max(n - 1, 2)
            } else {
                if n >= ids.count { break }
                n = min(ids.count, 2 * n)
            }
        }
        return ScenarioEdits.users(current).count < start
    }

    private func deviceEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        for u in ScenarioEdits.users(v) where u.devices.count > 1 {
            for d in u.devices.reversed() { out.append(("device \(d)", ScenarioEdits.removingDevice(v, user: u.id, device: d))) }
        }
        // A user the failure needs only as someone to write to (a peer, a member) does not need
        // its devices online before it: each device, the only one included, starts just after
        // the failure (its connect, pull and heartbeats before it go).
        let after = currentResult.violation.timeNanoseconds / 1_000_000_000 + 1
        for u in ScenarioEdits.users(v) {
            for d in u.devices.reversed() {
                if let late = ScenarioEdits.startingDevice(v, user: u.id, device: d, atSeconds: after) {
                    out.append(("device \(d) starts after the failure (\(SimDuration.seconds(after)))", late))
                }
            }
        }
        return out
    }

    /// The network's own events: writes split into several segments and refused connection
    /// attempts are extra events the failure may not need (scenario-wide and per device).
    private func networkEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        guard let now = try? ScenarioText.scenario(v) else { return out }
        for (key, label) in [("splitProbability", "split writes"), ("refuseProbability", "refused connects")] {
            let edited = ScenarioEdits.settingNetwork(v, key, .int(0))
            // Only where it changes something (the scenario may already say 0, or not need to).
            if let e = try? ScenarioText.scenario(edited), e != now { out.append(("network: no \(label)", edited)) }
        }
        return out
    }

    private func placeEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        for key in ["chatrooms", "groups"] {
            for p in ScenarioEdits.array(v, key).reversed() {
                if let id = p["id"]?.stringValue { out.append(("\(key == "groups" ? "group" : "chatroom") \(id)", ScenarioEdits.removingPlace(v, key: key, id: id))) }
            }
            if v[key] != nil && ScenarioEdits.array(v, key).isEmpty { out.append(("empty \(key)", v.setting(key, nil))) }
        }
        // Smaller rooms and groups (groups keep at least one member): half the members, then each.
        for key in ["groups", "chatrooms"] {
            let places = ScenarioEdits.array(v, key)
            for (i, p) in places.enumerated() {
                let members = p["members"]?.arrayValue ?? []
                guard members.count > (key == "groups" ? 1 : 0) else { continue }
                let id = p["id"]?.stringValue ?? "?"
                if members.count >= 4 {
                    var edited = places
                    edited[i] = p.setting("members", .array(Array(members.prefix(members.count / 2))))
                    out.append(("half the members of \(id)", v.setting(key, .array(edited))))
                }
                for m in members.indices.reversed() {
                    var edited = places
                    var list = members
                    list.remove(at: m)
                    edited[i] = p.setting("members", .array(list))
                    out.append(("\(members[m].stringValue ?? "?") from \(id)", v.setting(key, .array(edited))))
                }
            }
        }
        return out
    }

    private func populationEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        guard let p = v["population"] else { return [] }
        var out: [(String, JSONValue)] = []
        for field in ["users", "groups", "chatrooms", "chatroomMembers", "groupSize"] {
            guard let n = p[field]?.int64Value, n > (field == "users" ? 1 : 0) else { continue }
            out.append(("population \(field) \(n) → \(n / 2)", v.setting("population", p.setting(field, .int(n / 2)))))
        }
        if let f = p["secondDeviceFraction"], f != .number("0") {
            out.append(("second devices", v.setting("population", p.setting("secondDeviceFraction", .int(0)))))
        }
        return out
    }

    private func repeatEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        let steps = ScenarioEdits.array(v, "script")
        var out: [(String, JSONValue)] = []
        for (i, s) in steps.enumerated() {
            guard let n = s["count"]?.int64Value, n > 1 else { continue }
            var edited = steps
            edited[i] = n / 2 > 1 ? s.setting("count", .int(n / 2)) : s.setting("count", nil).setting("interval", nil)
            out.append(("step \(i + 1) repeats \(n) → \(max(1, n / 2))", v.setting("script", .array(edited))))
        }
        return out
    }

    private func durationEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        // Just past the failure (whole seconds), the liveness phase following as before.
        let failureNs = currentResult.violation.timeNanoseconds
        let seconds = failureNs / 1_000_000_000 + 1
        guard let d = v["duration"]?.stringValue, let dur = try? SimDuration(parsing: d), dur > .seconds(seconds) else { return [] }
        // Script steps after the new end never run; `ending` drops them so the file says so.
        return [("duration \(d) → \(SimDuration.seconds(seconds))", Self.ending(v, atSeconds: seconds))]
    }

    /// The random prefix: workload and fault occurrences before `randomFrom` are skipped (their
    /// chains keep times and details, so the later ones run as before). Bisects, in whole
    /// seconds, for the latest start that still fails: most of a random run's events are the
    /// traffic before the few occurrences the failure needs.
    private func randomPrefix() -> Bool {
        phase = "random prefix"
        guard current["workload"] != nil || current["faults"]?["random"] != nil else { return false }
        let start = current["randomFrom"]?.stringValue.flatMap { try? SimDuration(parsing: $0) } ?? .zero
        var lo = start.nanoseconds / 1_000_000_000
        var hi = currentResult.violation.timeNanoseconds / 1_000_000_000
        var any = false
        while hi - lo > 1 && runs < maxRuns {
            let mid = lo + (hi - lo) / 2
            let candidate = current.setting("randomFrom", .string(SimDuration.seconds(mid).description))
            if attempt([candidate], names: ["random prefix: workload and faults before \(SimDuration.seconds(mid)) skipped"]) != nil {
                lo = mid
                any = true
                // The failure may have moved; never past it.
                hi = max(lo, min(hi, currentResult.violation.timeNanoseconds / 1_000_000_000))
            } else {
                hi = mid
            }
        }
        return any
    }

    /// Users from which a world counts as large (the focused cut comes first).
    static let largeWorld = 50

    /// Keeps only the users that acted (an app call, a fault on one of their devices) within a
    /// short window before the failure, and those the violation names; the smallest window that
    /// still fails wins. Removed users leave the others' streams as they were (Docs/world.md),
    /// so a failure that needs few actors keeps failing without the bystanders.
    private func focusUsers() -> Bool {
        phase = "users (focused)"
        guard let inv = currentResult.involvement else { return false }
        let ids = ScenarioEdits.users(current).map(\.id)
        guard ids.count >= 2 else { return false }
        let reference = min(currentResult.violation.timeNanoseconds, inv.healNanoseconds)
        var candidates: [JSONValue] = []
        var names: [String] = []
        var seen: Set<Int> = []
        for window in [1, 5, 30, 120] as [Int64] {
            let keep = inv.users(activeSince: reference - window * 1_000_000_000)
            let drop = ids.filter { !keep.contains($0) }
            guard !drop.isEmpty, drop.count < ids.count, seen.insert(drop.count).inserted else { continue }
            candidates.append(ScenarioEdits.removingUsers(current, Set(drop)))
            names.append("users (focused): \(drop.count) users that did nothing in the \(window) s before the failure")
        }
        return attempt(candidates, names: names) != nil
    }

    /// A verdict given at the end (no-loss, liveness) comes long after its cause: bisects, in
    /// whole seconds, for the earliest heal (the duration) that still fails. The lower bound is
    /// the latest time on the violation's message path (the message must have been sent).
    private func earlierHeal() -> Bool {
        phase = "duration (earlier heal)"
        guard let inv = currentResult.involvement, currentResult.violation.timeNanoseconds >= inv.healNanoseconds else { return false }
        var hi = inv.healNanoseconds / 1_000_000_000
        let from = current["randomFrom"]?.stringValue.flatMap { try? SimDuration(parsing: $0) } ?? .zero
        var lo = max(Self.latestPathTime(currentResult.violation) / 1_000_000_000, from.nanoseconds / 1_000_000_000)
        var any = false
        while hi - lo > 1 && runs < maxRuns {
            let mid = lo + (hi - lo) / 2
            if attempt([Self.ending(current, atSeconds: mid)], names: ["duration: heal at \(SimDuration.seconds(mid)) (the verdict comes at the end)"]) != nil {
                hi = mid
                any = true
            } else {
                lo = mid
            }
        }
        return any
    }

    /// The latest `t=…s` on a violation's message path, in nanoseconds (0 without one).
    static func latestPathTime(_ v: Violation) -> Int64 {
        var latest: Int64 = 0
        for line in v.path {
            let t = line.drop { $0 == " " }
            guard t.hasPrefix("t="), let end = t.firstIndex(of: "s"),
                  let seconds = Double(t[t.index(t.startIndex, offsetBy: 2)..<end]) else { continue }
            latest = max(latest, Int64(seconds * 1e9))
        }
        return latest
    }

    /// The scenario ending (and healing) at a whole second; script steps after it dropped.
    static func ending(_ v: JSONValue, atSeconds seconds: Int64) -> JSONValue {
        var out = v.setting("duration", .string(SimDuration.seconds(seconds).description))
        if let l = v["liveness"], l["healAt"] != nil { out = out.setting("liveness", l.setting("healAt", nil)) }
        let keep = ScenarioEdits.array(out, "script").filter {
            guard let at = $0["at"]?.stringValue, let t = try? SimDuration(parsing: at) else { return true }
            return t <= .seconds(seconds)
        }
        return out.setting("script", .array(keep))
    }

    /// Smaller constants: the liveness deadline, and the chatroom constants a failure may need
    /// to reach (the history ring, the 200 ms quota, the offline kick's message count) — a
    /// smaller ring or quota is reached by fewer messages, so fewer users and less traffic.
    private func constantEdits(_ v: JSONValue) -> [(String, JSONValue)] {
        var out = networkEdits(v)
        let liveness = v["liveness"] ?? .object([])
        let deadline = liveness["deadline"]?.stringValue.flatMap { try? SimDuration(parsing: $0) } ?? .minutes(3)
        if deadline >= .seconds(20) {
            let half = SimDuration.seconds(deadline.nanoseconds / 2_000_000_000)
            out.append(("liveness deadline \(deadline) → \(half)", v.setting("liveness", liveness.setting("deadline", .string(half.description)))))
        }
        guard !ScenarioEdits.array(v, "chatrooms").isEmpty else { return out }
        let server = v["server"] ?? .object([])
        let room = server["chatroom"] ?? .object([])
        func with(_ r: JSONValue) -> JSONValue { v.setting("server", server.setting("chatroom", r)) }
        func int(_ key: String, _ fallback: Int64) -> Int64 { room[key]?.int64Value ?? fallback }
        let ring = int("historySize", 50)
        if ring > 1 { out.append(("chatroom history ring \(ring) → \(ring / 2)", with(room.setting("historySize", .int(ring / 2))))) }
        let capacity = int("quotaCapacity", 40), reserved = int("quotaReservedHigh", 20)
        if capacity >= 4 && reserved >= 2 {
            out.append(("chatroom quota \(capacity)/\(reserved) → \(capacity / 2)/\(reserved / 2) per window",
                        with(room.setting("quotaCapacity", .int(capacity / 2)).setting("quotaReservedHigh", .int(reserved / 2)))))
        }
        let kick = int("offlineKickMessages", 31)
        if kick > 2 { out.append(("offline kick after \(kick) → \(kick / 2 + 1) messages", with(room.setting("offlineKickMessages", .int(kick / 2 + 1))))) }
        return out
    }

    /// Every remaining element, removed alone (the final pass).
    private func elementRemovals(_ v: JSONValue) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        out += userEdits(v)
        out += deviceEdits(v)
        for key in ["chatrooms", "groups"] {
            for p in ScenarioEdits.array(v, key) {
                if let id = p["id"]?.stringValue { out.append(("\(key == "groups" ? "group" : "chatroom") \(id)", ScenarioEdits.removingPlace(v, key: key, id: id))) }
            }
        }
        if let faults = v["faults"] {
            let kinds = ScenarioEdits.objects(faults["random"] ?? .null)
            for k in kinds {
                out.append(("fault \(k.key)", v.setting("faults", faults.setting("random", .object(kinds.filter { $0.key != k.key })))))
            }
        }
        if let w = v["workload"] {
            for f in ScenarioEdits.objects(w) where f.key.hasSuffix("Rate") || f.key == "bursts" || f.key.hasSuffix("Probability") {
                out.append(("workload \(f.key)", v.setting("workload", w.setting(f.key, nil))))
            }
        }
        let steps = ScenarioEdits.array(v, "script")
        for i in steps.indices {
            var rest = steps
            rest.remove(at: i)
            let what = [steps[i]["at"]?.stringValue, steps[i]["device"]?.stringValue, steps[i]["action"]?.stringValue].compactMap { $0 }
            out.append(("script step \(i + 1) (\(what.joined(separator: " ")))", v.setting("script", .array(rest))))
        }
        return out
    }

    /// ddmin (Zeller) over the script steps.
    private func ddminScript() -> Bool {
        phase = "script (ddmin)"
        var items = ScenarioEdits.array(current, "script")
        guard !items.isEmpty else { return false }
        let start = items.count
        func with(_ list: [JSONValue]) -> JSONValue { current.setting("script", .array(list)) }
        if attempt([with([])], names: ["the whole script"]) != nil { return true }
        var n = 2
        while items.count >= 2 && runs < maxRuns {
            let chunk = (items.count + n - 1) / n
            let chunks = Swift.stride(from: 0, to: items.count, by: chunk).map { Array(items[$0..<min($0 + chunk, items.count)]) }
            var reduced = false
            for c in chunks where attempt([with(c)], names: ["script: all but \(c.count) steps"]) != nil {
                items = c
                n = 2
                reduced = true
                break
            }
            if !reduced {
                for i in chunks.indices {
                    let complement = chunks.enumerated().filter { $0.offset != i }.flatMap(\.element)
                    if attempt([with(complement)], names: ["script: \(items.count - complement.count) steps"]) != nil {
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
        if items.count == 1 { _ = attempt([with([])], names: ["the last script step"]) }
        return ScenarioEdits.array(current, "script").count < start
    }

    private func size(_ v: JSONValue, _ o: Outcome) -> ShrinkSize {
        let s = ScenarioEdits.size(v)
        return ShrinkSize(scriptSteps: s.steps, users: s.users, devices: s.devices, groups: s.groups, chatrooms: s.chatrooms,
                          workloadRates: s.workload, faultKinds: s.faults, eventsUntilFailure: o.events, failureTime: o.violation.time)
    }
}
