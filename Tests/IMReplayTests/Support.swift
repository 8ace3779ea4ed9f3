import Foundation
import IMClient
import IMStore
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMReplay

/// The repository root (tests read Traces/ from the source tree).
let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

func tracePath(_ relative: String) -> String { repoRoot.appendingPathComponent(relative).path }

/// Records every named device of a run into memory; returns the capture bytes per device.
func recordRun(_ scenario: Scenario, seed: UInt64 = 1, until: SimDuration? = nil, devices: [String],
               oracles: Bool = false) throws -> (captures: [String: [UInt8]], run: ScenarioRun) {
    let run = try ScenarioRun(scenario: scenario, seed: seed, oracles: oracles ? OracleOptions(stopAtFirstViolation: false, scenarioArgument: scenario.name) : nil)
    var sinks: [(String, CaptureMemorySink, WorldCaptureObserver)] = []
    for d in devices {
        let sink = CaptureMemorySink()
        let o = WorldCaptureObserver(deviceId: d, sink: sink, source: "test")
        try o.attach(to: run.world)
        sinks.append((d, sink, o))
    }
    run.run(until: until.map { SimTime.zero + $0 })
    var out: [String: [UInt8]] = [:]
    for (d, sink, o) in sinks {
        try o.finish()
        out[d] = sink.bytes
    }
    return (out, run)
}

func replay(_ bytes: [UInt8], bugs: ClientBugs? = nil) throws -> ReplayReport {
    try Replayer(reader: try CaptureReader(bytes: bytes), options: ReplayOptions(bugs: bugs)).run()
}

func lines(_ bytes: [UInt8]) -> [String] {
    String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
}

func bytes(_ lines: [String]) -> [UInt8] { Array(lines.joined(separator: "\n").utf8) }

/// The error a capture's bytes produce when read to the end (nil if it reads cleanly).
func readError(_ b: [UInt8], maxLineLength: Int = CaptureReader.defaultMaxLineLength) -> CaptureError? {
    do {
        let r = try CaptureReader(bytes: b, maxLineLength: maxLineLength)
        _ = try r.readAll()
        return nil
    } catch {
        return error
    }
}

func loadScenario(_ relative: String) throws -> Scenario {
    try Scenario.load(json: try Data(contentsOf: URL(fileURLWithPath: tracePath(relative))))
}

/// A copy of a scenario without network jitter in the writes (so frames arrive whole).
func unsplit(_ s: Scenario) -> Scenario {
    var s = s
    s.network.splitProbability = ProbabilityValue(Ratio.never)
    return s
}
