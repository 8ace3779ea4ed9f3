import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

// Shared helpers for the per-oracle tests: small scripted scenarios, an observer that remembers
// the kernel event index of everything the cores did (so a test can name the event a violation
// must point at, independently of the oracle), and one assertion for the report fields.

/// Two users, one phone each, on fixed 50 ms links (the bug-zoo set-up). `client`, `server` are
/// the JSON objects of the scenario's `client` / `server` fields; `extra` is spliced at the top
/// level (chatrooms, …); `script` is the steps' JSON array body.
func duo(_ name: String, duration: String = "20s", client: String = "{}", server: String = "{}",
         alice: String = #""startAt": "0s""#, bob: String = #""startAt": "0s""#,
         extraUsers: String = "", extra: String = "", script: String, deadline: String = "30s") throws -> Scenario {
    try scenario("""
    {"name": "\(name)", "duration": "\(duration)",
     "users": [{"id": "alice", "devices": [{"id": "alice-phone", \(alice)}]},
               {"id": "bob", "devices": [{"id": "bob-phone", \(bob)}]} \(extraUsers)],
     "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0,
                 "bandwidthBytesPerSecond": null},
     "client": \(client), "server": \(server) \(extra),
     "script": [\(script)],
     "liveness": {"deadline": "\(deadline)"}}
    """)
}

/// `"bugs": [...]` for the client or server object, or nothing.
func bugs(_ ids: [String], _ more: String = "") -> String {
    var fields: [String] = []
    if !more.isEmpty { fields.append(more) }
    if !ids.isEmpty { fields.append("\"bugs\": [" + ids.map { "\"\($0)\"" }.joined(separator: ", ") + "]") }
    return "{" + fields.joined(separator: ", ") + "}"
}

/// Everything the cores said, each with the kernel event index and time it happened at.
final class IndexedTap: WorldObserver {
    struct ClientIn { var index: UInt64; var time: SimTime; var device: Int; var input: ClientInput }
    struct ClientOut { var index: UInt64; var time: SimTime; var device: Int; var effect: ClientEffect }
    struct ServerOut { var index: UInt64; var time: SimTime; var effect: ServerEffect }
    private(set) var index: UInt64 = 0
    private(set) var lastEventTime: SimTime = .zero
    var clientIn: [ClientIn] = []
    var clientOut: [ClientOut] = []
    var serverOut: [ServerOut] = []
    var notes: [(index: UInt64, time: SimTime, note: WorldNote)] = []

    /// Every dispatched kernel event: (index, time).
    var events: [(index: UInt64, time: SimTime)] = []

    func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        index = event.index
        lastEventTime = event.time
        events.append((event.index, event.time))
    }
    /// The first kernel event dispatched at or after `t` (where a deadline check fires).
    func firstEvent(atOrAfter t: SimTime) -> (index: UInt64, time: SimTime)? {
        events.first { $0.time >= t }
    }
    func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {
        clientIn.append(ClientIn(index: index, time: world.now, device: device, input: input))
    }
    func world(_ world: World, device: Int, applied effects: AppliedClientEffects) {
        for e in effects { clientOut.append(ClientOut(index: index, time: world.now, device: device, effect: e)) }
    }
    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        for e in serverEffects { serverOut.append(ServerOut(index: index, time: world.now, effect: e)) }
    }
    func world(_ world: World, note: WorldNote) { notes.append((index, world.now, note)) }

    var accepted: [AcceptedMessage] {
        serverOut.compactMap { if case .event(.messageAccepted(let m)) = $0.effect { m } else { nil } }
    }
    /// `stored` notes for `uid` on device `d` (new rows and updates), in order.
    func stores(of uid: String, on d: Int, newOnly: Bool = true) -> [ClientOut] {
        clientOut.filter {
            guard $0.device == d, case .note(.stored(_, let u, _, _, _, let isNew)) = $0.effect else { return false }
            return u == uid && (isNew || !newOnly)
        }
    }
    func clientEffects(on d: Int, _ match: (ClientEffect) -> Bool) -> [ClientOut] {
        clientOut.filter { $0.device == d && match($0.effect) }
    }
    func clientInputs(on d: Int, _ match: (ClientInput) -> Bool) -> [ClientIn] {
        clientIn.filter { $0.device == d && match($0.input) }
    }
    func serverEvents(_ match: (ServerEvent) -> Bool) -> [ServerOut] {
        serverOut.filter { if case .event(let e) = $0.effect { match(e) } else { false } }
    }
    /// Server drops, as (uid, user, reason): `dropped` events and messages accepted and dropped
    /// for everyone (user nil).
    var drops: [(uid: String?, conversation: ConversationKey, user: String?, reason: DropReason)] {
        serverOut.compactMap {
            switch $0.effect {
            case .event(.dropped(let uid, let conv, let user, let reason)): (uid, conv, user, reason)
            case .event(.messageAccepted(let m)): m.droppedForEveryone.map { (m.messageUId, m.conversation, nil, $0) }
            default: nil
            }
        }
    }
}

