import ArgumentParser
import Foundation
import IMSim

/// The sweep a directory was submitted for (`imsim sweep submit` writes DIR/sweep.json): merge and
/// status know from it how many shards to expect even when none has written a file yet.
struct SweepManifest: Codable {
    var header: SweepHeader
    var engine: String
    var jobIDs: [String]
    var throttle: Int

    static func load(_ dir: String) throws -> SweepManifest? {
        guard let data = FileManager.default.contents(atPath: dir + "/sweep.json") else { return nil }
        do { return try JSONDecoder().decode(SweepManifest.self, from: data) } catch {
            throw SweepIOError("\(dir)/sweep.json: not a sweep manifest (\(error))")
        }
    }

    func save(_ dir: String) throws {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try SweepResultWriter.writeAtomically(Array(try e.encode(self)) + [0x0A], to: dir + "/sweep.json")
    }
}

/// What a local sweep and a merge print about a set of results.
enum SweepReport {
    static func print(header h: SweepHeader, lines: [SweepSeedLine], listFailures: Int = 20) {
        let fails = lines.filter { $0.outcome == .fail }
        let errors = lines.filter { $0.outcome == .error }.count
        Swift.print("sweep \(h.scenario): \(lines.count) seed(s), \(fails.count) failure(s), \(errors) error(s)"
                    + " [scenario \(h.scenarioDigest), build \(h.build), bugs \(h.bugs.isEmpty ? "none" : h.bugs.joined(separator: ","))\(h.swarm ? ", swarm" : "")]")
        var byOracle: [String: Int] = [:]
        for f in fails { byOracle[f.oracle ?? "?", default: 0] += 1 }
        for o in byOracle.keys.sorted() { Swift.print("  \(o): \(byOracle[o]!)") }
        for f in fails.prefix(listFailures) {
            Swift.print("  FAIL seed \(f.seed): \(f.oracle ?? "?") at event \(f.eventIndex ?? 0) (t=\(f.simTime ?? "?")) — repro: \(f.repro ?? "")")
        }
        if fails.count > listFailures { Swift.print("  … \(fails.count - listFailures) more failure(s) in the results file") }
        var coverage: [String: Int] = [:]
        for l in lines { for (k, v) in l.coverage ?? [:] { coverage[k, default: 0] += v } }
        if !coverage.isEmpty {
            Swift.print("  coverage: " + coverage.keys.sorted().map { "\($0) \(coverage[$0]!)" }.joined(separator: ", "))
        }
    }
}

struct SweepMergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge the shard result files of a directory into one sweep result.",
        discussion: """
            Reads every shard-*.jsonl (and .partial) file of DIR in any order; identical duplicates \
            are tolerated, missing shards (no finished file), damaged files, files of another sweep \
            or build, and seeds whose lines differ between files are named. When every shard is \
            there, writes DIR/merged.jsonl — byte for byte what an unsharded `imsim sweep` of the \
            same seeds on the same build writes to results.jsonl — and prints the local sweep's summary.
            Exit status: 0 no failures, 1 failures found, 2 shards missing or unreadable.
            """
    )

    @Argument(help: "The directory the shards wrote to (--out of each shard).") var dir: String
    @Option(help: "Expected number of shards (default: DIR/sweep.json, else the files' headers).") var shards: Int?
    @Option(help: "Seed bank directory: keep the merged failures, count the passes (imsim seeds).") var bank: String?
    @Option(name: .customLong("list-failures"), help: "How many failures to list.") var listFailures = 20
    @Flag(help: "Print the summary as JSON.") var json = false

    struct Output: Codable {
        var complete: Bool
        var shards: Int
        var missingShards: [Int]
        var unreadable: [String]
        var duplicates: [String]
        var conflictingSeeds: [UInt64]
        var seeds: Int
        var failures: Int
        var errors: Int
        var failingSeeds: [UInt64]
        var merged: String?
    }

    func run() throws {
        let files: [(name: String, bytes: [UInt8])]
        var expected: SweepHeader?
        do {
            files = try SweepResultWriter.resultFiles(in: dir)
            expected = try SweepManifest.load(dir)?.header
        } catch { throw SweepRunCommand.fail("\(error)") }
        if let n = shards {
            guard n >= 1 else { throw ValidationError("--shards must be at least 1") }
            if expected == nil { expected = files.lazy.compactMap { try? SweepResultFile.parse($0.bytes, partial: $0.name.hasSuffix(".partial")).header }.first }
            expected?.shards = n
        }
        // A directory of shards may also hold a local sweep's results.jsonl: the shards win.
        let sharded = files.contains { $0.name.hasPrefix("shard-") } || (expected?.shards ?? 1) > 1
        let m = SweepMerge(files: files.filter { $0.name.hasPrefix("shard-") == sharded }, expected: expected)
        guard let h = m.header else {
            throw SweepRunCommand.fail("\(dir): no shard result files and no sweep.json" + (m.unreadable.isEmpty ? "" : " (unreadable: " + m.unreadable.map { "\($0.name): \($0.reason)" }.joined(separator: "; ") + ")"))
        }
        var mergedPath: String?
        if let bytes = m.render() {
            let p = dir + "/merged.jsonl"
            do { try SweepResultWriter.writeAtomically(bytes, to: p) } catch { throw SweepRunCommand.fail("\(error)") }
            mergedPath = p
        }
        if let b = bank, m.header != nil {
            do {
                var sb = try SeedBankFile.load(b)
                var hh = h
                hh.shard = 0; hh.shards = 1
                sb.absorb(header: hh, lines: m.lines)
                try SeedBankFile.save(sb, to: b)
            } catch { throw SweepRunCommand.fail("\(error)") }
        }
        if json {
            let fails = m.failures
            print(BenchFormat.json(Output(complete: m.complete, shards: h.shards, missingShards: m.missing,
                                          unreadable: m.unreadable.map { "\($0.name): \($0.reason)" }, duplicates: m.duplicates,
                                          conflictingSeeds: m.conflicts, seeds: m.lines.count, failures: fails.count,
                                          errors: m.lines.filter { $0.outcome == .error }.count, failingSeeds: fails.map(\.seed),
                                          merged: mergedPath)))
        } else {
            SweepReport.print(header: h, lines: m.lines, listFailures: listFailures)
            let done = m.shards.filter { $0 == .done }.count
            print("  shards: \(done) of \(h.shards) done" + (m.duplicates.isEmpty ? "" : ", duplicates ignored: \(m.duplicates.joined(separator: ", "))"))
            if let p = mergedPath { print("  merged: \(p)") }
        }
        for (name, reason) in m.unreadable { FileHandle.standardError.write(Data("imsim: \(dir)/\(name): \(reason)\n".utf8)) }
        if !m.conflicts.isEmpty {
            FileHandle.standardError.write(Data("imsim: seeds with different results in different files (another build?): \(m.conflicts.prefix(20).map(String.init).joined(separator: ","))\n".utf8))
        }
        if !m.missing.isEmpty {
            let list = m.missing.map { i in "\(i)" + (m.shards[i] == .partial ? " (partial)" : "") }
            FileHandle.standardError.write(Data("imsim: \(dir): missing shard(s) \(list.joined(separator: ", ")) of \(h.shards) — rerun them with --shard I/\(h.shards) --out \(dir)\n".utf8))
        }
        if !m.complete { throw ExitCode(2) }
        if !m.failures.isEmpty { throw ExitCode(1) }
    }
}

