import Foundation
import IMClient
import SimKernel
import Testing
@testable import IMWorld

/// The suite hands each fact only to the oracles whose `hooks` take it. That must be the same as
/// handing every fact to every oracle: an oracle that implements a hook it does not declare would
/// silently judge less. Each run is made twice — routed, and with the suite's `handEveryFact` — with every
/// violation kept (`--continue`), and everything the suite produced must be equal.
@Suite struct OracleRoutingTests {
    static func bugScenario(_ name: String) throws -> Scenario {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Traces/bugs/\(name).json").path
        return try Scenario.load(json: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    struct Outcome: Equatable {
        var violations: [Violation]
        var coverage: [String: Int]
        var digest: String
        var events: UInt64
    }

    static func outcome(_ s: Scenario, seed: UInt64, everyFact: Bool) throws -> Outcome {
        let run = try ScenarioRun(scenario: s, seed: seed, oracles: OracleOptions(stopAtFirstViolation: false, scenarioArgument: s.name))
        run.suite?.handEveryFact = everyFact
        run.run()
        return Outcome(violations: run.violations, coverage: run.suite?.coverage.counts ?? [:],
                       digest: run.world.sim.digest.description, events: run.world.sim.counters.eventsDispatched)
    }

    @Test(arguments: ["B1", "B4", "B6", "B7", "B8", "B11", "B13", "B14"])
    func routedEqualsEveryFactOnTheBugZoo(_ bug: String) throws {
        let s = try Self.bugScenario(bug)
        let routed = try Self.outcome(s, seed: 1, everyFact: false)
        let all = try Self.outcome(s, seed: 1, everyFact: true)
        #expect(!routed.violations.isEmpty, "\(bug) is found")
        #expect(routed == all)
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func routedEqualsEveryFactOnQuickstart(_ seed: UInt64) throws {
        var (s, _) = try Scenario.load(pathOrName: "quickstart")
        s.swarm = true
        let routed = try Self.outcome(s, seed: seed, everyFact: false)
        let all = try Self.outcome(s, seed: seed, everyFact: true)
        #expect(routed == all)
        #expect(routed.coverage.values.reduce(0, +) > 0)
    }

    /// The kinds routing (an effect list, a server list or an input reaches only the oracles whose
    /// declared kinds it holds) on built-ins with simulated disks, chatrooms and the API tour.
    @Test(arguments: ["quickstart-storage", "api-tour", "busy-room"])
    func routedEqualsEveryFactOnBuiltIns(_ name: String) throws {
        let (s, _) = try Scenario.load(pathOrName: name)
        let routed = try Self.outcome(s, seed: 1, everyFact: false)
        let all = try Self.outcome(s, seed: 1, everyFact: true)
        #expect(routed == all)
    }

    /// Each effect, event and input has one kind, and `.every` is in no single kind: an oracle
    /// declaring kinds is handed only lists holding one of them.
    @Test func kindsOfFacts() {
        #expect(AppliedKinds.of(.openConnection) == .openConnection)
        #expect(AppliedKinds.of(.closeConnection) == .closeConnection)
        #expect(AppliedKinds.of(.callback(.chatroomQuit(roomId: "r"))) == .chatroomMembership)
        #expect(AppliedKinds.of(.callback(.chatroomKVSynced(roomId: "r"))) == .otherCallback)
        #expect(AppliedKinds.of(.callback(.connectError(code: 1))) == .connection)
        #expect(AppliedKinds.of(.note(.chatroomState(roomId: "r", joined: true))) == .chatroomState)
        #expect(AppliedKinds.of(.note(.cursor(name: "c", value: 1))) == .otherNote)
        #expect(ServerAppliedKinds.of(.restarted(keptPersistentState: false)) == .restarted)
        #expect(ServerAppliedKinds.of(.offlineStored(messageUId: "u", userId: "a")) == .otherEvent)
        #expect(InputKinds.of(.networkChanged(available: true)) == [.every, .networkChanged])
    }

    /// The declarations themselves: every oracle takes the hooks its type implements (listed
    /// here from the sources; an oracle added without a declaration takes everything).
    @Test func declaredHooks() throws {
        let (s, _) = try Scenario.load(pathOrName: "quickstart")
        let run = try ScenarioRun(scenario: s, seed: 1, oracles: OracleOptions(scenarioArgument: s.name))
        let hooks = Dictionary(uniqueKeysWithValues: (run.suite?.oracles ?? []).map { ($0.name, $0.hooks) })
        #expect(hooks.count == OracleOptions.allNames.count)
        #expect(hooks["liveness"] == [])
        #expect(hooks["quota"] == [.serverApplied])
        #expect(hooks.values.allSatisfy { !$0.contains(.serverInput) && !$0.contains(.didFinish) })
        let oracles = Dictionary(uniqueKeysWithValues: (run.suite?.oracles ?? []).map { ($0.name, $0) })
        #expect(oracles["unread"]?.appliedKinds == [.received, .recalled, .syncReadStatus])
        #expect(oracles["chatroom"]?.appliedKinds == .every)
        #expect(oracles["no-loss"]?.serverAppliedKinds == [.messageAccepted, .dropped])
        #expect(oracles["reconnect"]?.inputKinds == .every)
        // An oracle declaring kinds does not take every list: `.every` is never among them.
        #expect(oracles.values.allSatisfy { $0.appliedKinds == .every || !$0.appliedKinds.contains(.every) })
    }
}
