import Foundation
import IMSimTestSupport
import Testing
@testable import IMTrace
@testable import IMTraceFormat
#if canImport(Glibc)
import Glibc
#endif

/// A real process killed with SIGKILL while writing: every block it flushed is readable.
@Suite struct KillMidWriteTests {
    @Test func sigkilledWriterLeavesEveryFlushedBlockReadable() throws {
        let imsim = try ImsimBinary.locate()
        let path = temporaryPath("killed")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let p = Process()
        p.executableURL = imsim
        p.arguments = ["trace", "write-synthetic", "--out", path, "--records", "0", "--block-records", "64",
                       "--seed", "7", "--slow"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Wait for the writer to report 3 flushed blocks (it writes forever otherwise).
        var text = ""
        while text.components(separatedBy: "flushed block").count - 1 < 3 {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // the child died on its own
            text += String(decoding: chunk, as: UTF8.self)
        }
        #expect(kill(p.processIdentifier, SIGKILL) == 0)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal)
        #expect(p.terminationStatus == SIGKILL)
        let reported = text.components(separatedBy: "flushed block").count - 1
        #expect(reported >= 3)

        #expect(throws: TraceError.self) { try TraceReader(path: path) }  // no footer
        let r = try TraceReader(path: path, mode: .salvage)
        #expect(r.footerStatus == .missing)
        #expect(r.header.seed == 7)
        #expect(r.blocks.count >= reported)
        let got = try readAll(r)
        #expect(got.count == r.blocks.count * 64)
        #expect(got.map(\.1) == SyntheticTraceStream.records(seed: 7, count: got.count))
        // Only a torn tail (a block being written at the kill) may be reported.
        for d in r.damage {
            guard case .truncatedBlock = d.error else { Issue.record("unexpected damage \(d)"); continue }
            #expect(d.offset == r.blocks.last!.endOffset)
        }
    }
}