struct SweepStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Progress of a sharded sweep: shards done, running, failed, pending.",
        discussion: """
            From the result files of DIR (a finished file: done; a .partial file whose lock a live \
            process holds: running; one nobody holds: stopped — killed or failed, rerun resumes it) \
            and, when DIR/sweep.json names Slurm jobs and squeue is on PATH, from squeue (pending, \
            running tasks). A shard with neither a file nor a queued task has failed or not started.
            """
    )

    @Argument(help: "The sweep's result directory.") var dir: String
    @Option(help: "Number of shards (default: DIR/sweep.json or the files' headers).") var shards: Int?

    func run() throws {
        let files: [(name: String, bytes: [UInt8])]
        let manifest: SweepManifest?
        do {
            files = try SweepResultWriter.resultFiles(in: dir)
            manifest = try SweepManifest.load(dir)
        } catch { throw SweepRunCommand.fail("\(error)") }
        var expected = manifest?.header
        if let n = shards {
            if expected == nil { expected = files.lazy.compactMap { try? SweepResultFile.parse($0.bytes, partial: $0.name.hasSuffix(".partial")).header }.first }
            expected?.shards = n
        }
        let m = SweepMerge(files: files, expected: expected)
        guard let h = m.header else { throw SweepRunCommand.fail("\(dir): no result files and no sweep.json") }
        let answer = manifest.flatMap { Self.squeue(jobID: $0.jobIDs.first) }
        let queue = answer ?? [:]
        var counts: [String: Int] = [:]
        var rows: [String] = []
        for i in 0..<h.shards {
            let name = SweepHeader.fileName(shard: i, shards: h.shards)
            let state: String
            switch m.shards[i] {
            case .done: state = "done"
            case .partial:
                state = Self.locked(dir + "/" + name + ".lock") ? "running" : (queue[i].map { $0.lowercased() } ?? "stopped")
            case .missing:
                // Not queued any more and no file: the task ended without finishing its shard.
                if let q = queue[i] { state = q.lowercased() } else { state = answer != nil ? "failed" : "pending" }
            }
            counts[state, default: 0] += 1
            if state != "done" { rows.append("  shard \(i): \(state)") }
        }
        print("sweep \(h.scenario) \(h.seeds) in \(h.shards) shard(s): " + counts.keys.sorted().map { "\(counts[$0]!) \($0)" }.joined(separator: ", "))
        for r in rows.prefix(50) { print(r) }
        if rows.count > 50 { print("  … \(rows.count - 50) more") }
        for (name, reason) in m.unreadable { print("  unreadable \(name): \(reason)") }
    }

    static func which(_ tool: String) -> String? {
        for d in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let p = "\(d)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }

    /// True when a live process holds the shard's lock.
    static func locked(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { flock(fd, LOCK_UN); return false }
        return true
    }

    /// Array task index → state (PENDING, RUNNING, …) of a job's tasks still in the queue.
    static func squeue(jobID: String?) -> [Int: String]? {
        guard let jobID, let exe = which("squeue") else { return nil }
        let out: String
        do { out = try SlurmTool.run(exe, ["-h", "-r", "-j", jobID, "-o", "%K %T"]) } catch {
            // A job Slurm has forgotten (MinJobAge) has no task left in the queue.
            return "\(error)".contains("Invalid job id") ? [:] : nil
        }
        var states: [Int: String] = [:]
        for line in out.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let i = Int(parts[0]) { states[i] = String(parts[1]) }
        }
        return states
    }
}
