import Benchmarks
import ArgumentParser
import Foundation
import IMSim

struct FuzzCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz",
        abstract: "Deterministic fuzzing of IMSim's parsers (run in a release build).",
        discussion: "One subcommand per parser; `imsim fuzz <target> --help` tells what each checks.",
        // `wire` (a FuzzTarget too) keeps its own subcommand for its richer report; every other
        // target is listed in FuzzTargets.all.
        subcommands: [FuzzWire.self] + FuzzTargets.all
    )
}

/// `imsim fuzz <T.name>`: runs one FuzzTarget and reports peak memory.
struct FuzzTargetCommand<T: FuzzTarget>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: T.name,
            abstract: T.abstract,
            discussion: """
                Input i is a pure function of (seed, i): rerun one finding with --first i --iterations 1. \
                Every input must end in a parse or a typed error naming its place; anything else is a \
                violation (exit 1). Peak memory is the process's maximum resident set.
                """
        )
    }

    @Option(help: "Number of inputs.") var iterations = 1_000_000
    @Option(help: "Run seed.") var seed: UInt64 = 1
    @Option(help: "Index of the first input (to replay one).") var first = 0
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard iterations >= 1 else { throw ValidationError("--iterations must be positive") }
        guard first >= 0 else { throw ValidationError("--first must be ≥ 0") }
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        let (stats, secs) = Stopwatch.time { FuzzRunner.run(T.self, seed: seed, iterations: iterations, first: first) }
        let peak = FuzzMemory.peakResidentBytes()
        if json {
            print(BenchFormat.json(FuzzReport(stats: stats, seconds: secs, inputsPerSecond: Double(iterations) / secs,
                                          peakResidentBytes: peak, build: IMSimVersion.buildConfiguration)))
        } else {
            print("imsim fuzz \(T.name) — seed \(seed), inputs \(first)..<\(first + iterations) (\(IMSimVersion.buildConfiguration) build)")
            print("  \(String(format: "%.1f", secs)) s, \(BenchFormat.rate(Double(iterations) / secs)) inputs/s, \(stats.inputBytes) bytes (largest \(stats.largestInput))")
            print("  accepted \(stats.accepted), peak memory \(peak / 1_048_576) MiB")
            print("  errors: " + stats.errors.map { "\($0.kind) \($0.count)" }.joined(separator: ", "))
            print("  violations \(stats.violations)\(stats.firstViolation.map { " — first: \($0)" } ?? "")  digest \(stats.digest)")
        }
        if stats.violations > 0 { throw ExitCode.failure }
    }
}

struct FuzzReport: Codable { var stats: FuzzStats; var seconds: Double; var inputsPerSecond: Double; var peakResidentBytes: Int; var build: String }

enum FuzzMemory {
    #if os(Linux)
    static let RUSAGE_SELF_WHO = __rusage_who_t(RUSAGE_SELF.rawValue)
    #else
    static let RUSAGE_SELF_WHO = RUSAGE_SELF
    #endif

    /// The process's peak resident set (getrusage; Linux reports KiB).
    static func peakResidentBytes() -> Int {
        var u = rusage()
        getrusage(RUSAGE_SELF_WHO, &u)
        #if os(Linux)
        return Int(u.ru_maxrss) * 1024
        #else
        return Int(u.ru_maxrss)
        #endif
    }
}

struct FuzzWire: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wire",
        abstract: "Random-mutation fuzzing of the RMTP stream/message decoders, protobuf bodies and JSON content.",
        discussion: """
            Input i is a pure function of (seed, i): rerun one finding with --first i --iterations 1. \
            Checks split invariance, canonical re-encoding, error offsets, JSON round trips (see \
            WireFuzz in Sources/IMWire). Exits 1 if any invariant broke.
            """
    )

    @Option(help: "Number of inputs.") var iterations = 1_000_000
    @Option(help: "Run seed.") var seed: UInt64 = 1
    @Option(help: "Index of the first input (to replay one).") var first = 0
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard iterations >= 1 else { throw ValidationError("--iterations must be positive") }
        guard first >= 0 else { throw ValidationError("--first must be ≥ 0") }
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        let (stats, secs) = Stopwatch.time { WireFuzz.run(seed: seed, iterations: iterations, first: first) }
        if json {
            struct Report: Codable { var stats: WireFuzz.Stats; var seconds: Double; var inputsPerSecond: Double; var build: String }
            print(BenchFormat.json(Report(stats: stats, seconds: secs, inputsPerSecond: Double(iterations) / secs,
                                          build: IMSimVersion.buildConfiguration)))
        } else {
            print("imsim fuzz wire — seed \(seed), inputs \(first)..<\(first + iterations) (\(IMSimVersion.buildConfiguration) build)")
            print("  \(String(format: "%.1f", secs)) s, \(BenchFormat.rate(Double(iterations) / secs)) inputs/s, \(stats.inputBytes) bytes")
            print("  clean inputs \(stats.cleanInputs), frames decoded \(stats.framesDecoded), bodies \(stats.bodiesDecoded) ok / \(stats.bodyErrors) rejected, contents \(stats.contentsDecoded) ok / \(stats.contentErrors) rejected")
            print("  errors: " + stats.errors.map { "\($0.kind) \($0.count)" }.joined(separator: ", "))
            print("  violations \(stats.violations)\(stats.firstViolation.map { " — first: \($0)" } ?? "")  digest \(stats.digest)")
        }
        if stats.violations > 0 { throw ExitCode.failure }
    }
}
