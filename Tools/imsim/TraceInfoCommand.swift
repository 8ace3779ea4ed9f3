import ArgumentParser
import Foundation
import IMSim

struct TraceInfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Header, blocks, records, sizes and digest of a trace; --salvage reports damage.",
        discussion: """
            Without options, reads the header and the footer's index only (fast) and refuses an \
            incomplete or damaged trace. --verify also decompresses and checks every block. \
            --salvage opens a damaged or unfinished trace (e.g. from a killed run), checks every \
            block and lists what was skipped and why.
            Exit status: 0 intact, 1 damage found (with --salvage), 2 unreadable.
            """
    )

    @Argument(help: "Trace file.") var file: String
    @Flag(help: "Read a damaged or unfinished trace: check every block and report damage.") var salvage = false
    @Flag(help: "Decompress and check every block (implied by --salvage).") var verify = false
    @Flag(help: "Print JSON instead of text.") var json = false

    struct Report: Codable {
        var file: String
        var formatVersion: String
        var scenario: String
        var scenarioDigest: String
        var seed: UInt64
        var build: String
        var options: [String: String]
        var keepContent: Bool
        var footer: String
        var blocks: Int
        var records: UInt64
        var firstTime: String?
        var lastTime: String?
        var fileBytes: Int
        var compressedBytes: Int
        var uncompressedBytes: Int
        var compressionRatio: Double
        var bytesPerRecord: Double
        var strings: Int?
        var finalDigest: String?
        var verified: Bool
        var blocksIntact: Int?
        var recordsRecovered: UInt64?
        var recordsLost: UInt64?
        var damage: [String]
    }

    func run() throws {
        let reader: TraceReader
        do {
            reader = try TraceReader(path: file, mode: salvage ? .salvage : .strict)
        } catch {
            printError("imsim trace info: \(file): \(error)")
            if !salvage, case .missingFooter = error { printError("hint: imsim trace info --salvage \(file)") }
            if !salvage, case .badFooter = error { printError("hint: imsim trace info --salvage \(file)") }
            throw ExitCode(2)
        }
        let info = reader.info
        let h = reader.header
        var report = Report(
            file: file, formatVersion: "\(h.majorVersion).\(h.minorVersion)", scenario: h.scenarioName,
            scenarioDigest: Digest64.hex(h.scenarioDigest), seed: h.seed, build: h.build,
            options: Dictionary(h.options.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a }),
            keepContent: h.keepContent, footer: reader.footerStatus.description, blocks: info.blockCount,
            records: info.recordCount, firstTime: info.firstTime?.preciseDescription, lastTime: info.lastTime?.preciseDescription,
            fileBytes: info.fileSize, compressedBytes: info.compressedBytes, uncompressedBytes: info.uncompressedBytes,
            compressionRatio: info.compressionRatio, bytesPerRecord: info.bytesPerRecord, strings: info.stringCount,
            finalDigest: info.finalDigest.map(Digest64.hex), verified: false, damage: [])
        var damaged = false
        if salvage || verify {
            let s = reader.verify()
            report.verified = true
            report.blocksIntact = s.blocksIntact
            report.recordsRecovered = s.recordsRecovered
            report.recordsLost = s.recordsLost
            report.damage = s.damage.map(\.description)
            damaged = !s.isIntact
            if !salvage, let first = s.damage.first {
                // Strict: the first damaged block is an error, as for any strict reader.
                if json { print(BenchFormat.json(report)) } else { printText(report, h) }
                printError("imsim trace info: \(file): \(first.error)")
                printError("hint: imsim trace info --salvage \(file)")
                throw ExitCode(2)
            }
        }
        if json { print(BenchFormat.json(report)) } else { printText(report, h) }
        if damaged { throw ExitCode(1) }
    }

    private func printText(_ r: Report, _ h: TraceHeader) {
        func row(_ k: String, _ v: String) { print("  " + k.padding(toLength: 10, withPad: " ", startingAt: 0) + "  " + v) }
        print("trace \(r.file)")
        row("format", r.formatVersion)
        row("scenario", "\(r.scenario.isEmpty ? "(unnamed)" : r.scenario)  digest \(r.scenarioDigest)")
        row("seed", "\(r.seed)")
        row("build", r.build)
        if !h.options.isEmpty { row("options", h.options.map(\.description).joined(separator: " ")) }
        row("content", r.keepContent ? "kept (--keep-content)" : "length + hash only")
        row("records", "\(r.records) in \(r.blocks) blocks")
        if let a = r.firstTime, let b = r.lastTime { row("time", "\(a) … \(b)") }
        row("size", "\(r.fileBytes) bytes; blocks \(r.compressedBytes) compressed / \(r.uncompressedBytes) uncompressed"
            + " (ratio \(String(format: "%.2f", r.compressionRatio))×), \(String(format: "%.2f", r.bytesPerRecord)) bytes/record")
        if let s = r.strings { row("strings", "\(s) interned") }
        row("footer", r.footer)
        row("digest", r.finalDigest ?? "unknown (no footer)")
        if r.verified {
            if r.damage.isEmpty {
                row("verified", "all \(r.blocks) blocks intact")
            } else {
                row("salvage", "\(r.blocksIntact ?? 0) of \(r.blocks) listed blocks intact, \(r.recordsRecovered ?? 0) records recovered, \(r.recordsLost ?? 0) known lost")
                for d in r.damage { print("    damage: \(d)") }
            }
        }
    }

    private func printError(_ s: String) {
        FileHandle.standardError.write(Data((s + "\n").utf8))
    }
}
