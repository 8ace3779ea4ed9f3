import ArgumentParser
import Foundation
import IMSim

/// Runs a cluster tool (sbatch, squeue) and returns its stdout; a failure carries its stderr.
enum SlurmTool {
    static func run(_ exe: String, _ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            let msg = String(decoding: e, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw SweepIOError("\((exe as NSString).lastPathComponent) \(args.joined(separator: " ")): \(msg.isEmpty ? "exit \(p.terminationStatus)" : msg)")
        }
        return String(decoding: o, as: UTF8.self)
    }
}

struct SweepSubmitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Submit a sweep as an array job: Slurm (runs sbatch), Kubernetes or AWS Batch (--dry-run: writes the job).",
        discussion: """
            Every array task runs `imsim sweep SCENARIO --seeds … --shard env/N --out DIR`: shard I \
            of N with I from the engine's task index (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, \
            AWS_BATCH_JOB_ARRAY_INDEX), writing DIR/shard-IIII-of-NNNN.jsonl. DIR must be shared by \
            the nodes (a cluster filesystem) or be copied back before `imsim sweep merge DIR`.
            slurm: writes DIR/slurm/array.sh (sbatch --array=0-(N-1)%THROTTLE, --requeue) and \
            DIR/slurm/merge.sh (--dependency=afterany:ARRAYJOB, runs imsim sweep merge DIR into \
            DIR/merge.txt and DIR/merge.rc), submits both unless --dry-run, prints the job ids and \
            records them in DIR/sweep.json for `imsim sweep status DIR`.
            k8s: writes DIR/k8s-job.yaml (an Indexed Job: completions N, parallelism THROTTLE, \
            results on a PersistentVolumeClaim). aws-batch: writes DIR/aws-batch-job.json (a job \
            definition and a submit-job request with arrayProperties.size N). Both need --dry-run \
            here; apply them with kubectl / aws batch. Size shards so a task runs ≥ 50 quickstart \
            seeds (Docs/cluster.md): a Slurm task costs ~1.5 s to schedule.
            """
    )

    enum Engine: String, ExpressibleByArgument, CaseIterable { case slurm, k8s, awsBatch = "aws-batch" }

    @Argument(help: "Scenario file or built-in name.") var scenario: String
    @Option(help: "Seeds of the whole sweep, e.g. 1..1000000.") var seeds = "1..100"
    @Option(help: "Number of shards (array tasks).") var shards: Int
    @Option(help: "At most this many tasks at once (Slurm %K, k8s parallelism).") var throttle: Int?
    @Option(help: "Result directory shared by every task (absolute path on the nodes).") var out: String
    @Option(help: "slurm, k8s or aws-batch.") var engine: Engine = .slurm
    @Flag(name: .customLong("dry-run"), help: "Write the job files without submitting.") var dryRun = false
    @Option(help: "Worker processes per task (= cores per task).") var jobs = 1
    @Flag(help: "Swarm testing.") var swarm = false
    @Option(help: "Bug switches (B1,B6 …; none).") var bugs: String?
    @Option(help: "Simulated-time limit per run.") var until: String?
    @Option(help: "Seed bank directory the merge job adds to (imsim seeds).") var bank: String?
    @Option(help: "Slurm partition.") var partition: String?
    @Option(help: "Slurm time limit per task (e.g. 1:00:00).") var time: String?
    @Option(name: .customLong("imsim"), help: "The imsim executable on the nodes (default: this one).") var imsimPath: String?
    @Option(help: "Container image (k8s, aws-batch).") var image = "imsim:latest"

    func validate() throws {
        guard shards >= 1 else { throw ValidationError("--shards must be at least 1") }
        if let t = throttle, t < 1 { throw ValidationError("--throttle must be at least 1") }
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        if engine == .awsBatch && shards < 2 { throw ValidationError("--engine aws-batch: an array job needs at least 2 shards") }
    }

    func run() throws {
        var sc: Scenario
        do { (sc, _) = try Scenario.load(pathOrName: scenario) } catch { throw SweepRunCommand.fail("\(scenario): \(error)") }
        if swarm { sc.swarm = true }
        if let bugs { sc = try BugsOption.apply(bugs, to: sc) }
        let selection: SeedSelection
        do { selection = try SeedSelection(parsing: seeds) } catch { throw ValidationError("\(error)") }
        guard selection.count >= shards else { throw ValidationError("--shards \(shards) is more than the \(selection.count) seed(s)") }
        if let u = until, (try? SimDuration(parsing: u)) == nil { throw ValidationError("--until: invalid duration \"\(u)\"") }
        let fm = FileManager.default
        let dir = out.hasPrefix("/") ? out : fm.currentDirectoryPath + "/" + out
        // A scenario file must be found from the nodes too.
        let scenarioArg = fm.fileExists(atPath: scenario) && !scenario.hasPrefix("/") ? fm.currentDirectoryPath + "/" + scenario : scenario
        let exe = imsimPath ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let header = SweepHeader(scenario: sc.name, scenarioArgument: scenarioArg, scenarioDigest: Digest64.hex(sc.digest),
                                 build: SweepBuild.id, bugs: sc.bugs.map(\.rawValue), swarm: sc.swarm, until: until,
                                 seeds: selection.rangesText, shard: 0, shards: shards)
        do { try SweepResultWriter.makeDirectory(dir) } catch { throw SweepRunCommand.fail("\(error)") }

        var shardArgs = ["sweep", scenarioArg, "--seeds", selection.rangesText, "--shard", "env/\(shards)", "--out", dir, "--jobs", "\(jobs)"]
        if swarm { shardArgs.append("--swarm") }
        if let bugs { shardArgs += ["--bugs", bugs] }
        if let until { shardArgs += ["--until", until] }
        let k = throttle ?? shards
        do {
            switch engine {
            case .slurm: try slurm(dir: dir, exe: exe, shardArgs: shardArgs, throttle: k, header: header)
            case .k8s: try k8s(dir: dir, shardArgs: shardArgs, throttle: k, header: header)
            case .awsBatch: try awsBatch(dir: dir, shardArgs: shardArgs, header: header)
            }
        } catch let e as SweepIOError { throw SweepRunCommand.fail("\(e)") }
    }

    static func shellQuote(_ s: String) -> String {
        s.allSatisfy { $0.isLetter || $0.isNumber || "/._-,=:%+@".contains($0) } ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    func write(_ text: String, _ path: String, executable: Bool = false) throws {
        try SweepResultWriter.writeAtomically(Array(text.utf8), to: path)
        if executable { chmod(path, 0o755) }
    }

    func slurm(dir: String, exe: String, shardArgs: [String], throttle k: Int, header: SweepHeader) throws {
        let sdir = dir + "/slurm"
        try SweepResultWriter.makeDirectory(sdir)
        var common = ""
        if let partition { common += "#SBATCH --partition=\(partition)\n" }
        // A shard that finds failures exits 1: that is a result, not a failed task.
        let array = """
            #!/bin/bash
            #SBATCH --job-name=imsim-\(header.scenario)
            #SBATCH --array=0-\(shards - 1)%\(k)
            #SBATCH --cpus-per-task=\(jobs)
            #SBATCH --requeue
            #SBATCH --output=\(sdir)/task-%A_%a.out
            \(common)\(time.map { "#SBATCH --time=\($0)\n" } ?? "")# imsim sweep shard contract: shard $SLURM_ARRAY_TASK_ID of \(shards), results in \(dir)
            echo "imsim shard $SLURM_ARRAY_TASK_ID/\(shards) on ${SLURMD_NODENAME:-?} (restart ${SLURM_RESTART_COUNT:-0})"
            \(Self.shellQuote(exe)) \(shardArgs.map(Self.shellQuote).joined(separator: " "))
            rc=$?
            [ $rc -le 1 ] && exit 0
            exit $rc

            """
        let mergeArgs = ["sweep", "merge", dir] + (bank.map { ["--bank", $0] } ?? [])
        let merge = """
            #!/bin/bash
            #SBATCH --job-name=imsim-merge
            #SBATCH --output=\(sdir)/merge-%j.out
            \(common)\(Self.shellQuote(exe)) \(mergeArgs.map(Self.shellQuote).joined(separator: " ")) > \(Self.shellQuote(dir))/merge.txt 2>&1
            rc=$?
            echo $rc > \(Self.shellQuote(dir))/merge.rc
            cat \(Self.shellQuote(dir))/merge.txt
            exit 0

            """
        try write(array, sdir + "/array.sh", executable: true)
        try write(merge, sdir + "/merge.sh", executable: true)
        var manifest = SweepManifest(header: header, engine: "slurm", jobIDs: [], throttle: k)
        if dryRun {
            try manifest.save(dir)
            print("wrote \(sdir)/array.sh and \(sdir)/merge.sh (not submitted)")
            print("submit: sbatch --parsable \(sdir)/array.sh; sbatch --dependency=afterany:JOBID \(sdir)/merge.sh")
            return
        }
        guard let sbatch = SweepStatusCommand.which("sbatch") else {
            throw SweepIOError("sbatch not found on PATH (install Slurm: Tools/setup.sh --with-slurm; or use --dry-run)")
        }
        try? FileManager.default.removeItem(atPath: dir + "/merge.rc")
        let arrayID = try Self.jobID(SlurmTool.run(sbatch, ["--parsable", sdir + "/array.sh"]))
        manifest.jobIDs = [arrayID]
        try manifest.save(dir)
        let mergeID = try Self.jobID(SlurmTool.run(sbatch, ["--parsable", "--dependency=afterany:\(arrayID)", sdir + "/merge.sh"]))
        manifest.jobIDs = [arrayID, mergeID]
        try manifest.save(dir)
        print("array job \(arrayID): \(shards) shard(s) of \(header.seeds), at most \(k) at once")
        print("merge job \(mergeID): after the array, writes \(dir)/merge.txt and merge.rc")
        print("progress: imsim sweep status \(dir)")
    }

    /// `sbatch --parsable` prints `ID` or `ID;CLUSTER`.
    static func jobID(_ out: String) throws -> String {
        let id = String(out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ";").first ?? "")
        guard !id.isEmpty, id.allSatisfy(\.isNumber) else { throw SweepIOError("sbatch: unexpected answer \"\(out.prefix(100))\"") }
        return id
    }

    func requireDryRun(_ name: String) throws {
        guard dryRun else {
            throw SweepIOError("--engine \(name) only writes the job here: add --dry-run, then submit it with your cluster's tool (Docs/cluster.md)")
        }
    }

    /// The shard command for a container: results exit 1 are not task failures.
    func containerCommand(_ shardArgs: [String]) -> String {
        "imsim " + shardArgs.map(Self.shellQuote).joined(separator: " ") + "; rc=$?; [ $rc -le 1 ]"
    }

    func k8s(dir: String, shardArgs: [String], throttle k: Int, header: SweepHeader) throws {
        try requireDryRun("k8s")
        var args = shardArgs
        if let i = args.firstIndex(of: "--out") { args[i + 1] = "/results" }
        let name = "imsim-sweep-" + header.scenario.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" }
        let cmd = containerCommand(args).replacingOccurrences(of: "\"", with: "\\\"")
        let yaml = """
            # imsim sweep as a Kubernetes Indexed Job: pod I runs shard I of \(shards)
            # (JOB_COMPLETION_INDEX), results on a shared volume; afterwards: imsim sweep merge on it.
            apiVersion: batch/v1
            kind: Job
            metadata:
              name: \(name)
            spec:
              completionMode: Indexed
              completions: \(shards)
              parallelism: \(k)
              backoffLimitPerIndex: 2
              template:
                spec:
                  restartPolicy: Never
                  containers:
                  - name: shard
                    image: \(image)
                    command: ["/bin/sh", "-c", "\(cmd)"]
                    resources:
                      requests: {cpu: "\(jobs)"}
                    volumeMounts:
                    - {name: results, mountPath: /results}
                  volumes:
                  - name: results
                    persistentVolumeClaim: {claimName: imsim-results}

            """
        try write(yaml, dir + "/k8s-job.yaml")
        try SweepManifest(header: header, engine: "k8s", jobIDs: [], throttle: k).save(dir)
        print("wrote \(dir)/k8s-job.yaml (Indexed Job, \(shards) completions, parallelism \(k)); kubectl apply -f it")
    }

    func awsBatch(dir: String, shardArgs: [String], header: SweepHeader) throws {
        try requireDryRun("aws-batch")
        var args = shardArgs
        if let i = args.firstIndex(of: "--out") { args[i + 1] = "/results" }
        struct Doc: Encodable {
            struct Definition: Encodable {
                struct Volume: Encodable {
                    var name: String
                    var efsVolumeConfiguration: [String: String]
                }
                struct Container: Encodable {
                    var image: String
                    var command: [String]
                    var resourceRequirements: [[String: String]]
                    var mountPoints: [[String: String]]
                    var volumes: [Volume]
                }
                var jobDefinitionName: String
                var type = "container"
                var containerProperties: Container
                var retryStrategy = ["attempts": 2]
            }
            struct Submit: Encodable {
                var jobName: String
                var jobQueue = "imsim"
                var jobDefinition: String
                var arrayProperties: [String: Int]
            }
            var note: String
            var jobDefinition: Definition
            var submitJob: Submit
        }
        let name = "imsim-sweep-" + String(header.scenario.map { $0.isLetter || $0.isNumber ? $0 : "-" })
        let doc = Doc(
            note: "imsim sweep as an AWS Batch array job: child I runs shard I of \(shards) (AWS_BATCH_JOB_ARRAY_INDEX); /results is a shared EFS volume; afterwards imsim sweep merge on it. aws batch register-job-definition --cli-input-json (jobDefinition), then aws batch submit-job --cli-input-json (submitJob).",
            jobDefinition: .init(jobDefinitionName: name, containerProperties: .init(
                image: image, command: ["/bin/sh", "-c", containerCommand(args)],
                resourceRequirements: [["type": "VCPU", "value": "\(jobs)"], ["type": "MEMORY", "value": "2048"]],
                mountPoints: [["sourceVolume": "results", "containerPath": "/results"]],
                volumes: [.init(name: "results", efsVolumeConfiguration: ["fileSystemId": "fs-REPLACE"])])),
            submitJob: .init(jobName: name, jobDefinition: name, arrayProperties: ["size": shards]))
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try SweepResultWriter.writeAtomically(Array(try e.encode(doc)) + [0x0A], to: dir + "/aws-batch-job.json")
        try SweepManifest(header: header, engine: "aws-batch", jobIDs: [], throttle: shards).save(dir)
        print("wrote \(dir)/aws-batch-job.json (job definition + array job of \(shards)); register and submit it with aws batch")
    }
}
