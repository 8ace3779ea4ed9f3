import ArgumentParser
import Foundation
import IMSim

/// `imsim bench trace`: trace size and recording cost on a real run (default mixed-1k).
struct BenchTrace: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Trace bytes/event, recording overhead, write and read throughput (default scenario mixed-1k).",
        discussion: """
            Runs SCENARIO (no oracles) with and without a TraceRecorder in this process, --repetitions \
            pairs of a bare and a recorded run back to back (every other pair recorded first; only \
            a run's digest outlives it, so both start on the same heap). Overhead = recorded / bare − 1 of each pair, \
            reported as the median over the pairs (pairs cancel a host whose speed drifts) and as best \
            recorded over best bare, for wall time (what the user waits; the goal), the simulation \
            thread's CPU time, and the process's CPU time (all threads: the writer thread's \
            compression included). Size: trace file bytes per record and per kernel event. Write: the \
            recorded events are decoded and recorded again into a new trace file, single-threaded \
            (encode + CRC-32C + zstd + write), timed alone, best of up to 5. Read: every record decoded into a \
            TraceEvent. MB/s count uncompressed payload bytes. Goals (issue 30): ≤ 4 bytes/record, \
            overhead ≤ 10%.
            --synthetic N measures the schema on N records of SyntheticWorldStream instead of a run \
            (no overhead figure).
            """
    )

    @Argument(help: "Scenario file or built-in name.") var scenario = "mixed-1k"
    @Flag(help: "Short run (first 5 simulated minutes, 1 repetition).") var quick = false
    @Option(help: "Simulated time to run (default: the whole scenario, 5m with --quick).") var until: String?
    @Option(help: "Run seed (default: the scenario's, else 1).") var seed: UInt64?
    @Option(help: "Bare/recorded pairs to time (single pairs swing by ±10 points on a shared host; the median of 9 is steadier).") var repetitions = 9
    @Option(help: "zstd level.") var level: Int32 = 3
    @Option(help: "Trace level 1–3.") var traceLevel = 3
    @Option(help: "Trace format version to write (1: without the record schema's context fields, for before/after figures).")
    var format: UInt16 = TraceFormat.majorVersion
    @Option(help: "Use N records of the synthetic world stream instead of a run.") var synthetic: Int?
    @Flag(help: "Print JSON instead of text.") var json = false
    @Flag(name: .customLong("single-threaded"),
          help: "Record without the writer thread (compression and file I/O on the simulation thread too).")
    var singleThreaded = false
    @Flag(help: "Also print records and uncompressed bytes per kind, and what leaving each kind out saves compressed.")
    var breakdown = false

    struct Report: Codable {
        var benchmark = "trace"
        var build: String
        var source: String
        var simulated: String?
        var kernelEvents: UInt64
        var records: UInt64
        var blocks: Int
        var fileBytes: Int
        var uncompressedBytes: Int
        var bytesPerRecord: Double
        var bytesPerKernelEvent: Double
        var uncompressedBytesPerRecord: Double
        var compressionRatio: Double
        /// Best of the repetitions.
        var bareSeconds: Double?
        var recordedSeconds: Double?
        /// Simulation thread's CPU time, best of the repetitions.
        var bareCPUSeconds: Double?
        var recordedCPUSeconds: Double?
        /// All threads' CPU time of the recorded run, best of the repetitions.
        var recordedProcessCPUSeconds: Double?
        /// Wall time, median of the pairs' overheads (the goal's figure).
        var overheadPercent: Double?
        /// Wall time, best recorded over best bare.
        var overheadBestWallPercent: Double?
        /// Simulation thread's CPU time and all threads' CPU time, median of the pairs.
        var overheadThreadCPUPercent: Double?
        var overheadProcessCPUPercent: Double?
        /// Every pair's wall-time overhead, in run order.
        var overheadWallPairs: [Double]?
        var writerThread: Bool
        var writeSeconds: Double
        var writeMBPerSecond: Double
        var writeNsPerRecord: Double
        var readSeconds: Double
        var readMBPerSecond: Double
        var readNsPerRecord: Double
        var goalBytesPerEvent: Bool
        var goalOverhead: Bool?
    }

    func validate() throws {
        guard repetitions >= 1 else { throw ValidationError("--repetitions must be at least 1") }
        guard TraceLevel(rawValue: traceLevel) != nil else { throw ValidationError("--trace-level must be 1, 2 or 3") }
        if let s = synthetic, s < 1 { throw ValidationError("--synthetic must be positive") }
        guard TraceFormat.readableMajorVersions.contains(format) else { throw ValidationError("--format must be 1 or 2") }
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        let dir = FileManager.default.temporaryDirectory.path
        let pid = ProcessInfo.processInfo.processIdentifier
        let path = "\(dir)/imsim-bench-trace-\(pid).imtrace", copy = "\(dir)/imsim-bench-trace-\(pid)-rewrite.imtrace"
        defer { for p in [path, copy] { try? FileManager.default.removeItem(atPath: p) } }
        let reps = quick ? 1 : repetitions
        var options = TraceRecorderOptions(level: TraceLevel(rawValue: traceLevel)!, writer: TraceWriterOptions(compressionLevel: level, formatMajor: format))
        if singleThreaded { options = options.singleThreaded }

        var source = "", simulated: String?
        var events: UInt64 = 0
        var bare: Double?, recorded: Double?, bareCPU: Double?, recordedCPU: Double?, recordedProcessCPU: Double?
        var pairs: (wall: [Double], thread: [Double], process: [Double]) = ([], [], [])
        var summary: TraceWriteSummary
        if let n = synthetic {
            source = "synthetic world stream, \(n) records (SyntheticWorldStream, 1000 devices)"
            let (s, k) = try writeSynthetic(n, options: options, to: path)
            summary = s
            events = k
        } else {
            let (sc, _) = try Scenario.load(pathOrName: scenario)
            let runSeed = seed ?? sc.seed ?? 1
            let limit = try (until ?? (quick ? "5m" : nil)).map { SimTime.zero + (try SimDuration(parsing: $0)) }
            source = "imsim run \(scenario) --seed \(runSeed) --no-oracles" + (limit.map { " --until \($0)" } ?? "")
            if !json { print("imsim bench trace — \(source), zstd \(level), level \(traceLevel), format \(format) (\(IMSimVersion.buildConfiguration) build)") }
            var bestBare = Double.infinity, bestRecorded = Double.infinity, bestBareCPU = Double.infinity
            var bestRecordedCPU = Double.infinity, bestRecordedProcess = Double.infinity
            var last: TraceWriteSummary?
            /// One timed run; only its digest and figures outlive it, so the other run of the pair
            /// starts on the same heap (a world kept alive made the next run fault in fresh pages).
            func timed(recording: Bool) throws -> (digest: UInt64, events: UInt64, simulated: String, wall: Double,
                                                  thread: Double, process: Double, summary: TraceWriteSummary?) {
                let c0 = CPUClock.threadSeconds(), p0 = CPUClock.processSeconds()
                let ((world, s), wall) = try Stopwatch.time { () throws -> (World, TraceWriteSummary?) in
                    let run = try ScenarioRun(scenario: sc, seed: runSeed)
                    guard recording else {
                        run.run(until: limit)
                        return (run.world, nil)
                    }
                    let r = try TraceRecorder(path: path, scenario: sc, seed: runSeed, options: options)
                    r.attach(to: run)
                    let reason = run.run(until: limit)
                    return (run.world, try r.finish(stopReason: reason.description))
                }
                let thread = CPUClock.threadSeconds() - c0, process = CPUClock.processSeconds() - p0
                return (world.sim.digest.value, world.sim.counters.eventsDispatched, world.now.description, wall, thread, process, s)
            }
            for i in 0..<reps {
                // A pair back to back, so drift in host speed hits both alike; every second pair runs the
                // recorded one first, so neither position's bias (heap, caches, turbo) favours one.
                let recordedFirst = i % 2 == 1
                let first = try timed(recording: recordedFirst)
                let second = try timed(recording: !recordedFirst)
                let (b, r) = recordedFirst ? (second, first) : (first, second)
                guard b.digest == r.digest else { throw ValidationError("recording changed the run (digest differs)") }
                bestBare = min(bestBare, b.wall)
                bestBareCPU = min(bestBareCPU, b.thread)
                bestRecorded = min(bestRecorded, r.wall)
                bestRecordedCPU = min(bestRecordedCPU, r.thread)
                bestRecordedProcess = min(bestRecordedProcess, r.process)
                pairs.wall.append((r.wall / b.wall - 1) * 100)
                pairs.thread.append((r.thread / b.thread - 1) * 100)
                pairs.process.append((r.process / b.process - 1) * 100)
                if !json {
                    print("  pair \(i + 1)/\(reps)\(recordedFirst ? " (recorded first)" : ""): wall \(String(format: "%.2f", b.wall)) → "
                          + "\(String(format: "%.2f", r.wall)) s (\(String(format: "%+.1f", pairs.wall.last!))%)")
                }
                events = r.events
                simulated = r.simulated
                last = r.summary
            }
            summary = last!
            bare = bestBare
            recorded = bestRecorded
            bareCPU = bestBareCPU
            recordedCPU = bestRecordedCPU
            recordedProcessCPU = bestRecordedProcess
        }

        // Write: replay the decoded events into a new trace, timing only the recording.
        var bestWrite = Double.infinity
        // Single-threaded: the figure is the whole cost of a record, wherever it is paid.
        for _ in 0..<min(reps, 5) { bestWrite = min(bestWrite, try rewrite(path, to: copy, options: options.singleThreaded)) }
        // Read: decode every record.
        var bestRead = Double.infinity
        for _ in 0..<min(reps, 5) {
            let (n, t) = try Stopwatch.time { () throws -> UInt64 in
                let r = try TraceEventReader(path: path)
                var n: UInt64 = 0
                while let e = try r.next() { n &+= e.index & 1 }
                return n
            }
            if n == UInt64.max { print("") }
            bestRead = min(bestRead, t)
        }

        let records = Double(summary.records)
        let mb = Double(summary.uncompressedBytes) / 1e6
        func median(_ xs: [Double]) -> Double? {
            guard !xs.isEmpty else { return nil }
            let s = xs.sorted()
            return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        }
        let overhead = median(pairs.wall)
        let overheadBestWall = bare.flatMap { b in recorded.map { ($0 / b - 1) * 100 } }
        let perEvent = events == 0 ? 0 : Double(summary.fileBytes) / Double(events)
        let report = Report(
            build: IMSimVersion.buildConfiguration, source: source, simulated: simulated, kernelEvents: events,
            records: summary.records, blocks: summary.blocks, fileBytes: summary.fileBytes, uncompressedBytes: summary.uncompressedBytes,
            bytesPerRecord: Double(summary.fileBytes) / records, bytesPerKernelEvent: perEvent,
            uncompressedBytesPerRecord: Double(summary.uncompressedBytes) / records,
            compressionRatio: Double(summary.uncompressedBytes) / Double(summary.fileBytes),
            bareSeconds: bare, recordedSeconds: recorded, bareCPUSeconds: bareCPU, recordedCPUSeconds: recordedCPU,
            recordedProcessCPUSeconds: recordedProcessCPU, overheadPercent: overhead, overheadBestWallPercent: overheadBestWall,
            overheadThreadCPUPercent: median(pairs.thread), overheadProcessCPUPercent: median(pairs.process),
            overheadWallPairs: pairs.wall.isEmpty ? nil : pairs.wall, writerThread: options.writer.writerThread,
            writeSeconds: bestWrite, writeMBPerSecond: mb / bestWrite, writeNsPerRecord: bestWrite * 1e9 / records,
            readSeconds: bestRead, readMBPerSecond: mb / bestRead, readNsPerRecord: bestRead * 1e9 / records,
            goalBytesPerEvent: Double(summary.fileBytes) / records <= 4, goalOverhead: overhead.map { $0 <= 10 })
        if json { print(BenchFormat.json(report)); return }
        if synthetic != nil { print("imsim bench trace — \(source), zstd \(level) (\(IMSimVersion.buildConfiguration) build)") }
        let f2 = { (x: Double) in String(format: "%.2f", x) }
        if let simulated { print("  run: \(events) kernel events, \(simulated) simulated") }
        print("  size: \(summary.records) records in \(summary.blocks) blocks, \(summary.fileBytes) bytes: \(f2(report.bytesPerRecord)) bytes/record"
              + (events > 0 ? ", \(f2(perEvent)) bytes/kernel event" : "")
              + " (\(f2(report.uncompressedBytesPerRecord)) uncompressed, ratio \(f2(report.compressionRatio))×)")
        if let bare, let recorded, let bareCPU, let recordedCPU, let recordedProcessCPU, let overhead, let overheadBestWall,
           let thread = report.overheadThreadCPUPercent, let process = report.overheadProcessCPUPercent {
            let pct = { (x: Double) in String(format: "%+.1f%%", x) }
            print("  overhead (\(options.writer.writerThread ? "writer thread" : "single-threaded")): wall \(pct(overhead)) median of \(reps) pair\(reps == 1 ? "" : "s")"
                  + " (best \(f2(bare)) → \(f2(recorded)) s, \(pct(overheadBestWall)))")
            print("            CPU: simulation thread \(pct(thread)) (best \(f2(bareCPU)) → \(f2(recordedCPU)) s),"
                  + " all threads \(pct(process)) (recorded best \(f2(recordedProcessCPU)) s)")
        }
        print("  write: \(f2(report.writeMBPerSecond)) MB/s, \(String(format: "%.0f", report.writeNsPerRecord)) ns/record (record + encode + zstd + write)")
        print("  read:  \(f2(report.readMBPerSecond)) MB/s, \(String(format: "%.0f", report.readNsPerRecord)) ns/record (read + zstd + CRC + decode to TraceEvent)")
        if breakdown { try printBreakdown(path, options: options) }
        print("  goals: ≤ 4 bytes/record \(report.goalBytesPerEvent ? "met" : "NOT met")"
              + (report.goalOverhead.map { ", overhead ≤ 10% (wall, median) \($0 ? "met" : "NOT met")" } ?? ""))
    }

    /// Per kind: records, uncompressed bytes (head + body), and the compressed bytes saved by
    /// writing the trace without that kind (an ablation: what the kind really costs after zstd).
    private func printBreakdown(_ path: String, options: TraceRecorderOptions) throws {
        var count: [UInt16: Int] = [:], bytes: [UInt16: Int] = [:]
        let raw = try TraceReader(path: path)
        while let r = try raw.next() {
            count[r.kind, default: 0] += 1
            bytes[r.kind, default: 0] += r.bodyRange.count + 3
        }
        let copy = path + ".ablation"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        func size(without kind: UInt16?) throws -> Int {
            let reader = try TraceEventReader(path: path)
            let w = try TraceWriter(path: copy, header: reader.header, options: options.writer)
            while let e = try reader.next() {
                if e.event.kind == kind { continue }
                try w.append(kind: e.event.kind, time: e.time) { e.event.encode(into: &$0, epochMs: reader.epochMs) }
            }
            return try w.finish(finalDigest: 0).fileBytes
        }
        let all = try size(without: nil)
        print("  by kind (records, uncompressed bytes/record, compressed bytes saved without it per record):")
        for k in count.keys.sorted(by: { bytes[$0]! > bytes[$1]! }).prefix(24) {
            let saved = all - (try size(without: k))
            print("    " + TraceText.pad(TraceKinds.name(k), 24) + TraceText.padLeft(String(count[k]!), 9) + "  "
                  + TraceText.padLeft(String(format: "%.1f", Double(bytes[k]!) / Double(count[k]!)), 6) + "  "
                  + TraceText.padLeft(String(format: "%.2f", Double(saved) / Double(count[k]!)), 6))
        }
    }

    private func writeSynthetic(_ n: Int, options: TraceRecorderOptions, to path: String) throws -> (TraceWriteSummary, UInt64) {
        var stream = SyntheticWorldStream(seed: seed ?? 1)
        let header = try TraceHeader(seed: seed ?? 1, scenarioDigest: 0, scenarioName: "synthetic-world",
                                     options: [TraceOption("epochMs", "\(stream.epochMs)")])
        let r = try TraceRecorder(writer: try TraceWriter(path: path, header: header, options: options.writer), options: options,
                                  epochMs: stream.epochMs)
        for d in stream.deviceRecords() { r.record(d, at: .zero) }
        for _ in 0..<n {
            let (e, t) = stream.next()
            r.record(e, at: t)
        }
        return (try r.close(finalDigest: 0), stream.kernelEvents)
    }

    /// Records the events of `path` again into `copy`, in chunks decoded up front; returns the
    /// seconds spent recording.
    private func rewrite(_ path: String, to copy: String, options: TraceRecorderOptions) throws -> Double {
        let reader = try TraceEventReader(path: path)
        let r = try TraceRecorder(writer: try TraceWriter(path: copy, header: reader.header, options: options.writer),
                                  options: options, epochMs: reader.epochMs)
        var total = 0.0
        var chunk: [(TraceEvent, SimTime)] = []
        chunk.reserveCapacity(100_000)
        var done = false
        while !done {
            chunk.removeAll(keepingCapacity: true)
            while chunk.count < 100_000 {
                guard let e = try reader.next() else { done = true; break }
                if case .meta(.checkpoint) = e.event { continue }
                chunk.append((e.event, e.time))
            }
            let (_, t) = Stopwatch.time { for (e, time) in chunk { r.record(e, at: time) } }
            total += t
        }
        let (_, t) = try Stopwatch.time { try r.close(finalDigest: 0) }
        return total + t
    }
}
