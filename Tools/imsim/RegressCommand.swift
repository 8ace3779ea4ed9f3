import ArgumentParser
import Foundation
import IMSim

struct RegressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "regress",
        abstract: "Run the golden regression suite (Traces/golden) and diff what users saw.",
        discussion: """
            Each entry (scenario + seed) is run and its ledger compared with the blessed one. A ledger \
            difference is a behaviour change (exit 1); a digest change with an identical ledger is \
            reported as behaviour-neutral. --bless rewrites the expectations and prints the ledger diff \
            it accepts.
            """
    )

    @Flag(help: "Accept the current results as the new expectations.") var bless = false
    @Option(help: "Only entries whose name contains this.") var filter: String?
    @Option(help: "Golden directory (default: Traces/golden).") var golden: String?

    func run() throws {
        var suite: RegressionSuite
        do { suite = try RegressionSuite(directory: golden ?? RegressionSuite.defaultDirectory) } catch {
            FileHandle.standardError.write(Data("imsim: cannot read the golden manifest: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let entries = suite.entries.filter { filter == nil || $0.name.contains(filter!) }
        var results: [RegressionSuite.Result] = []
        var changed = 0, failed = 0
        for e in entries {
            let (r, wall) = Stopwatch.time { suite.run(e) }
            results.append(r)
            let t = String(format: "%.2f s", wall)
            switch r.outcome {
            case .identical:
                print("✔ \(e.name) (\(r.events) events, \(t))")
            case .behaviourNeutral(let old, let new):
                print("≈ \(e.name): behaviour-neutral change — ledger identical, digest \(old) → \(new) (\(t))")
            case .ledgerChanged(let lines):
                changed += 1
                print("✘ \(e.name): what users saw changed (\(t))")
                for l in lines { print("    \(l)") }
            case .newEntry:
                print("+ \(e.name): no blessed ledger yet (\(t))")
            case .failed(let why):
                failed += 1
                print("✘ \(e.name): could not run: \(why)")
            }
        }
        if bless {
            try suite.bless(results)
            print("blessed \(results.count) entr\(results.count == 1 ? "y" : "ies") in \(suite.directory)")
            return
        }
        print(RegressionSuite.summary(results.map(\.outcome)))
        if failed > 0 { throw ExitCode(2) }
        if changed > 0 { throw ExitCode(1) }
    }
}
