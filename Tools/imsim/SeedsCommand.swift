import ArgumentParser
import Foundation
import IMSim

/// `imsim seeds`: the seed bank — every failing (scenario, seed, switches, oracle, build) any sweep
/// or merge found, passing seeds counted but not stored — and `recheck`, the regression list.
struct SeedsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seeds",
        abstract: "The seed bank: failing seeds kept from sweeps and merges; recheck them on this build.",
        discussion: """
            The bank is DIR/bank.json (--bank, default seed-bank). `imsim sweep … --bank DIR` and \
            `imsim sweep merge … --bank DIR` add to it; `imsim seeds add` adds result files or \
            sweep directories afterwards. `imsim seeds recheck` reruns every banked failure on this \
            build and says which now pass (fixed) and which still fail.
            """,
        subcommands: [SeedsListCommand.self, SeedsAddCommand.self, SeedsRecheckCommand.self],
        defaultSubcommand: SeedsListCommand.self
    )
}

struct BankOption: ParsableArguments {
    @Option(help: "Seed bank directory.") var bank = "seed-bank"
}

struct SeedsListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the banked failures and the pass counts.")
    @OptionGroup var bank: BankOption
    @Flag(help: "Print the bank as JSON.") var json = false

    func run() throws {
        let b: SeedBank
        do { b = try SeedBankFile.load(bank.bank) } catch { throw SweepRunCommand.fail("\(error)") }
        if json { print(BenchFormat.json(b)); return }
        print("seed bank \(bank.bank): \(b.entries.count) failing seed(s)")
        for e in b.entries {
            print("  \(e.scenario) seed \(e.seed)\(e.swarm ? " swarm" : "") bugs \((e.bugs ?? []).isEmpty ? "none" : e.bugs!.joined(separator: ","))"
                  + "\(e.until.map { " until \($0)" } ?? ""): \(e.oracle) (build \(e.build ?? "?"))")
        }
        let passed = b.passed ?? [:]
        if !passed.isEmpty {
            print("passing seeds counted:")
            for k in passed.keys.sorted() { print("  \(k): \(passed[k]!)") }
        }
    }
}

struct SeedsAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add the verdicts of result files or sweep directories (finished shards, merged or local results).")
    @Argument(help: "Result files (*.jsonl) or directories holding them.") var sources: [String]
    @OptionGroup var bank: BankOption

    func run() throws {
        var b: SeedBank
        do { b = try SeedBankFile.load(bank.bank) } catch { throw SweepRunCommand.fail("\(error)") }
        var files: [(String, [UInt8])] = []
        for s in sources {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: s, isDirectory: &isDir) else { throw SweepRunCommand.fail("\(s): no such file") }
            if isDir.boolValue {
                let all: [(name: String, bytes: [UInt8])]
                do { all = try SweepResultWriter.resultFiles(in: s) } catch { throw SweepRunCommand.fail("\(error)") }
                // merged.jsonl repeats the shards: take it alone when it is there.
                if let m = FileManager.default.contents(atPath: s + "/merged.jsonl") {
                    files.append((s + "/merged.jsonl", Array(m)))
                } else {
                    files += all.filter { !$0.name.hasSuffix(".partial") }.map { (s + "/" + $0.name, $0.bytes) }
                }
            } else {
                guard let d = FileManager.default.contents(atPath: s) else { throw SweepRunCommand.fail("\(s): cannot read") }
                files.append((s, Array(d)))
            }
        }
        var failing = 0, passing = 0
        for (name, bytes) in files {
            let f: SweepResultFile
            do { f = try SweepResultFile.parse(bytes, partial: false) } catch { throw SweepRunCommand.fail("\(name): \(error)") }
            b.absorb(header: f.header, lines: f.lines)
            failing += f.lines.filter { $0.outcome == .fail }.count
            passing += f.lines.filter { $0.outcome == .pass }.count
        }
        do { try SeedBankFile.save(b, to: bank.bank) } catch { throw SweepRunCommand.fail("\(error)") }
        print("seed bank \(bank.bank): added \(failing) failing seed(s), counted \(passing) passing, from \(files.count) file(s); \(b.entries.count) failing seed(s) banked")
    }
}

struct SeedsRecheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recheck",
        abstract: "Rerun every banked failure on this build: which now pass (fixed), which still fail.",
        discussion: "Exit status: 0 every banked seed passes now, 1 some still fail, 2 a scenario cannot be loaded.")
    @OptionGroup var bank: BankOption
    @Flag(name: .customLong("forget-fixed"), help: "Remove the fixed seeds from the bank.") var forgetFixed = false
    @Option(help: "Only this scenario (name).") var scenario: String?

    func run() throws {
        var b: SeedBank
        do { b = try SeedBankFile.load(bank.bank) } catch { throw SweepRunCommand.fail("\(error)") }
        let entries = b.entries.filter { scenario == nil || $0.scenario == scenario }
        var fixed: [SeedBank.Entry] = [], still: [SeedBank.Entry] = []
        var loadErrors = 0
        for e in entries {
            let arg = e.scenarioArgument ?? e.scenario
            var sc: Scenario
            do { (sc, _) = try Scenario.load(pathOrName: arg) } catch {
                print("  ? \(e.scenario) seed \(e.seed): cannot load \(arg): \(error)")
                loadErrors += 1
                continue
            }
            if e.swarm { sc.swarm = true }
            let bugs = (e.bugs ?? []).joined(separator: ",")
            sc = try BugsOption.apply(bugs.isEmpty ? "none" : bugs, to: sc)
            let changed = Digest64.hex(sc.digest) != e.scenarioDigest ? " (scenario changed since)" : ""
            var opts = OracleOptions(scenarioArgument: arg + (e.swarm ? " --swarm" : "") + BugsOption.reproSuffix(bugs.isEmpty ? "none" : bugs))
            opts.stopAtFirstViolation = true
            let run = try ScenarioRun(scenario: sc, seed: e.seed, scenarioArgument: arg, oracles: opts)
            run.run(until: try e.until.map { SimTime.zero + (try SimDuration(parsing: $0)) })
            let label = "\(e.scenario) seed \(e.seed)\(e.swarm ? " swarm" : "") bugs \(bugs.isEmpty ? "none" : bugs)"
            if let v = run.violations.first {
                still.append(e)
                print("  still failing: \(label): \(v.oracle) at event \(v.eventIndex)\(v.oracle != e.oracle ? " (was \(e.oracle))" : "")\(changed) — repro: \(v.repro)")
            } else {
                fixed.append(e)
                print("  fixed: \(label) (was \(e.oracle), build \(e.build ?? "?"))\(changed)")
            }
        }
        print("recheck \(bank.bank) on build \(SweepBuild.id): \(entries.count) banked failure(s): \(fixed.count) fixed, \(still.count) still failing" + (loadErrors > 0 ? ", \(loadErrors) not loadable" : ""))
        if forgetFixed && !fixed.isEmpty {
            b.entries.removeAll { x in fixed.contains(x) }
            do { try SeedBankFile.save(b, to: bank.bank) } catch { throw SweepRunCommand.fail("\(error)") }
        }
        if loadErrors > 0 { throw ExitCode(2) }
        if !still.isEmpty { throw ExitCode(1) }
    }
}
