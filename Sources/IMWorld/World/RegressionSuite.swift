import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SimKernel

/// The golden regression suite (`Traces/golden/`): scenario + seed pairs with their blessed
/// ledgers and trace digests. A ledger change is a behaviour change (what users saw differs); a
/// digest change with an identical ledger is behaviour-neutral (timing or internals moved).
public struct RegressionSuite: Sendable {
    public struct Entry: Codable, Sendable, Equatable {
        public var name: String
        /// A built-in scenario name or a path relative to the golden directory.
        public var scenario: String
        public var seed: UInt64
        /// Simulated-time limit (debug-build sized runs).
        public var until: String?
        public var digest: String?
        public var events: UInt64?
        public var violations: [String]?
    }

    public enum Outcome: Sendable, Equatable {
        case identical
        /// Same ledger, different digest.
        case behaviourNeutral(old: String, new: String)
        case ledgerChanged([String])
        case newEntry
        case failed(String)
    }

    /// `imsim regress`'s last line. A behaviour-neutral entry is counted apart from the identical
    /// ones: its digest no longer matches the blessed one — a check that needs exact digests (the
    /// mutants smoke run's unmutated copy) fails on it — until it is blessed again.
    public static func summary(_ outcomes: [Outcome]) -> String {
        var changed = 0, failed = 0, neutral = 0
        for o in outcomes {
            switch o {
            case .behaviourNeutral: neutral += 1
            case .ledgerChanged: changed += 1
            case .failed: failed += 1
            case .identical, .newEntry: break
            }
        }
        let note = neutral > 0 ? " (\(neutral) behaviour-neutral: digest moved, --bless to accept)" : ""
        return "\(outcomes.count) entries: \(outcomes.count - changed - failed) unchanged\(note), \(changed) changed, \(failed) failed"
    }

    public struct Result: Sendable {
        public var entry: Entry
        public var outcome: Outcome
        public var ledger: Ledger
        public var digest: String
        public var events: UInt64
        public var violations: [String]
    }

    public let directory: String
    public var entries: [Entry]

    public static var defaultDirectory: String {
        let cwd = FileManager.default.currentDirectoryPath + "/Traces/golden"
        if FileManager.default.fileExists(atPath: cwd) { return cwd }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Traces/golden").path
    }

    public init(directory: String = RegressionSuite.defaultDirectory) throws {
        self.directory = directory
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/manifest.json"))
        entries = try JSONDecoder().decode([Entry].self, from: data)
    }

    func ledgerPath(_ e: Entry) -> String { directory + "/" + e.name + ".ledger.json" }

    /// Runs one entry and compares it with its blessed ledger and digest.
    public func run(_ e: Entry) -> Result {
        let path = e.scenario.hasSuffix(".json") ? directory + "/" + e.scenario : e.scenario
        do {
            let (scenario, _) = try Scenario.load(pathOrName: path)
            let until = try e.until.map { SimTime.zero + (try SimDuration(parsing: $0)) }
            let run = try ScenarioRun(scenario: scenario, seed: e.seed, scenarioArgument: e.scenario,
                                      oracles: OracleOptions(stopAtFirstViolation: false, scenarioArgument: e.scenario))
            run.run(until: until)
            let ledger = run.ledger()
            let digest = run.world.sim.digest.description
            let violations = run.violations.map { "\($0.oracle): \($0.detail)" }
            let outcome: Outcome
            if let data = FileManager.default.contents(atPath: ledgerPath(e)), let blessed = try? Ledger.parse(data) {
                let diff = blessed.diff(against: ledger)
                if !diff.isEmpty || (e.violations ?? []) != violations {
                    var lines = diff
                    if (e.violations ?? []) != violations {
                        lines.append("~ violations: \(e.violations ?? []) → \(violations)")
                    }
                    outcome = .ledgerChanged(lines)
                } else if let d = e.digest, d != digest {
                    outcome = .behaviourNeutral(old: d, new: digest)
                } else {
                    outcome = .identical
                }
            } else {
                outcome = .newEntry
            }
            return Result(entry: e, outcome: outcome, ledger: ledger, digest: digest,
                          events: run.world.sim.counters.eventsDispatched, violations: violations)
        } catch {
            return Result(entry: e, outcome: .failed("\(error)"), ledger: Ledger(scenario: e.scenario, seed: e.seed, devices: []),
                          digest: "", events: 0, violations: [])
        }
    }

    /// Writes the results' ledgers and digests as the new expectations (temp file + rename).
    public mutating func bless(_ results: [Result]) throws {
        for r in results {
            if case .failed = r.outcome { continue }
            try write(r.ledger.json() + "\n", to: ledgerPath(r.entry))
            if let i = entries.firstIndex(where: { $0.name == r.entry.name }) {
                entries[i].digest = r.digest
                entries[i].events = r.events
                entries[i].violations = r.violations
            }
        }
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try write(String(decoding: try enc.encode(entries), as: UTF8.self) + "\n", to: directory + "/manifest.json")
    }

    private func write(_ text: String, to path: String) throws {
        let tmp = path + ".tmp"
        try Data(text.utf8).write(to: URL(fileURLWithPath: tmp))
        guard rename(tmp, path) == 0 else { throw CocoaError(CocoaError.Code.fileWriteUnknown) }
    }
}
