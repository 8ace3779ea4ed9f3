import Foundation
import IMSimTestSupport
import Testing
@testable import IMTrace
@testable import IMTraceFormat
import SimKernel

func testHeader(seed: UInt64 = 1, name: String = "test") -> TraceHeader {
    try! TraceHeader(seed: seed, scenarioDigest: 0xABCD_EF01_2345_6789, scenarioName: name,
                     options: [TraceOption("nodes", "3")])
}

/// An in-memory trace of the synthetic stream.
func syntheticTrace(seed: UInt64, records: Int, perBlock: Int, level: Int32 = 1, finish: Bool = true)
    throws -> (bytes: [UInt8], records: [SyntheticTraceStream.Record]) {
    let expected = SyntheticTraceStream.records(seed: seed, count: records)
    let w = try TraceWriter(inMemory: testHeader(seed: seed),
                            options: TraceWriterOptions(compressionLevel: level, recordsPerBlock: perBlock))
    for r in expected { try SyntheticTraceStream.append(r, to: w) }
    if finish { try w.finish(finalDigest: 0x5EED) } else { try w.flush() }
    return (w.bytes, expected)
}

/// Reads every record (strict or salvage), decoding bodies as synthetic records.
func readAll(_ reader: TraceReader) throws -> [(UInt64, SyntheticTraceStream.Record)] {
    var out: [(UInt64, SyntheticTraceStream.Record)] = []
    while let t = try reader.next() { out.append((t.index, try SyntheticTraceStream.decode(t))) }
    return out
}

func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory
        .appendingPathComponent("imtrace-test-\(ProcessInfo.processInfo.processIdentifier)-\(name).imtrace").path
}


/// A file of this repository, by its path from the repository root.
func repositoryFile(_ relative: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(relative).path
}
