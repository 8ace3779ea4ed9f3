import ArgumentParser
import Foundation
import IMSim

struct ShrinkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shrink",
        abstract: "Delta-debug a failing scenario to a minimal one that fails the same oracle with the same seed.",
        discussion: """
            Shrinks the script (ddmin), the workload (rates zeroed, then halved), the random faults (kinds off, rates \
            halved, swarm off), users and devices (with every step and membership that names them), groups, chatrooms, \
            population size and the duration. Every candidate is a normal run with the oracle on, stopped at its first \
            violation; --max-runs bounds the total. Works on lifted captures (imsim replay CAPTURE --lift).
            Exit status: 0 shrunk (the result fails like the original), 1 the scenario does not fail, 2 usage or scenario error.
            """
    )

    @Argument(help: "Scenario file or built-in name.") var scenario: String
    @Option(help: "Run seed (default: the scenario's, else 1).") var seed: UInt64?
    @Option(help: "The oracle that must keep failing (default: the first violation's).") var oracle: String?
    @Option(help: "Where to write the minimal scenario (default: NAME.shrunk.json).") var out: String?
    @Option(name: .customLong("max-runs"), help: "Most scenario runs to spend.") var maxRuns = 400
    @Flag(help: "Print the result as JSON.") var json = false

    func validate() throws {
        if maxRuns < 1 { throw ValidationError("--max-runs must be at least 1") }
        if let o = oracle, !OracleOptions.allNames.contains(o) {
            throw ValidationError("unknown oracle \"\(o)\" (known: \(OracleOptions.allNames.joined(separator: ", ")))")
        }
    }

    struct Summary: Codable {
        var scenario: String
        var out: String
        var seed: UInt64
        var oracle: String
        var before: ShrinkSize
        var after: ShrinkSize
        var runs: Int
        var budgetExhausted: Bool
        var violation: Violation
    }

    func run() throws {
        let parsed: Scenario, path: String, value: JSONValue
        do {
            (parsed, path) = try Scenario.load(pathOrName: scenario)
            value = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        } catch {
            FileHandle.standardError.write(Data("imsim: \(scenario): \(error)\n".utf8))
            throw ExitCode(2)
        }
        let runSeed = seed ?? parsed.seed ?? 1
        let outPath = out ?? Self.defaultOut(path)
        let shrinker: Shrinker
        do {
            shrinker = try Shrinker(scenario: value, seed: runSeed, oracle: oracle, maxRuns: maxRuns, scenarioArgument: outPath)
        } catch let e as Shrinker.Failure {
            FileHandle.standardError.write(Data("imsim: \(scenario): \(e)\n".utf8))
            if case .doesNotLoad = e { throw ExitCode(2) }
            throw ExitCode(1)
        }
        let start = Date()
        var last = Date.distantPast
        let result = shrinker.run { p in
            guard !json, Date().timeIntervalSince(last) > 0.3 else { return }
            last = Date()
            FileHandle.standardError.write(Data("\r\u{1B}[K  run \(p.runs)/\(p.maxRuns) [\(p.phase)] \(p.size.scriptSteps) steps, \(p.size.users) users, \(p.size.devices) devices, \(p.size.eventsUntilFailure) events (\(Int(Date().timeIntervalSince(start))) s)".utf8))
        }
        if !json { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        do { try ScenarioText.write(result.text, to: outPath) } catch {
            FileHandle.standardError.write(Data("imsim: --out \(outPath): \(error)\n".utf8))
            throw ExitCode(2)
        }
        if json {
            print(BenchFormat.json(Summary(scenario: scenario, out: outPath, seed: runSeed, oracle: result.oracle, before: result.before,
                                           after: result.after, runs: result.runs, budgetExhausted: result.budgetExhausted,
                                           violation: result.violation)))
            return
        }
        print("imsim shrink \(scenario) --seed \(runSeed) --oracle \(result.oracle)")
        print("  before: \(result.before.text)")
        print("  after:  \(result.after.text)")
        print("  \(result.runs) runs\(result.budgetExhausted ? " (budget exhausted: raise --max-runs to shrink further)" : ""), \(String(Int(Date().timeIntervalSince(start) * 10) / 10)).\(Int(Date().timeIntervalSince(start) * 10) % 10) s")
        print("  wrote \(outPath)")
        print("  still fails: \(result.violation.oracle) on \(result.violation.device ?? "-") at t=\(result.violation.time): \(result.violation.detail)")
        print("  repro: imsim run \(outPath) --seed \(runSeed)")
    }

    static func defaultOut(_ path: String) -> String {
        var base = path
        if base.hasSuffix(".json") { base = String(base.dropLast(5)) }
        if base.hasSuffix(".scenario") { base = String(base.dropLast(9)) }
        if base.hasSuffix(".lifted") { base = String(base.dropLast(7)) + ".lifted" }
        // Built-in scenarios are written to the working directory, not into Traces/scenarios.
        if base.contains("/Traces/scenarios/") { base = String(base.split(separator: "/").last!) }
        return base + ".shrunk.json"
    }
}
