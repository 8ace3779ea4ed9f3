import ArgumentParser
import Foundation
import IMSim

/// `imsim bench sweep --engine slurm`: the same seeds through a local `imsim sweep` and through
/// a Slurm job array (`imsim sweep submit`), in one run, so the ratio is fair on a shared machine.
extension BenchSweep {
    struct SlurmFigures: Codable {
        var scenario: String
        var seeds: Int
        var block: Int
        var tasks: Int
        var cores: Int
        var localWallSeconds: Double
        var slurmWallSeconds: Double
        var localSeedsPerHourPerCore: Double
        var slurmSeedsPerHourPerCore: Double
        /// slurm / local seeds/hour/core.
        var efficiency: Double
        /// (slurm wall − local wall) × cores / tasks: what scheduling one task costs a core.
        var overheadSecondsPerTask: Double
        var identical: Bool
    }

    func runSlurm() throws {
        guard ProcessInfo.processInfo.environment["SLURM_CONF"] != nil || FileManager.default.fileExists(atPath: "/etc/slurm/slurm.conf"),
              SweepStatusCommand.which("sbatch") != nil else {
            throw SweepRunCommand.fail("bench sweep --engine slurm: no Slurm here (Tools/slurm/start.sh, then export SLURM_CONF=/tmp/imsim-slurm/slurm.conf)")
        }
        let names = scenarios.isEmpty ? ["quickstart"] : scenarios
        let blocks = block.split(separator: ",").compactMap { Int($0) }
        guard !blocks.isEmpty, blocks.allSatisfy({ $0 >= 1 }) else { throw ValidationError("--block: e.g. 50 or 1,50") }
        let cores = jobs > 1 ? jobs : ProcessInfo.processInfo.activeProcessorCount
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let base = NSTemporaryDirectory() + "imsim-bench-slurm-\(ProcessInfo.processInfo.processIdentifier)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        var rows: [SlurmFigures] = []
        if !json { print("scenario      seeds  block  tasks  local s  slurm s  local seeds/h/core  slurm seeds/h/core  slurm/local  overhead/task  identical") }
        for name in names {
            for b in blocks {
                let n = seeds ?? 200
                let tasks = (n + b - 1) / b
                var extra: [String] = []
                if let u = until { extra += ["--until", u] }
                // Local: the sweep a user runs on this machine, all cores.
                let localDir = base + "/local-\(name)-\(b)"
                let t0 = ContinuousClock.now
                _ = try Self.runTool(exe, ["sweep", name, "--seeds", "1..\(n)", "--jobs", "\(cores)", "--out", localDir] + extra)
                let localWall = Self.seconds(ContinuousClock.now - t0)
                // Slurm: one-core tasks of b seeds, as many at once as there are cores.
                let dir = base + "/slurm-\(name)-\(b)"
                let t1 = ContinuousClock.now
                let submitted = Date()
                _ = try Self.runTool(exe, ["sweep", "submit", name, "--seeds", "1..\(n)", "--shards", "\(tasks)", "--throttle", "\(cores)",
                                           "--out", dir, "--engine", "slurm", "--jobs", "1"] + extra)
                while !FileManager.default.fileExists(atPath: dir + "/merge.rc") {
                    usleep(50_000)
                    if Self.seconds(ContinuousClock.now - t1) > 3600 { throw SweepRunCommand.fail("bench: the Slurm sweep did not finish in an hour") }
                }
                // The array's end: the newest shard file (the merge job is not part of the sweep).
                let last = (try? FileManager.default.contentsOfDirectory(atPath: dir))?.filter { $0.hasPrefix("shard-") && $0.hasSuffix(".jsonl") }
                    .compactMap { (try? FileManager.default.attributesOfItem(atPath: dir + "/" + $0))?[.modificationDate] as? Date }.max()
                let slurmWall = last.map { $0.timeIntervalSince(submitted) } ?? Self.seconds(ContinuousClock.now - t1)
                let identical = FileManager.default.contents(atPath: dir + "/merged.jsonl") == FileManager.default.contents(atPath: localDir + "/results.jsonl")
                let l = Double(n) * 3600 / (localWall * Double(cores)), s = Double(n) * 3600 / (slurmWall * Double(cores))
                let f = SlurmFigures(scenario: name, seeds: n, block: b, tasks: tasks, cores: cores, localWallSeconds: localWall,
                                     slurmWallSeconds: slurmWall, localSeedsPerHourPerCore: l, slurmSeedsPerHourPerCore: s,
                                     efficiency: s / l, overheadSecondsPerTask: (slurmWall - localWall) * Double(cores) / Double(tasks),
                                     identical: identical)
                rows.append(f)
                if !json {
                    print(String(format: "%-12@ %6d %6d %6d %8.1f %8.1f %19.0f %19.0f %11.1f%% %12.2f s  %@", name as NSString, n, b, tasks,
                                 localWall, slurmWall, l, s, 100 * f.efficiency, f.overheadSecondsPerTask, (identical ? "yes" : "NO") as NSString))
                }
            }
        }
        if json {
            struct R: Codable { var benchmark = "sweep-slurm"; var build: String; var results: [SlurmFigures] }
            print(BenchFormat.json(R(build: IMSimVersion.buildConfiguration, results: rows)))
        } else {
            print("\(IMSimVersion.buildConfiguration) build, \(cores) cores; slurm wall = submit → last shard file (merge job excluded)")
        }
        if rows.contains(where: { !$0.identical }) { throw SweepRunCommand.fail("bench: Slurm results differ from the local sweep") }
    }

    static func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

    /// Runs imsim; exit 0 or 1 (failures found) are results, anything else an error.
    static func runTool(_ exe: String, _ args: [String]) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus <= 1 else { throw SweepRunCommand.fail("bench: imsim \(args.joined(separator: " ")) exited \(p.terminationStatus)") }
        return p.terminationStatus
    }
}
