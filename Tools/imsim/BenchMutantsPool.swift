import ArgumentParser
import Foundation
import IMSim

/// Progress and errors of `imsim bench mutants` on stderr.
final class MutantLog {
    func note(_ s: String) { FileHandle.standardError.write(Data("\(s)\n".utf8)) }
    func fail(_ s: String) -> Never {
        FileHandle.standardError.write(Data("imsim bench mutants: \(s)\n".utf8))
        exit(1)
    }
}

enum MutantSelection {
    /// "1,5,20-30" → the ids.
    static func parseIds(_ s: String) throws -> Set<Int> {
        var ids = Set<Int>()
        for part in s.split(separator: ",") {
            let r = part.split(separator: "-", maxSplits: 1)
            if r.count == 2, let a = Int(r[0]), let b = Int(r[1]), a >= 1, a <= b {
                ids.formUnion(a...b)
            } else if r.count == 1, let a = Int(r[0]), a >= 1 {
                ids.insert(a)
            } else {
                throw ValidationError("--mutants: \"\(part)\" is not an id or a range like 20-30")
            }
        }
        return ids
    }

    /// A deterministic sample: the `count` items with the smallest FNV-1a hash of seed and key.
    static func sample<T>(_ items: [(key: String, value: T)], count: Int, seed: UInt64) -> [T] {
        func fnv(_ s: String) -> UInt64 {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
            for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            return h
        }
        return items.map { (fnv($0.key), $0.key, $0.value) }
            .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
            .prefix(count).map(\.2)
    }

    /// `KEY  # why it is equivalent` per line; `#` lines and blank lines are comments. A key
    /// without a reason is an error: equivalence is argued one mutant at a time.
    static func parseEquivalences(_ text: String, path: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let hash = line.range(of: "#", options: [], range: line.firstIndex(of: " ").map { $0..<line.endIndex }) else {
                throw ValidationError("\(path):\(n + 1): an equivalence needs a reason: KEY  # why")
            }
            let key = line[..<hash.lowerBound].trimmingCharacters(in: .whitespaces)
            let reason = line[hash.upperBound...].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty, !reason.isEmpty else {
                throw ValidationError("\(path):\(n + 1): an equivalence needs a key and a reason: KEY  # why")
            }
            result[key] = reason
        }
        return result
    }
}

/// One child imsim process of a budget step, its stdout in a file.
struct MutantProcess {
    let process: Process
    let stdout: URL
    let started: Date

    static func start(bin: String, args: [String], mutant: Int?, root: URL, stdout: URL) throws -> MutantProcess {
        try FileManager.default.createDirectory(at: stdout.deletingLastPathComponent(), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: bin)
        p.arguments = args
        p.currentDirectoryURL = root
        var env = ProcessInfo.processInfo.environment
        if let m = mutant { env["IMSIM_MUTANT"] = String(m) } else { env.removeValue(forKey: "IMSIM_MUTANT") }
        p.environment = env
        p.standardOutput = try FileHandle(forWritingTo: stdout)
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return MutantProcess(process: p, stdout: stdout, started: Date())
    }

    /// The process and every descendant (sweep workers), so a hung mutant leaves nothing behind.
    func killTree() {
        var pids = [process.processIdentifier]
        var i = 0
        while i < pids.count {
            pids += Self.children(of: pids[i])
            i += 1
        }
        for p in pids { kill(p, SIGKILL) }
        process.waitUntilExit()
    }

    static func children(of pid: Int32) -> [Int32] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var result: [Int32] = []
        for e in entries {
            guard let p = Int32(e), let stat = try? String(contentsOfFile: "/proc/\(e)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // pid (comm) state ppid …
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == pid { result.append(p) }
        }
        return result
    }
}

/// Runs mutants `jobs` at a time, each through the budget's steps until the first kill.
final class MutantPool {
    let jobs: Int
    let bin: String
    let root: URL
    let work: URL
    let plan: [BenchMutants.Step]
    let log: MutantLog

    init(jobs: Int, bin: String, root: URL, work: URL, plan: [BenchMutants.Step], log: MutantLog) {
        self.jobs = jobs
        self.bin = bin
        self.root = root
        self.work = work
        self.plan = plan
        self.log = log
    }

    struct Slot {
        var mutant: BenchMutants.Mutant
        var step: Int
        var proc: MutantProcess
        var started: Date
    }

