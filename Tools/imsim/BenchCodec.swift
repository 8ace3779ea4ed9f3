import Benchmarks
import ArgumentParser
import Foundation
import IMSim

struct BenchCodec: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "RMTP codec throughput: encode + stream-decode of typical frames.",
        discussion: """
            Workloads (stream framing, server→client): "publish" = an s_msg PUBLISH with a \
            DownStreamMessage carrying RC:TxtMsg, body serialised and parsed back each time; \
            "framing" = the same frame with the body pre-serialised and not parsed (framing cost \
            alone); "page20" = a QUERYACK with a DownStreamMessages page of 20; "content" = \
            RC:TxtMsg JSON content encode + decode; "publish-ref" / "page20-ref" = the same with \
            swift-protobuf's generated code alone (the baseline of the hand-written path for hot \
            messages). frames/s counts encode+decode cycles; MB/s the frame bytes per second.
            """
    )

    @Option(help: "Frames per workload per run (default 1,000,000; 50,000 with --quick).") var rounds: Int?
    @Option(help: "Timed repetitions; the best is reported.") var repetitions = 3
    @Flag(help: "Small run that only proves the build works (CI).") var quick = false
    @Flag(help: "Print JSON instead of text.") var json = false

    struct Figure: Codable {
        var workload: String
        var frames: Int
        var bytesPerFrame: Int
        var bestSeconds: Double
        var framesPerSecond: Double
        var megabytesPerSecond: Double
        var nsPerFrame: Double
        var checksum: UInt64
    }

    struct Ratios: Codable {
        var publishVsSwiftProtobuf: Double
        var page20VsSwiftProtobuf: Double
    }

    struct Report: Codable {
        var benchmark = "codec"
        var build: String
        var figures: [Figure]
        var ratios: Ratios
    }

    func validate() throws {
        guard repetitions >= 1 else { throw ValidationError("--repetitions must be at least 1") }
        if let r = rounds, r < 1 { throw ValidationError("--rounds must be positive") }
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        let n = rounds ?? (quick ? 50_000 : 1_000_000)
        let reps = quick ? 1 : repetitions
        let workloads: [(String, Int, (Int) throws -> WireBenchmark.Result)] = [
            ("publish", n, { try WireBenchmark.runPublish(rounds: $0) }),
            ("framing", n, { try WireBenchmark.runFramingOnly(rounds: $0) }),
            ("page20", max(1, n / 20), { try WireBenchmark.runPullPage(rounds: $0, pageSize: 20) }),
            ("publish-ref", n, { try WireBenchmark.runPublish(rounds: $0, reference: true) }),
            ("page20-ref", max(1, n / 20), { try WireBenchmark.runPullPage(rounds: $0, pageSize: 20, reference: true) }),
            ("content", n, { try WireBenchmark.runTextContent(rounds: $0) }),
        ]
        if !json { print("imsim bench codec — best of \(reps) (\(IMSimVersion.buildConfiguration) build)") }
        var figures: [Figure] = []
        for (name, count, body) in workloads {
            var best = Double.infinity
            var last: WireBenchmark.Result?
            for _ in 0..<reps {
                let (r, secs) = try Stopwatch.time { try body(count) }
                if let l = last, l != r { throw ValidationError("nondeterminism in \(name): \(r) != \(l)") }
                last = r
                best = min(best, secs)
            }
            let r = last!
            let fig = Figure(workload: name, frames: r.frames, bytesPerFrame: r.bytes / max(1, r.frames), bestSeconds: best,
                             framesPerSecond: Double(r.frames) / best, megabytesPerSecond: Double(r.bytes) / best / 1e6,
                             nsPerFrame: best * 1e9 / Double(r.frames), checksum: r.checksum)
            figures.append(fig)
            if !json {
                let pad = name.padding(toLength: 11, withPad: " ", startingAt: 0)
                print("  \(pad) \(BenchFormat.rate(fig.framesPerSecond)) frames/s  \(String(format: "%7.1f", fig.megabytesPerSecond)) MB/s  \(String(format: "%7.0f", fig.nsPerFrame)) ns/frame  \(fig.bytesPerFrame) B/frame")
            }
        }
        let fps = Dictionary(uniqueKeysWithValues: figures.map { ($0.workload, $0.framesPerSecond) })
        let ratios = Ratios(publishVsSwiftProtobuf: fps["publish"]! / fps["publish-ref"]!,
                            page20VsSwiftProtobuf: fps["page20"]! / fps["page20-ref"]!)
        if json {
            print(BenchFormat.json(Report(build: IMSimVersion.buildConfiguration, figures: figures, ratios: ratios)))
        } else {
            print("  hand-written hot-message path vs swift-protobuf alone: publish \(String(format: "%.2f", ratios.publishVsSwiftProtobuf))×, page20 \(String(format: "%.2f", ratios.page20VsSwiftProtobuf))×")
        }
    }
}
