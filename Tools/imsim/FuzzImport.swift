import Benchmarks
import ArgumentParser
import Foundation
import IMImport
import IMSim

/// `imsim fuzz pcap` / `imsim fuzz har`: the importers' readers under mutation (ImportFuzz).
struct FuzzImportOptions: ParsableArguments {
    @Option(help: "Number of inputs.") var iterations = 1_000_000
    @Option(help: "Run seed.") var seed: UInt64 = 1
    @Option(help: "Index of the first input (to replay one).") var first = 0
    @Option(help: "Run the capture builder (a client core over SQLite) on every Nth imported input.") var buildEvery = 16
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard iterations >= 1 else { throw ValidationError("--iterations must be positive") }
        guard first >= 0 else { throw ValidationError("--first must be ≥ 0") }
        guard buildEvery >= 1 else { throw ValidationError("--build-every must be ≥ 1") }
    }

    func run(_ target: ImportFuzz.Target) throws {
        BenchFormat.warnIfDebug()
        let (stats, secs) = Stopwatch.time { ImportFuzz.run(target, seed: seed, iterations: iterations, first: first, buildEvery: buildEvery) }
        if json {
            struct Report: Codable { var target: String; var stats: ImportFuzz.Stats; var seconds: Double; var inputsPerSecond: Double; var build: String }
            print(BenchFormat.json(Report(target: target.rawValue, stats: stats, seconds: secs, inputsPerSecond: Double(iterations) / secs,
                                          build: IMSimVersion.buildConfiguration)))
        } else {
            print("imsim fuzz \(target.rawValue) — seed \(seed), inputs \(first)..<\(first + iterations) (\(IMSimVersion.buildConfiguration) build)")
            print("  \(String(format: "%.1f", secs)) s, \(BenchFormat.rate(Double(iterations) / secs)) inputs/s, \(stats.inputBytes) bytes, max RSS \(stats.maxResidentKB / 1024) MiB")
            print("  imported \(stats.imported), captures built and read back \(stats.capturesBuilt)")
            print("  errors: " + stats.errors.keys.sorted().map { "\($0) \(stats.errors[$0]!)" }.joined(separator: ", "))
            print("  violations \(stats.violations)\(stats.firstViolation.map { " — first: \($0)" } ?? "")")
        }
        if stats.violations > 0 { throw ExitCode.failure }
    }
}

struct FuzzPcap: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pcap",
        abstract: "Mutation fuzzing of the pcap/pcapng import (libpcap, link/IP/TCP decoding, reassembly, RMTP recognition, capture builder).")
    @OptionGroup var options: FuzzImportOptions
    func run() throws { try options.run(.pcap) }
}

struct FuzzHAR: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "har",
        abstract: "Mutation fuzzing of the HAR import (JSON, _webSocketMessages, base64, message framing, capture builder).")
    @OptionGroup var options: FuzzImportOptions
    func run() throws { try options.run(.har) }
}
