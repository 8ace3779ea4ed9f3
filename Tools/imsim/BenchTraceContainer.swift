import ArgumentParser
import Foundation
import IMSim

/// `imsim bench trace-container`: the trace container alone (no simulated world), on the
/// synthetic IM-like stream. `imsim bench trace` measures the world's record schema (mixed-1k,
/// recording overhead).
struct BenchTraceContainer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace-container",
        abstract: "Trace container write/read throughput and bytes/record on a synthetic IM-like stream.",
        discussion: """
            Records are generated up front (SyntheticTraceStream: 8 kinds, small ids, 0/µs/ms/s \
            time deltas, occasional interned strings), then written to a temporary file through \
            TraceWriter (encode + CRC-32C + zstd + write) and read back through TraceReader \
            (read + zstd + CRC-32C + framing checks + body decode). MB/s count uncompressed \
            payload bytes. The best of --repetitions runs is reported; every run is checked to \
            read back exactly the records written.
            """
    )

    @Option(help: "Records per run (default 2,000,000; 200,000 with --quick).") var records: Int?
    @Option(help: "Comma-separated zstd levels.") var levels = "1,3"
    @Option(help: "Records per block.") var blockRecords = 8192
    @Option(help: "Stream seed.") var seed: UInt64 = 1
    @Option(help: "Timed repetitions per level; the best is reported.") var repetitions = 3
    @Flag(help: "Small run that only proves the build works (CI).") var quick = false
    @Flag(help: "Print JSON instead of text.") var json = false

    struct LevelReport: Codable {
        var level: Int32
        var records: Int
        var blocks: Int
        var fileBytes: Int
        var uncompressedBytes: Int
        var bytesPerRecord: Double
        var uncompressedBytesPerRecord: Double
        var compressionRatio: Double
        var writeSeconds: Double
        var writeMBPerSecond: Double
        var writeNsPerRecord: Double
        var readSeconds: Double
        var readMBPerSecond: Double
        var readNsPerRecord: Double
    }

    struct Report: Codable {
        var benchmark = "trace-container"
        var build: String
        var records: Int
        var blockRecords: Int
        var seed: UInt64
        var generateNsPerRecord: Double
        /// CRC-32C (slicing-by-8) over 64 MiB.
        var crc32cMBPerSecond: Double
        var levels: [LevelReport]
    }

    func validate() throws {
        guard repetitions >= 1 else { throw ValidationError("--repetitions must be at least 1") }
        if let r = records, r < 1 { throw ValidationError("--records must be positive") }
        guard parsedLevels() != nil else { throw ValidationError("--levels must be comma-separated integers, e.g. 1,3") }
    }

    private func parsedLevels() -> [Int32]? {
        let parts = levels.split(separator: ",").map { Int32($0.trimmingCharacters(in: .whitespaces)) }
        return parts.isEmpty || parts.contains(nil) ? nil : parts.map { $0! }
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        let n = records ?? (quick ? 200_000 : 2_000_000)
        let reps = quick ? 1 : repetitions
        let (stream, genSeconds) = Stopwatch.time { SyntheticTraceStream.records(seed: seed, count: n) }
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("imsim-bench-trace-\(ProcessInfo.processInfo.processIdentifier).imtrace").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        if !json {
            print("imsim bench trace-container — \(n) synthetic records, \(blockRecords) per block, seed \(seed) (\(IMSimVersion.buildConfiguration) build)")
        }
        var out: [LevelReport] = []
        for level in parsedLevels()! {
            var bestWrite = Double.infinity, bestRead = Double.infinity
            var summary: TraceWriteSummary?
            for _ in 0..<reps {
                let (s, w) = try Stopwatch.time { try write(stream, level: level, to: path) }
                summary = s
                bestWrite = min(bestWrite, w)
                let (count, r) = try Stopwatch.time { try read(path) }
                guard count == n else { throw ValidationError("read \(count) records, wrote \(n)") }
                bestRead = min(bestRead, r)
            }
            try check(path, against: stream)
            let s = summary!
            let mb = Double(s.uncompressedBytes) / 1e6
            let lr = LevelReport(
                level: level, records: n, blocks: s.blocks, fileBytes: s.fileBytes, uncompressedBytes: s.uncompressedBytes,
                bytesPerRecord: Double(s.fileBytes) / Double(n), uncompressedBytesPerRecord: Double(s.uncompressedBytes) / Double(n),
                compressionRatio: Double(s.uncompressedBytes) / Double(s.fileBytes),
                writeSeconds: bestWrite, writeMBPerSecond: mb / bestWrite, writeNsPerRecord: bestWrite * 1e9 / Double(n),
                readSeconds: bestRead, readMBPerSecond: mb / bestRead, readNsPerRecord: bestRead * 1e9 / Double(n))
            out.append(lr)
            if !json {
                print("  level \(level): \(String(format: "%.2f", lr.bytesPerRecord)) bytes/record (\(String(format: "%.2f", lr.uncompressedBytesPerRecord)) uncompressed, ratio \(String(format: "%.2f", lr.compressionRatio))×), \(s.blocks) blocks")
                print("    write \(String(format: "%.1f", lr.writeMBPerSecond)) MB/s  \(BenchFormat.rate(Double(n) / bestWrite)) records/s  \(String(format: "%.1f", lr.writeNsPerRecord)) ns/record")
                print("    read  \(String(format: "%.1f", lr.readMBPerSecond)) MB/s  \(BenchFormat.rate(Double(n) / bestRead)) records/s  \(String(format: "%.1f", lr.readNsPerRecord)) ns/record (with body decode)")
            }
        }
        let crc = crcThroughput()
        if !json { print("  CRC-32C (slicing-by-8): \(String(format: "%.0f", crc)) MB/s") }
        let report = Report(build: IMSimVersion.buildConfiguration, records: n, blockRecords: blockRecords, seed: seed,
                            generateNsPerRecord: genSeconds * 1e9 / Double(n), crc32cMBPerSecond: crc, levels: out)
        if json { print(BenchFormat.json(report)) }
    }

    private func crcThroughput() -> Double {
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
        var best = Double.infinity
        var sink: UInt32 = 0
        for _ in 0..<3 {
            let (_, t) = Stopwatch.time { for _ in 0..<64 { sink ^= CRC32C.checksum(bytes) } }
            best = min(best, t)
        }
        if sink == 1 { print("") }
        return 64 * Double(bytes.count) / 1e6 / best
    }

    private func write(_ stream: [SyntheticTraceStream.Record], level: Int32, to path: String) throws -> TraceWriteSummary {
        let header = try TraceHeader(seed: seed, scenarioDigest: 0, scenarioName: "bench trace-container")
        let w = try TraceWriter(path: path, header: header,
                                options: TraceWriterOptions(compressionLevel: level, recordsPerBlock: blockRecords))
        for r in stream { try SyntheticTraceStream.append(r, to: w) }
        return try w.finish(finalDigest: 0)
    }

    /// Reads and decodes every record; returns the count.
    private func read(_ path: String) throws -> Int {
        let reader = try TraceReader(path: path)
        var n = 0
        var sink: UInt64 = 0
        while let t = try reader.next() {
            let r = try SyntheticTraceStream.decode(t)
            sink &+= r.messageID
            n += 1
        }
        if sink == 42 { print("") }  // keep the decode observable
        return n
    }

    private func check(_ path: String, against stream: [SyntheticTraceStream.Record]) throws {
        let reader = try TraceReader(path: path)
        var i = 0
        while let t = try reader.next() {
            guard i < stream.count, try SyntheticTraceStream.decode(t) == stream[i] else {
                throw ValidationError("record \(i) read back differently")
            }
            i += 1
        }
    }
}
