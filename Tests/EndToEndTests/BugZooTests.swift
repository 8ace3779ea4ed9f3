import Foundation
import Testing
@testable import IMSim

/// The bug zoo (Docs/bugs.md): every bug of im-semantics §8 has a minimal scenario
/// `Traces/bugs/Bn.json` that fails with its switch on — caught by the named oracle — and is
/// clean with every switch off. B9 has no switch (a protocol hazard): its "off" run is the same
/// scenario with alice offline for less than the offline-kick rule needs.
@Suite struct BugZooTests {
    struct Case: CustomStringConvertible, Sendable {
        let bug: BugSwitch
        let oracle: String
        let device: String
        var description: String { "\(bug.rawValue) → \(oracle)" }
    }

    static let cases: [Case] = [
        Case(bug: .B1, oracle: "no-duplicate", device: "alice-phone"),
        Case(bug: .B2, oracle: "no-duplicate", device: "alice-phone"),
        Case(bug: .B3, oracle: "no-loss", device: "alice-phone"),
        Case(bug: .B4, oracle: "order", device: "alice-phone"),
        Case(bug: .B5, oracle: "order", device: "alice-phone"),
        Case(bug: .B6, oracle: "chatroom", device: "alice-phone"),
        Case(bug: .B7, oracle: "chatroom", device: "alice-phone"),
        Case(bug: .B8, oracle: "chatroom", device: "alice-phone"),
        Case(bug: .B9, oracle: "chatroom", device: "alice-phone"),
        Case(bug: .B10, oracle: "no-duplicate", device: "alice-phone"),
        Case(bug: .B11, oracle: "reconnect", device: "alice-phone"),
        Case(bug: .B12, oracle: "reconnect", device: "alice-old"),
        Case(bug: .B13, oracle: "chatroom", device: "alice-phone"),
        Case(bug: .B14, oracle: "unread", device: "bob-phone"),
    ]

    static var repoRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static func scenario(_ bug: BugSwitch) throws -> Scenario {
        let path = repoRoot.appendingPathComponent("Traces/bugs/\(bug.rawValue).json").path
        return try Scenario.load(json: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The scenario with the bug off: every switch off; for B9, alice's outage shortened to 5 s
    /// (back before the room's 31st message: not kicked).
    static func fixed(_ bug: BugSwitch) throws -> Scenario {
        var s = try scenario(bug).withBugs([])
        if bug == .B9 {
            var changed = false
            for i in s.script.indices {
                if case .partition(let target, _) = s.script[i].action {
                    s.script[i].action = .partition(target: target, for: .seconds(5))
                    changed = true
                }
            }
            #expect(changed, "B9.json has a partition step")
        }
        return s
    }

    static func violations(_ s: Scenario, _ bug: BugSwitch) throws -> [Violation] {
        let run = try ScenarioRun(scenario: s, seed: s.seed ?? 1,
                                  oracles: OracleOptions(scenarioArgument: "Traces/bugs/\(bug.rawValue).json"))
        run.run()
        return run.violations
    }

    @Test(arguments: cases)
    func switchOnFailsWithTheNamedOracle(_ c: Case) throws {
        let s = try Self.scenario(c.bug)
        // The minimal scenario turns on exactly its own bug (B9: none, it has no switch).
        #expect(s.bugs == (c.bug == .B9 ? [] : [c.bug]))
        let v = try #require(try Self.violations(s, c.bug).first, "\(c.bug) with the switch on: no violation")
        #expect(v.oracle == c.oracle, "\(c.bug): \(v.oracle) at \(v.time): \(v.detail)")
        #expect(v.device == c.device, "\(c.bug): \(v.detail)")
    }

    @Test(arguments: cases)
    func switchOffIsClean(_ c: Case) throws {
        let v = try Self.violations(try Self.fixed(c.bug), c.bug)
        #expect(v.isEmpty, "\(c.bug) off: \(v.map { "\($0.oracle) at \($0.time) on \($0.device ?? "-"): \($0.detail)" })")
    }

    /// Every bug of §8 has a minimal scenario and a case here.
    @Test func everyBugIsInTheZoo() throws {
        #expect(Self.cases.map(\.bug) == BugSwitch.allCases)
        for b in BugSwitch.allCases { _ = try Self.scenario(b) }
    }
}