    static func judge(_ s: BenchMutants.Step, process p: MutantProcess, outDir: String) -> BenchMutants.StepOutcome {
        let status = p.process.terminationStatus
        let signalled = p.process.terminationReason == .uncaughtSignal
        let out = (try? String(contentsOf: p.stdout, encoding: .utf8)) ?? ""
        switch s.kind {
        case .regress:
            if signalled { return .init(failed: true, killedBy: "crash", failingSeeds: [], detail: "regress died of signal \(status)") }
            if status == 0 { return .init(failed: false, failingSeeds: []) }
            let first = out.split(separator: "\n").first { $0.hasPrefix("✘") }.map(String.init)
            return .init(failed: true, killedBy: status == 1 ? "golden" : "crash", failingSeeds: [], detail: first ?? "regress exit \(status)")
        case .sweep:
            // The file's seed lines are `SweepSeedLine`s (no wall time); `--stop-after 1` leaves it
            // `.partial` (the sweep stopped on purpose). Each step has its own directory, so a
            // passing step's complete file cannot stand in for the next step's partial one.
            let file = SweepResultFile.read(directory: outDir)
            let failed = (file?.lines ?? []).filter { $0.outcome != .pass }.sorted { $0.seed < $1.seed }
            let failing = failed.map(\.seed)
            let firstFail = failed.first
            if signalled { return .init(failed: true, killedBy: "crash", failingSeeds: failing, detail: "sweep died of signal \(status)") }
            if status == 0 { return .init(failed: false, failingSeeds: []) }
            if let r = firstFail {
                let by = r.outcome == .error ? "crash" : (r.oracle ?? "?")
                return .init(failed: true, killedBy: by, failingSeeds: failing,
                             detail: "seed \(r.seed): \((r.detail ?? "").oneLine)")
            }
            // No result line: the worker died (a trap) before answering.
            return .init(failed: true, killedBy: "crash", failingSeeds: failing, detail: "sweep exit \(status), worker died")
        }
    }

    func run(_ mutants: [BenchMutants.Mutant]) -> [BenchMutants.Result] {
        var queue = mutants[...]
        var slots: [Slot?] = Array(repeating: nil, count: jobs)
        var results: [BenchMutants.Result] = []
        let start = Date()
        var lastProgress = Date.distantPast
        var counts = (killed: 0, survived: 0, timedOut: 0)

        func outDir(_ m: BenchMutants.Mutant) -> URL { work.appendingPathComponent("runs/m\(m.id)") }
        func stepDir(_ m: BenchMutants.Mutant, _ step: Int) -> URL { outDir(m).appendingPathComponent("step\(step)") }
        func launch(_ m: BenchMutants.Mutant, step: Int) -> Slot? {
            let s = plan[step]
            let dir = outDir(m)
            do {
                let p = try MutantProcess.start(bin: bin, args: s.arguments(out: stepDir(m, step).path, stopAfterFirst: true), mutant: m.id,
                                                root: root, stdout: dir.appendingPathComponent("step\(step).out"))
                return Slot(mutant: m, step: step, proc: p, started: Date())
            } catch {
                log.fail("cannot start \(bin): \(error)")
            }
        }
        func finish(_ slot: Slot, _ status: BenchMutants.Status, _ outcome: BenchMutants.StepOutcome?) {
            let m = slot.mutant
            let step = plan[slot.step]
            results.append(.init(id: m.id, key: m.key, module: m.module, location: "\(m.file):\(m.line):\(m.column)",
                                 function: m.function, op: m.op, before: m.before, after: m.after, status: status,
                                 killedBy: outcome?.killedBy, step: status == .survived ? nil : step.name,
                                 detail: outcome?.detail, wallSeconds: Date().timeIntervalSince(slot.started),
                                 equivalenceReason: nil))
            switch status {
            case .killed: counts.killed += 1
            case .survived: counts.survived += 1
            case .timedOut: counts.timedOut += 1
            case .equivalent: break
            }
            try? FileManager.default.removeItem(at: outDir(m))
        }

        while true {
            for i in slots.indices where slots[i] == nil {
                guard let m = queue.popFirst() else { break }
                slots[i] = launch(m, step: 0)
                slots[i]!.started = Date()
            }
            if slots.allSatisfy({ $0 == nil }) { break }
            for i in slots.indices {
                guard var slot = slots[i] else { continue }
                let step = plan[slot.step]
                if slot.proc.process.isRunning {
                    if Date().timeIntervalSince(slot.proc.started) > step.timeout {
                        slot.proc.killTree()
                        finish(slot, .timedOut, .init(failed: true, killedBy: nil, failingSeeds: [],
                                                      detail: "\(step.name) ran over \(Int(step.timeout)) s"))
                        slots[i] = nil
                    }
                    continue
                }
                let outcome = Self.judge(step, process: slot.proc, outDir: stepDir(slot.mutant, slot.step).path)
                if outcome.failed {
                    finish(slot, .killed, outcome)
                    slots[i] = nil
                } else if slot.step + 1 < plan.count {
                    let started = slot.started
                    slot = launch(slot.mutant, step: slot.step + 1)!
                    slot.started = started
                    slots[i] = slot
                } else {
                    finish(slot, .survived, nil)
                    slots[i] = nil
                }
            }
            let now = Date()
            if now.timeIntervalSince(lastProgress) >= 15 || (queue.isEmpty && slots.allSatisfy { $0 == nil }) {
                lastProgress = now
                let done = results.count
                let elapsed = now.timeIntervalSince(start)
                let eta = done > 0 ? elapsed / Double(done) * Double(mutants.count - done) : 0
                log.note(String(format: "[%d/%d mutants] killed %d, survived %d, timed out %d — %.0f s elapsed, ETA %.0f s",
                                done, mutants.count, counts.killed, counts.survived, counts.timedOut, elapsed, eta))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return results
    }
}
