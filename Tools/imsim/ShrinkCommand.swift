import ArgumentParser
import Foundation
import IMSim

struct ShrinkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shrink",
        abstract: "Delta-debug a failing scenario to a minimal one that fails the same oracle with the same seed.",
        discussion: """
            Writes a generated population out as explicit users, groups and rooms (in a world of 50 users or more, \
            the users that did nothing in the seconds before the failure then go in one run), then shrinks to a \
            fixpoint: the duration (just past the violation; for a verdict given at the end, the heal bisected down \
            to just after the cause), the random prefix, the users that did nothing near the failure, the random \
            faults (kinds off, each kind on each device, rates halved, swarm off), the workload (kinds off, rates \
            halved), users (ddmin over the list) and devices (with every step and membership that names them), groups, \
            chatrooms and their members, smaller constants (liveness deadline, room history ring, 200 ms quota, \
            offline-kick count), the script (ddmin) and step repeats; \
            a final pass tries each remaining element once more and says why it is needed. The result fails the same \
            oracle on the same kind of event (conversation type). Every candidate is a normal run with the oracle on, \
            stopped at its first violation, and a pure function of (scenario, seed): --jobs N runs N candidates at once \
            in child processes with the same result. --max-runs bounds the total. Works on lifted captures \
            (imsim replay CAPTURE --lift).
            Exit status: 0 shrunk (the result fails like the original), 1 the scenario does not fail, 2 usage or scenario error.
            """
    )

    @Argument(help: "Scenario file or built-in name.") var scenario: String
    @Option(help: "Run seed (default: the scenario's, else 1).") var seed: UInt64?
    @Option(help: "The oracle that must keep failing (default: the first violation's).") var oracle: String?
    @Option(help: "Where to write the minimal scenario (default: NAME.shrunk.json).") var out: String?
    @Option(name: .customLong("max-runs"), help: "Most scenario runs to spend.") var maxRuns = 400
    @Flag(help: "Print the result as JSON.") var json = false
    @Option(help: "Candidates run at once, each in its own child process (1: in this process).") var jobs = 1
    @Flag(name: .customLong("evaluate-candidate"), help: .hidden) var evaluateCandidate = false
    @Option(name: .customLong("event-kind"), help: .hidden) var eventKind: String?

    func validate() throws {
        if maxRuns < 1 { throw ValidationError("--max-runs must be at least 1") }
        if jobs < 1 || jobs > 64 { throw ValidationError("--jobs must be 1 to 64") }
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
        var removed: [String]
        var needed: [String]
        var repro: String
    }

    func run() throws {
        if evaluateCandidate { return try evaluateOne() }
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
        if jobs > 1 {
            shrinker.batchSize = jobs
            let (seed, o, k) = (runSeed, shrinker.oracle, shrinker.eventKind)
            shrinker.evaluator = { Self.evaluateInChildren($0, seed: seed, oracle: o, eventKind: k, scenarioArgument: outPath) }
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
                                           violation: result.violation, removed: result.removed, needed: result.needed,
                                           repro: "imsim run \(outPath) --seed \(runSeed)")))
            return
        }
        print("imsim shrink \(scenario) --seed \(runSeed) --oracle \(result.oracle)")
        print("  before: \(result.before.text)")
        print("  after:  \(result.after.text)")
        print("  \(result.runs) runs\(result.budgetExhausted ? " (budget exhausted: raise --max-runs to shrink further)" : ""), \(String(Int(Date().timeIntervalSince(start) * 10) / 10)).\(Int(Date().timeIntervalSince(start) * 10) % 10) s")
        print("  wrote \(outPath)")
        print("  still fails: \(result.violation.oracle) on \(result.violation.device ?? "-") at t=\(result.violation.time): \(result.violation.detail)")
        if !result.removed.isEmpty {
            print("  removed:")
            for r in result.removed { print("    - \(r)") }
        }
        if !result.needed.isEmpty {
            print("  needed (the final pass tried each once more):")
            for n in result.needed { print("    - \(n)") }
        }
        print("  repro: imsim run \(outPath) --seed \(runSeed)")
    }

    /// `--evaluate-candidate`: one candidate run, its verdict as JSON on stdout (for --jobs).
    func evaluateOne() throws {
        let value: JSONValue
        do { value = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: scenario)))) } catch {
            FileHandle.standardError.write(Data("imsim: \(scenario): \(error)\n".utf8))
            throw ExitCode(2)
        }
        let verdict = Shrinker.evaluate(value, seed: seed ?? 1, oracle: oracle, eventKind: eventKind, scenarioArgument: out ?? scenario)
        print(String(decoding: try JSONEncoder().encode(verdict), as: UTF8.self))
    }

    /// Runs each candidate in its own child process (this executable), all at once; a child
    /// that fails counts as a candidate that does not load.
    static func evaluateInChildren(_ candidates: [JSONValue], seed: UInt64, oracle: String, eventKind: String,
                                   scenarioArgument: String) -> [ShrinkVerdict] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imsim-shrink-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var children: [(Foundation.Process, Foundation.Pipe, URL)?] = []
        for (i, c) in candidates.enumerated() {
            let file = dir.appendingPathComponent("candidate-\(i).json")
            do {
                try Data(c.serializedString.utf8).write(to: file)
                let p = Foundation.Process()
                p.executableURL = exe
                p.arguments = ["shrink", file.path, "--evaluate-candidate", "--seed", String(seed), "--oracle", oracle,
                               "--event-kind", eventKind, "--out", scenarioArgument]
                let pipe = Foundation.Pipe()
                p.standardOutput = pipe
                p.standardError = FileHandle.nullDevice
                try p.run()
                children.append((p, pipe, file))
            } catch {
                children.append(nil)
            }
        }
        let verdicts = children.map { child -> ShrinkVerdict in
            guard let (p, pipe, file) = child else { return .doesNotLoad("could not start a child process") }
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            try? FileManager.default.removeItem(at: file)
            guard p.terminationStatus == 0, let v = try? JSONDecoder().decode(ShrinkVerdict.self, from: data) else {
                return .doesNotLoad("child process exited with status \(p.terminationStatus)")
            }
            return v
        }
        try? FileManager.default.removeItem(at: dir)
        return verdicts
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