/// A run with the oracles on (all, or `enabled`), stopping at the first violation unless told
/// otherwise, and an indexed tap.
func runOracles(_ s: Scenario, seed: UInt64 = 1, stop: Bool = true, enabled: Set<String>? = nil,
                observers: [any WorldObserver] = [], until: SimTime? = nil,
                prepare: (ScenarioRun) throws -> Void = { _ in }) throws -> (ScenarioRun, IndexedTap) {
    let tap = IndexedTap()
    var options = OracleOptions(stopAtFirstViolation: stop, scenarioArgument: s.name)
    if let enabled { options.enabled = enabled }
    let run = try ScenarioRun(scenario: s, seed: seed, oracles: options, observers: [tap] + observers)
    try prepare(run)
    run.run(until: until)
    return (run, tap)
}

/// The repro line for a violation at `t` (the `--until` rounded up to the millisecond so the
/// violating event is included).
func reproLine(_ scenarioName: String, seed: UInt64, at t: SimTime) -> String {
    let ms = (t.nanoseconds + 999_999) / 1_000_000
    return "imsim run \(scenarioName) --seed \(seed) --until \(SimDuration.milliseconds(ms))"
}

/// Asserts the fields every report carries: which oracle, where (device, conversation), which
/// event (index and simulated time), and the repro line.
func expectReport(_ v: Violation, oracle: String, device: String?, conversation: ConversationKey?,
                  index: UInt64, time: SimTime, scenario: String, seed: UInt64 = 1,
                  sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(v.oracle == oracle, sourceLocation: sourceLocation)
    #expect(v.device == device, sourceLocation: sourceLocation)
    #expect(v.conversation == conversation?.description, sourceLocation: sourceLocation)
    #expect(v.eventIndex == index, "\(v.text)", sourceLocation: sourceLocation)
    #expect(v.timeNanoseconds == time.nanoseconds, sourceLocation: sourceLocation)
    #expect(v.time == time.description, sourceLocation: sourceLocation)
    #expect(v.repro == reproLine(scenario, seed: seed, at: time), sourceLocation: sourceLocation)
}

/// The first violation of a stop-at-first run. The run stops after the event that broke a
/// property, so every violation it reports belongs to that one event (one event can break more
/// than one check: a duplicate row is also a duplicate notification).
func onlyViolation(_ run: ScenarioRun, sourceLocation: SourceLocation = #_sourceLocation) throws -> Violation {
    let first = try #require(run.violations.first, sourceLocation: sourceLocation)
    #expect(run.violations.allSatisfy { $0.eventIndex == first.eventIndex }, "\(run.violations.map(\.text))", sourceLocation: sourceLocation)
    #expect(run.stopReason == .stopRequested, sourceLocation: sourceLocation)
    return first
}

/// No violation at all, and the run converged (a clean twin must not pass by stopping early).
func expectClean(_ run: ScenarioRun, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(run.violations.isEmpty, "\(run.violations.map(\.text))", sourceLocation: sourceLocation)
    #expect(run.world.phase == .finished, sourceLocation: sourceLocation)
}

extension ScenarioRun {
    func device(_ id: String) throws -> Int { try #require(world.deviceIndex(id)) }
}

func isOpen(_ e: ClientEffect) -> Bool { if case .openConnection = e { true } else { false } }

/// `steps` occur in `path` in this order (each a substring of one line, lines may lie between).
func expectPath(_ path: [String], contains steps: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    var i = 0
    for line in path where i < steps.count && line.contains(steps[i]) { i += 1 }
    #expect(i == steps.count, "path lacks \"\(i < steps.count ? steps[i] : "")\" (in order): \(path)", sourceLocation: sourceLocation)
}

/// The oracle of this name in a run's suite (to feed it a hand-made effect).
func oracle(_ run: ScenarioRun, _ name: String) throws -> any Oracle {
    try #require(run.suite?.oracles.first { $0.name == name })
}

/// A test-only observer that hands the world's events to closures — used to feed an oracle a
/// hand-made effect at a chosen moment (observers run after the suite's oracles).
final class Hook: WorldObserver {
    var onDispatch: ((World, SimEvent<WorldEvent>) -> Void)?
    var onClientEffects: ((World, Int, AppliedClientEffects) -> Void)?
    var onServerEffects: ((World, AppliedServerEffects) -> Void)?
    func world(_ world: World, dispatching event: SimEvent<WorldEvent>) { onDispatch?(world, event) }
    func world(_ world: World, device: Int, applied effects: AppliedClientEffects) { onClientEffects?(world, device, effects) }
    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) { onServerEffects?(world, serverEffects) }
}

/// Every oracle but delivery-order: B1 with a backlog shows the s_msg accepted during the pull
/// before the older messages of the next pages, which delivery-order reports first; the tests
/// about no-duplicate's own report keep to the duplicate.
let withoutDeliveryOrder = Set(OracleOptions.allNames).subtracting([DeliveryOrderOracle.oracleName])
