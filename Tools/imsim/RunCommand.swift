import ArgumentParser
import Foundation
import IMSim

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a scenario under simulation and check the IM oracles.",
        discussion: """
            SCENARIO is a scenario file or a built-in name (\(Scenario.builtInNames().joined(separator: ", "))).
            A run is a pure function of (scenario, seed, build): the same arguments print the same digest.
            Exit status: 0 no violation, 1 a violation, 2 a usage or scenario error.
            """
    )

    @Argument(help: "Scenario file or built-in name.") var scenario: String
    @Option(help: "Run seed (default: the scenario's, else 1).") var seed: UInt64?
    @Option(help: "Stop at this simulated time (e.g. 41.25s, 5m).") var until: String?
    @Flag(help: "Print the report as JSON.") var json = false
    @Flag(name: .customLong("no-oracles"), help: "Run without the oracles.") var noOracles = false
    @Option(help: "Comma-separated oracles to run (default: all: \(OracleOptions.allNames.joined(separator: ","))).") var oracles: String?
    @Flag(name: .customLong("continue"), help: "Keep running after the first violation.") var continueAfterViolation = false
    @Flag(help: "Print the 'sometimes' coverage counters.") var coverage = false
    @Option(help: "Print a readable log of everything that concerns this device (or \"server\").") var log: String?
    @Flag(help: "Swarm testing: enable a random subset of the scenario's faults (drawn from the seed).") var swarm = false
    @Option(name: .customLong("capture"), help: "Record DEVICE's SDK capture into FILE (DEVICE=FILE, repeatable; FILE.zst compresses).") var captures: [String] = []

    func run() throws {
        var sc: Scenario
        do { (sc, _) = try Scenario.load(pathOrName: scenario) } catch {
            FileHandle.standardError.write(Data("imsim: \(scenario): \(error)\n".utf8))
            throw ExitCode(2)
        }
        if swarm { sc.swarm = true }
        var untilTime: SimTime?
        if let u = until {
            do { untilTime = SimTime.zero + (try SimDuration(parsing: u)) } catch {
                throw ValidationError("--until: \(error)")
            }
        }
        var oracleOptions: OracleOptions?
        if !noOracles {
            var o = OracleOptions(scenarioArgument: scenario + (swarm ? " --swarm" : ""))
            if let list = oracles {
                let names = list.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
                for n in names where !OracleOptions.allNames.contains(n) {
                    throw ValidationError("unknown oracle \"\(n)\" (known: \(OracleOptions.allNames.joined(separator: ", ")))")
                }
                o.enabled = Set(names)
            }
            o.stopAtFirstViolation = !continueAfterViolation
            oracleOptions = o
        }
        let runSeed = seed ?? sc.seed ?? 1
        let run: ScenarioRun
        do {
            run = try ScenarioRun(scenario: sc, seed: runSeed, scenarioArgument: scenario, oracles: oracleOptions,
                                  observers: log.map { [RunLog(target: $0)] } ?? [])
        } catch {
            FileHandle.standardError.write(Data("imsim: \(scenario): \(error)\n".utf8))
            throw ExitCode(2)
        }
        let captureSet = try RunCaptures.attach(captures, to: run, source: "imsim run \(scenario) --seed \(runSeed)" + (until.map { " --until \($0)" } ?? ""))
        let (_, wall) = Stopwatch.time { run.run(until: untilTime) }
        let report = run.report(wallSeconds: wall)
        try captureSet.finish(quiet: json)
        if json {
            print(BenchFormat.json(report))
        } else {
            print(report.text)
            if coverage, let suite = run.suite {
                print("  sometimes:")
                for (what, n) in suite.coverage.sorted { print("    \(what): \(n)") }
            }
        }
        if !report.violations.isEmpty { throw ExitCode(1) }
    }
}
