import ArgumentParser
import Foundation
import IMSim

/// `imsim bench export`: the exports for outside tools (Docs/look.md) on one recorded run —
/// Chrome JSON vs Perfetto protobuf vs pcapng — speed (trace records read per second) and size.
/// Formats are timed in rotating order within one process, so the ratios hold on a loaded machine.
struct BenchExport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export speed (records/s) and size: chrome-json vs perfetto (protobuf) vs pcapng, one run.",
        discussion: """
            Records SCENARIO at --seed into a temporary trace with --keep-content (pcapng needs the \
            wire bytes; all formats read the same file), then exports it --rounds times per format, \
            formats in rotating order, each to a temporary file. Reports the best time per format, \
            records/s (trace records read per second, all passes included: chrome-json and \
            perfetto read the trace twice, pcapng once), bytes, bytes per record, and ratios to \
            chrome-json. Build with -c release.
            """
    )

    @Argument(help: "Scenario name or file.") var scenario = "mixed-1k"
    @Option(help: "Run seed.") var seed: UInt64 = 1
    @Option(help: "Timed exports per format; the best is reported.") var rounds = 5
    @Flag(help: "Print JSON instead of text.") var json = false

    struct FormatReport: Codable {
        var format: String
        var bytes: Int
        var bytesPerRecord: Double
        var bestSeconds: Double
        var recordsPerSecond: Double
        var speedVsJSON: Double
        var sizeVsJSON: Double
    }

    struct Report: Codable {
        var benchmark = "export"
        var build: String
        var scenario: String
        var seed: UInt64
        var records: UInt64
        var traceBytes: Int
        var rounds: Int
        var formats: [FormatReport]
    }

    func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
    }

    func run() throws {
        let (sc, _) = try Scenario.load(pathOrName: scenario)
        let dir = NSTemporaryDirectory() + "imsim-bench-export-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tracePath = dir + "/run.imtrace"
        let run = try ScenarioRun(scenario: sc, seed: seed)
        let recorder = try TraceRecorder(path: tracePath, scenario: sc, seed: seed,
                                         options: TraceRecorderOptions(keepContent: true, level: .full))
        recorder.attach(to: run)
        let summary = try recorder.finish(stopReason: run.run(until: nil).description)

        let formats = ["chrome-json", "perfetto", "pcapng"]
        var best = [String: Double](), size = [String: Int]()
        for round in 0..<rounds {
            for i in 0..<formats.count {
                let format = formats[(i + round) % formats.count]
                let out = try TextOutput(path: dir + "/out." + format)
                let open = { () throws(TraceError) -> TraceEventReader in try TraceEventReader(path: tracePath) }
                let (_, secs) = try Stopwatch.time { () throws -> Void in
                    switch format {
                    case "chrome-json": _ = try TraceExportPerfetto.run(open: open, filter: TraceFilter(), to: out)
                    case "perfetto": _ = try TraceExportPerfettoProto.run(open: open, filter: TraceFilter(), to: out)
                    default: _ = try TraceExportPcapng.run(try open(), to: out)
                    }
                    try out.commit()
                }
                best[format] = min(best[format] ?? .infinity, secs)
                size[format] = out.byteCount
            }
        }
        let records = Double(summary.records)
        let jsonSecs = best["chrome-json"]!, jsonBytes = Double(size["chrome-json"]!)
        let report = Report(
            build: "imsim \(IMSimVersion.string) (\(IMSimVersion.buildConfiguration))", scenario: sc.name, seed: seed, records: summary.records, traceBytes: summary.fileBytes,
            rounds: rounds,
            formats: formats.map { f in
                FormatReport(format: f, bytes: size[f]!, bytesPerRecord: Double(size[f]!) / records, bestSeconds: best[f]!,
                             recordsPerSecond: records / best[f]!, speedVsJSON: jsonSecs / best[f]!,
                             sizeVsJSON: Double(size[f]!) / jsonBytes)
            })
        if json {
            print(BenchFormat.json(report))
            return
        }
        print("export \(report.scenario) seed \(seed): \(summary.records) records, trace \(summary.fileBytes) bytes; best of \(rounds) (\(report.build))")
        for f in report.formats {
            print("  " + f.format.padding(toLength: 12, withPad: " ", startingAt: 0)
                  + String(format: "%12d bytes  %7.1f B/record  %8.3f s  %10.0f records/s  speed ×%.2f  size ×%.2f vs chrome-json",
                           f.bytes, f.bytesPerRecord, f.bestSeconds, f.recordsPerSecond, f.speedVsJSON, f.sizeVsJSON))
        }
    }
}
