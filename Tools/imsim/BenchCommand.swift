import ArgumentParser
import Foundation
import IMSim

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure IMSim's components (run in a release build: swift run -c release imsim bench …).",
        subcommands: [
            BenchKernel.self,
            BenchCodec.self,
            BenchStore.self,
            BenchClient.self,
            BenchTrace.self,
            BenchTraceContainer.self,
            BenchServer.self,
            BenchReplay.self,
            BenchRuntime.self,
            BenchWorld.self,
            BenchSweep.self,
            BenchBugs.self,
            BenchExport.self,
            BenchMutants.self,
        ]
    )
}

/// Wall-clock timing for benchmarks. Lives in the CLI, never in the simulation.
enum Stopwatch {
    static func time<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let r = try body()
        let d = clock.now - start
        let secs = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        return (r, secs)
    }
}

enum BenchFormat {
    static func rate(_ perSecond: Double) -> String {
        if perSecond >= 1e6 { return String(format: "%.2fM", perSecond / 1e6) }
        if perSecond >= 1e3 { return String(format: "%.1fk", perSecond / 1e3) }
        return String(format: "%.1f", perSecond)
    }
    static func warnIfDebug() {
        if IMSimVersion.buildConfiguration == "debug" {
            FileHandle.standardError.write(Data(
                "warning: this is a debug build; figures are not meaningful. Use: swift run -c release imsim bench …\n".utf8))
        }
    }
    static func json<T: Encodable>(_ value: T) -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try! enc.encode(value), as: UTF8.self)
    }
}
