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
            --trace FILE records the run (Docs/trace-format.md; view it with `imsim trace show|export|\
            ledger|diff`); a run killed mid-write leaves a trace readable with --salvage.
            --check-determinism runs the same run twice, in two child processes of this binary, each \
            writing a trace, and compares them record by record: "identical (digest …, N events)" or \
            the first divergent record.
            Exit status: 0 no violation (identical, with --check-determinism), 1 a violation \
            (divergent), 2 a usage, scenario or trace error.
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
    @Option(help: "Bug switches to turn on instead of the scenario's (B1,B6 …; \"none\" = all off).") var bugs: String?

    @Option(help: "Record the run into this trace file (.imtrace).") var trace: String?
    @Option(help: "Write the simulated network traffic as a pcapng capture for Wireshark (Docs/look.md).") var pcap: String?
    @Flag(name: .customLong("keep-content"), help: "Store message content, KV values and wire bytes in the trace (default: length + hash).")
    var keepContent = false
    @Option(name: .customLong("trace-level"), help: "1 kernel events and world notes, 2 + callbacks, notes, server events, API calls, 3 + every core input and effect (default).")
    var traceLevel = 3
    @Option(name: .customLong("trace-zstd-level"), help: "zstd level of the trace blocks.") var traceZstdLevel: Int32 = 3
    @Option(name: .customLong("trace-format"),
            help: "Trace format version to write: 2 (default), or 1 for imsim builds that read only format 1 (larger files).")
    var traceFormat: UInt16 = TraceFormat.majorVersion
    @Flag(name: .customLong("trace-single-threaded"),
          help: "Compress and write the trace on the simulation thread (default: on a writer thread; same bytes).")
    var traceSingleThreaded = false
    @Flag(name: .customLong("check-determinism"), help: "Run twice in separate processes and compare the traces.")
    var checkDeterminism = false
    @Flag(help: "Run even when the scenario's memory estimate exceeds the machine's available memory (warns).")
    var force = false

    func validate() throws {
        guard TraceLevel(rawValue: traceLevel) != nil else { throw ValidationError("--trace-level must be 1, 2 or 3") }
        guard (1...19).contains(traceZstdLevel) else { throw ValidationError("--trace-zstd-level must be 1…19") }
        guard TraceFormat.readableMajorVersions.contains(traceFormat) else { throw ValidationError("--trace-format must be 1 or 2") }
        if (keepContent || traceLevel != 3) && trace == nil && !checkDeterminism {
            throw ValidationError("--keep-content and --trace-level need --trace FILE")
        }
    }

    /// How this run was invoked (recorded in the trace header; `trace diff` lists differences).
    var traceHeaderOptions: [TraceOption] {
        var o = [TraceOption("scenario", scenario)]
        if let until { o.append(TraceOption("until", until)) }
        if noOracles { o.append(TraceOption("oracles", "none")) } else if let oracles { o.append(TraceOption("oracles", oracles)) }
        if continueAfterViolation { o.append(TraceOption("continue", "yes")) }
        if swarm { o.append(TraceOption("swarm", "yes")) }
        if let bugs { o.append(TraceOption("bugs", bugs)) }
        return o
    }

    func run() throws {
        if checkDeterminism { return try DeterminismCheck(command: self).run() }
        var sc: Scenario
        do { (sc, _) = try Scenario.load(pathOrName: scenario) } catch {
            FileHandle.standardError.write(Data("imsim: \(scenario): \(error)\n".utf8))
            throw ExitCode(2)
        }
        if swarm { sc.swarm = true }
        if let bugs { sc = try BugsOption.apply(bugs, to: sc) }
        try MemoryGuard.check(sc, name: scenario, force: force)
        var untilTime: SimTime?
        if let u = until {
            do { untilTime = SimTime.zero + (try SimDuration(parsing: u)) } catch {
                throw ValidationError("--until: \(error)")
            }
        }
        var oracleOptions: OracleOptions?
        if !noOracles {
            var o = OracleOptions(scenarioArgument: scenario + (swarm ? " --swarm" : "") + BugsOption.reproSuffix(bugs))
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
        var recorder: TraceRecorder?
        if let trace {
            do {
                var options = TraceRecorderOptions(
                    keepContent: keepContent, level: TraceLevel(rawValue: traceLevel)!,
                    writer: TraceWriterOptions(compressionLevel: traceZstdLevel, formatMajor: traceFormat), headerOptions: traceHeaderOptions)
                if traceSingleThreaded { options = options.singleThreaded }
                let r = try TraceRecorder(path: trace, scenario: sc, seed: runSeed, options: options)
                r.attach(to: run)
                recorder = r
            } catch {
                FileHandle.standardError.write(Data("imsim: --trace \(trace): \(error)\n".utf8))
                throw ExitCode(2)
            }
        }
        let pcapRun = try RunPcap.attach(pcap, to: run, scenario: sc, seed: runSeed)
        let captureSet = try RunCaptures.attach(captures, to: run, source: "imsim run \(scenario) --seed \(runSeed)" + (until.map { " --until \($0)" } ?? ""))
        let (_, wall) = Stopwatch.time { run.run(until: untilTime) }
        let report = run.report(wallSeconds: wall)
        try captureSet.finish(quiet: json)
        var traceLine: String?
        if let recorder, let trace {
            do {
                let s = try recorder.finish(stopReason: report.stopReason)
                let perRecord = s.records == 0 ? 0 : Double(s.fileBytes) / Double(s.records)
                traceLine = "  trace \(trace): \(s.records) records, \(s.blocks) blocks, \(s.fileBytes) bytes (\(String(format: "%.2f", perRecord)) bytes/record)"
            } catch {
                FileHandle.standardError.write(Data("imsim: --trace \(trace): \(error)\n".utf8))
                throw ExitCode(2)
            }
        }
        if let pcapRun {
            let line = try pcapRun.finish(stopReason: report.stopReason)
            traceLine = traceLine.map { $0 + "\n" + line } ?? line
        }
        if json {
            print(BenchFormat.json(report))
            if let traceLine { FileHandle.standardError.write(Data((traceLine + "\n").utf8)) }
        } else {
            print(report.text)
            if let traceLine { print(traceLine) }
            if coverage, let suite = run.suite {
                print("  sometimes:")
                for (what, n) in suite.coverage.sorted { print("    \(what): \(n)") }
            }
        }
        if !report.violations.isEmpty { throw ExitCode(1) }
    }
}
