import Foundation
import Testing
@testable import IMSim

/// `SweepResultFile.read(directory:)`: what `bench mutants` reads to name the oracle that killed a
/// mutant. Its seed lines carry no wall time, so reading them as `SweepResult` finds nothing (every
/// oracle kill was reported as "crash, worker died" until stop 25).
@Suite struct SweepResultReadTests {
    static func tempDir() -> String {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("sweep-read-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    @Test func aStoppedSweepsPartialFileNamesItsFailure() throws {
        let lines = SweepShardTests.lines
        let firstFail = try #require(lines.firstIndex { $0.outcome == .fail })
        // What a `--stop-after 1` sweep leaves: header and the lines up to its first failure, no summary.
        var text = SweepResultFile.jsonLine(SweepShardTests.header) + "\n"
        for l in lines[...firstFail] { text += SweepResultFile.jsonLine(l) + "\n" }
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/results.jsonl.partial"))

        let file = try #require(SweepResultFile.read(directory: dir))
        let failed = file.lines.filter { $0.outcome != .pass }
        #expect(failed.map(\.seed) == [lines[firstFail].seed])
        #expect(failed.first?.oracle == lines[firstFail].oracle && failed.first?.oracle != nil)
        // The old reader's type cannot decode these lines.
        let seedLine = SweepResultFile.jsonLine(lines[firstFail])
        #expect((try? JSONDecoder().decode(SweepResult.self, from: Data(seedLine.utf8))) == nil)
    }

    @Test func aCompleteFileIsReadAndAnEmptyDirectoryIsNil() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(SweepResultFile.read(directory: dir) == nil)
        let bytes = SweepResultFile.render(header: SweepShardTests.header, lines: SweepShardTests.lines)
        try Data(bytes).write(to: URL(fileURLWithPath: dir + "/results.jsonl"))
        let file = try #require(SweepResultFile.read(directory: dir))
        #expect(file.lines == SweepShardTests.lines.sorted { $0.seed < $1.seed })
        #expect(file.summary != nil)
    }
}
