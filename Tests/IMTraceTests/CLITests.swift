import Foundation
import IMSimTestSupport
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IMTrace
@testable import IMTraceFormat

typealias CLIResult = ImsimBinary.Result

func imsim(_ args: [String]) throws -> CLIResult { try ImsimBinary.run(args) }

/// The built `imsim` binary: run --trace, the views, diff exit codes, check-determinism.
@Suite(.serialized) struct CLITests {
    @Test func checkDeterminismRunsTwiceInTwoProcessesAndReportsIdentical() throws {
        let r = try imsim(["run", "quickstart", "--seed", "3", "--until", "30s", "--check-determinism"])
        #expect(r.status == 0, "\(r.out)\n\(r.err)")
        #expect(r.out.hasPrefix("identical (digest "))
        #expect(r.out.contains(" events)"))
    }

    @Test func recordThenViewDiffAndLedger() throws {
        let a = temporaryPath("cli-a"), b = temporaryPath("cli-b"), json = temporaryPath("cli-perfetto") + ".json"
        defer { for p in [a, b, json] { try? FileManager.default.removeItem(atPath: p) } }
        let ra = try imsim(["run", "quickstart", "--seed", "1", "--until", "40s", "--trace", a])
        #expect(ra.status == 0, "\(ra.err)")
        #expect(ra.out.contains("trace \(a): "))
        #expect(try imsim(["run", "quickstart", "--seed", "2", "--until", "40s", "--trace", b]).status == 0)

        let same = try imsim(["trace", "diff", a, a])
        #expect(same.status == 0)
        #expect(same.out.contains("records: identical"))
        let different = try imsim(["trace", "diff", a, b])
        #expect(different.status == 1)
        #expect(different.out.contains("seed 1 vs 2"))
        #expect(different.out.contains("first difference at record"))
        #expect(try imsim(["trace", "diff", a, "/nonexistent.imtrace"]).status == 2)

        let show = try imsim(["trace", "show", a, "--kind", "ev.appStart", "--limit", "3"])
        #expect(show.status == 0)
        let lines = show.out.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines.dropFirst().allSatisfy { $0.contains("ev.appStart") })

        let ledger = try imsim(["trace", "ledger", a])
        #expect(ledger.status == 0)
        let obj = try JSONSerialization.jsonObject(with: Data(ledger.out.utf8)) as? [String: Any]
        #expect(obj?["scenario"] as? String == "quickstart")
        #expect(ledger.err.contains("stopped before the end"))

        let export = try imsim(["trace", "export", a, "--format", "chrome-json", "--out", json])
        #expect(export.status == 0, "\(export.err)")
        #expect((try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])?["traceEvents"] != nil)
        // --format perfetto: TrackEvent protobuf, a sequence of Trace.packet (field 1, length-delimited).
        let proto = json + ".perfetto-trace"
        defer { try? FileManager.default.removeItem(atPath: proto) }
        let p = try imsim(["trace", "export", a, "--format", "perfetto", "--out", proto])
        #expect(p.status == 0, "\(p.err)")
        #expect((try Data(contentsOf: URL(fileURLWithPath: proto))).first == 0x0A)
        // pcapng needs the wire bytes (--keep-content): a clear error, no file.
        let pcap = json + ".pcapng"
        let c = try imsim(["trace", "export", a, "--format", "pcapng", "--out", pcap])
        #expect(c.status == 2)
        #expect(c.err.contains("--keep-content"))
        #expect(!FileManager.default.fileExists(atPath: pcap))
    }

    @Test func anUnfinishedTraceNeedsSalvageAndHasNoLedger() throws {
        let path = temporaryPath("cli-unfinished")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var events = Flow.events()
        events.removeLast(2)
        // Everything on this thread: what the "kill" leaves is then exactly the complete blocks
        // (with the writer thread, also the calls and blocks it had not written yet are lost).
        let options = TraceRecorderOptions(writer: TraceWriterOptions(recordsPerBlock: 8)).singleThreaded
        let header = try TraceHeader(seed: 1, scenarioDigest: 2, scenarioName: "flow", options: [TraceOption("epochMs", "\(Flow.epoch)")])
        let recorder = try TraceRecorder(writer: try TraceWriter(path: path, header: header, options: options.writer), options: options, epochMs: Flow.epoch)
        for (e, t) in events { recorder.record(e, at: t) }
        // Killed: no finish. Only complete blocks (of 8 records) are in the file.
        let strict = try imsim(["trace", "show", path])
        #expect(strict.status == 2)
        #expect(strict.err.contains("hint: imsim trace show --salvage"))
        let salvaged = try imsim(["trace", "show", path, "--salvage", "--no-header"])
        #expect(salvaged.status == 0)
        // Each complete block holds a checkpoint (hidden) and 7 records; the partial last block is lost.
        #expect(salvaged.out.split(separator: "\n").count == events.count / 7 * 7)
        #expect(events.count % 7 != 0)
        let ledger = try imsim(["trace", "ledger", path, "--salvage"])
        #expect(ledger.status == 2)
        #expect(ledger.err.contains("no ledger: the trace is unfinished"))
    }

    @Test func aRunKilledMidWriteLeavesASalvageableTrace() throws {
        let path = temporaryPath("cli-killed-run")
        defer { try? FileManager.default.removeItem(atPath: path) }
        // mixed-1k stretched to 30 simulated days: no machine finishes it before the kill, so the
        // test makes no assumption about how fast this one is (the plain 1 h run can end first).
        let scenarioPath = temporaryPath("cli-killed-run-scenario") + ".json"
        defer { try? FileManager.default.removeItem(atPath: scenarioPath) }
        let mixed = try String(contentsOfFile: repositoryFile("Traces/scenarios/mixed-1k.json"), encoding: .utf8)
        #expect(mixed.contains(#""duration": "1h""#))
        try mixed.replacingOccurrences(of: #""duration": "1h""#, with: #""duration": "30d""#)
            .write(toFile: scenarioPath, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = try ImsimBinary.locate()
        // --force: the 30-day estimate exceeds a small machine's memory; the run is killed early.
        p.arguments = ["run", scenarioPath, "--no-oracles", "--force", "--trace", path]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Wait until at least two blocks are on disk.
        var blocks = 0
        for _ in 0..<1200 where blocks < 2 {
            usleep(50_000)
            if let r = try? TraceReader(path: path, mode: .salvage) { blocks = r.blocks.count }
            if !p.isRunning { break }
        }
        #expect(p.isRunning, "the run ended before it could be killed")
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal)
        #expect(blocks >= 2)

        #expect(throws: TraceError.self) { try TraceReader(path: path) }  // no footer
        let reader = try TraceEventReader(path: path, salvage: true)
        var entries: [TraceEntry] = []
        while let e = try reader.next() { entries.append(e) }
        #expect(reader.reader.footerStatus == .missing)
        #expect(entries.count >= 2 * 8192)
        // Kernel events are numbered without gaps, and every block's records decoded.
        let kernel = entries.filter { if case .kernel = $0.event { true } else { false } }
        #expect(kernel.map(\.eventIndex) == (0..<UInt64(kernel.count)).map { Optional($0) })
        #expect(reader.names.devices.count == 1100 || reader.names.devices.count > 1000)
        // Only a torn tail may be damaged.
        for d in reader.reader.damage {
            guard case .truncatedBlock = d.error else { Issue.record("unexpected damage \(d)"); continue }
        }
        let ledger = try imsim(["trace", "ledger", path, "--salvage"])
        #expect(ledger.status == 2)
        #expect(ledger.err.contains("the trace is unfinished"))
    }
}
