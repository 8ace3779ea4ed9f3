import ArgumentParser
import Foundation
import IMSim

/// Test helper (hidden): writes the synthetic IM-like stream to a trace, optionally slowly and
/// forever, printing a line per flushed block, so a test can SIGKILL it mid-write.
struct TraceWriteSyntheticCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write-synthetic",
        abstract: "Write a synthetic trace (test helper).",
        shouldDisplay: false
    )

    @Option(help: "Output trace file.") var out: String
    @Option(help: "Records to write; 0 = until killed.") var records: UInt64 = 10_000
    @Option(help: "Stream seed.") var seed: UInt64 = 1
    @Option(help: "Records per block.") var blockRecords = 8192
    @Option(help: "zstd level.") var level: Int32 = 3
    @Flag(help: "Sleep 200 µs after every record (so a test can kill the writer mid-run).") var slow = false

    func run() throws {
        let header = try TraceHeader(seed: seed, scenarioDigest: 0, scenarioName: "synthetic",
                                     options: [TraceOption("records", "\(records)"), TraceOption("block-records", "\(blockRecords)")])
        let writer = try TraceWriter(path: out, header: header,
                                     options: TraceWriterOptions(compressionLevel: level, recordsPerBlock: blockRecords))
        var stream = SyntheticTraceStream(seed: seed)
        var digest = Digest64()
        var blocks = 0
        var n: UInt64 = 0
        while records == 0 || n < records {
            let r = stream.next()
            digest.fold(r.time.nanoseconds)
            try SyntheticTraceStream.append(r, to: writer)
            n += 1
            if writer.blockCount != blocks {
                blocks = writer.blockCount
                // Unbuffered: the test reads these lines through a pipe while we run.
                FileHandle.standardOutput.write(Data("flushed block \(blocks - 1) records \(writer.recordCount)\n".utf8))
            }
            if slow { usleep(200) }
        }
        let s = try writer.finish(finalDigest: digest.value)
        print("finished records \(s.records) blocks \(s.blocks) bytes \(s.fileBytes)")
    }
}
