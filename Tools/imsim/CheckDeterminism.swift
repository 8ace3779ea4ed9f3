import ArgumentParser
import Foundation
import IMSim

/// `imsim run SCENARIO --check-determinism`: the same run twice, in two child processes of this
/// binary (so per-process state such as Swift's hasher seed differs), each writing a trace; the
/// traces are compared record by record (`TraceDiff`).
struct DeterminismCheck {
    let command: RunCommand

    /// Arguments of each child: the parent's run options, a trace path, and JSON output.
    func childArguments(trace: String) -> [String] {
        var a = ["run", command.scenario, "--trace", trace, "--json"]
        if let s = command.seed { a += ["--seed", String(s)] }
        if let u = command.until { a += ["--until", u] }
        if command.noOracles { a.append("--no-oracles") }
        if let o = command.oracles { a += ["--oracles", o] }
        if command.continueAfterViolation { a.append("--continue") }
        if command.swarm { a.append("--swarm") }
        if let b = command.bugs { a += ["--bugs", b] }
        if command.keepContent { a.append("--keep-content") }
        a += ["--trace-level", String(command.traceLevel), "--trace-zstd-level", String(command.traceZstdLevel)]
        a += ["--trace-format", String(command.traceFormat)]
        return a
    }

    struct Child {
        var process: Process
        var stdout: Pipe
        var stderr: Pipe
        var trace: String
    }

    func run() throws {
        let exe = Self.executable()
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("imsim-determinism-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var keepDir = false
        defer { if !keepDir { try? FileManager.default.removeItem(at: dir) } }

        // Both children run at once (2 cores); each is a full, independent run.
        var children: [Child] = []
        for name in ["a", "b"] {
            let trace = dir.appendingPathComponent("\(name).imtrace").path
            let p = Process()
            p.executableURL = exe
            p.arguments = childArguments(trace: trace)
            let out = Pipe(), err = Pipe()
            p.standardOutput = out
            p.standardError = err
            do { try p.run() } catch {
                TraceCLI.printError("imsim: cannot start \(exe.path): \(error)")
                throw ExitCode(2)
            }
            children.append(Child(process: p, stdout: out, stderr: err, trace: trace))
        }
        var reports: [RunReport] = []
        for (i, c) in children.enumerated() {
            // Read both pipes before waiting, so a chatty child never blocks on a full pipe.
            let outData = c.stdout.fileHandleForReading.readDataToEndOfFile()
            let errData = c.stderr.fileHandleForReading.readDataToEndOfFile()
            c.process.waitUntilExit()
            let status = c.process.terminationStatus
            guard c.process.terminationReason == .exit, status == 0 || status == 1,
                  let report = try? JSONDecoder().decode(RunReport.self, from: outData) else {
                TraceCLI.printError("imsim: run \(i + 1) of 2 failed (exit \(status)):")
                FileHandle.standardError.write(errData)
                throw ExitCode(2)
            }
            reports.append(report)
        }
        let diff: TraceDiff
        do {
            diff = try TraceDiff.compare({ () throws(TraceError) in try TraceEventReader(path: children[0].trace) },
                                         { () throws(TraceError) in try TraceEventReader(path: children[1].trace) })
        } catch {
            TraceCLI.printError("imsim: comparing the traces: \(error)")
            throw ExitCode(2)
        }
        if let keep = command.trace {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: children[0].trace, toPath: keep)
        }
        let a = reports[0], b = reports[1]
        if diff.isIdentical && a.digest == b.digest {
            print("identical (digest \(a.digest), \(a.events) events)")
            print("  imsim run \(command.scenario) --seed \(a.seed)" + (command.until.map { " --until \($0)" } ?? "")
                  + ": 2 processes, \(diff.recordsCompared) trace records compared")
            return
        }
        keepDir = true
        print("DIVERGENT: the same run differs between two processes")
        print("  digests \(a.digest) vs \(b.digest); events \(a.events) vs \(b.events)")
        print(diff.text(labelA: children[0].trace, labelB: children[1].trace))
        print("traces kept in \(dir.path)")
        throw ExitCode(1)
    }

    /// This executable (the children must be the same build).
    static func executable() -> URL {
        #if os(Linux)
        let proc = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        if FileManager.default.isExecutableFile(atPath: proc.path) { return proc }
        #endif
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    }
}
