import ArgumentParser
import Foundation
import IMSim

/// `imsim replay CAPTURE --lift [--out FILE] [--neighbours N]`.
struct LiftCommandRunner {
    var capture: String
    var out: String?
    var neighbours: Int
    var bugs: ClientBugs?
    var json: Bool
    var maxLineLength: Int

    struct Summary: Codable {
        var capture: String
        var capturedViolation: ReplayViolation?
        var scenario: String
        var neighboursScenario: String
        var liftedReproduces: Bool
        var liftedViolation: Violation?
        var neighbours: Int
        var neighboursReproducing: Int
        var reproducingSeeds: [UInt64]
        var notes: [String]
    }

    func run() throws {
        // 1. What the capture shows (replayed with the same switches as the lifted world).
        let report: ReplayReport
        let lifted: LiftedScenario
        do {
            report = try Replayer(path: capture, options: ReplayOptions(bugs: bugs), maxLineLength: maxLineLength).run()
            lifted = try Lifter.lift(path: capture, bugs: bugs, maxLineLength: maxLineLength)
        } catch let e as CaptureError {
            FileHandle.standardError.write(Data("imsim: \(capture): \(e)\n".utf8))
            throw ExitCode(2)
        } catch {
            FileHandle.standardError.write(Data("imsim: \(capture): \(error)\n".utf8))
            throw ExitCode(2)
        }
        let target = report.violations.first
        let device = report.device

        // 2. Write the lifted scenario and its neighbours.
        let outPath = out ?? Self.defaultOut(capture)
        let neighboursPath = (outPath.hasSuffix(".json") ? String(outPath.dropLast(5)) : outPath) + ".neighbours.json"
        let template = NeighbourSearch.template(of: lifted)
        let neighbourScenario: Scenario
        do {
            neighbourScenario = try ScenarioText.scenario(template)
            try ScenarioText.write(lifted.text, to: outPath)
            try ScenarioText.write(ScenarioText.format(template), to: neighboursPath)
        } catch {
            FileHandle.standardError.write(Data("imsim: --lift: \(error)\n".utf8))
            throw ExitCode(2)
        }

        // 3. Does the lifted world reproduce it? And its neighbours?
        let liftedViolation = NeighbourSearch.run(lifted.scenario, seed: 1, oracle: target?.oracle, device: target == nil ? nil : device,
                                                  scenarioArgument: outPath)
        let start = Date()
        var lastPrint = Date.distantPast
        let seeds = NeighbourSearch.explore(neighbourScenario, count: neighbours, oracle: target?.oracle,
                                            device: target == nil ? nil : device, scenarioArgument: neighboursPath) { i, hits in
            if !json, Date().timeIntervalSince(lastPrint) > 0.5 || i == neighbours {
                lastPrint = Date()
                FileHandle.standardError.write(Data("\r  neighbours: \(i)/\(neighbours) run, \(hits) reproduce (\(Int(Date().timeIntervalSince(start))) s)".utf8))
                if i == neighbours { FileHandle.standardError.write(Data("\n".utf8)) }
            }
        }
        let summary = Summary(capture: capture, capturedViolation: target, scenario: outPath, neighboursScenario: neighboursPath,
                              liftedReproduces: target == nil ? liftedViolation == nil : liftedViolation != nil,
                              liftedViolation: liftedViolation, neighbours: neighbours, neighboursReproducing: seeds.count,
                              reproducingSeeds: Array(seeds.prefix(50)), notes: lifted.notes)
        if json {
            print(BenchFormat.json(summary))
        } else {
            print("imsim replay \(capture) --lift")
            if let t = target {
                print("  captured violation (replay): \(t.oracle) at line \(t.line) (t=\(t.time)): \(t.detail)")
            } else {
                print("  the replayed capture shows no violation: looking for any violation instead")
            }
            let users = lifted.scenario.users.count, devs = lifted.scenario.users.reduce(0) { $0 + $1.devices.count }
            print("  lifted: \(users) users, \(devs) devices, \(lifted.peerMessages) peer message(s), \(lifted.ownSteps) own step(s), \(lifted.faultSteps) fault step(s); one-way latency \(lifted.oneWayLatencyMs) ms, device clock offset \(lifted.clockOffsetMs) ms")
            print("  wrote \(outPath)  (imsim run \(outPath))")
            if let v = liftedViolation {
                print("  lifted run (seed 1): \(target == nil ? "✘ violation" : "✔ reproduces") \(v.oracle) on \(v.device ?? "-") at t=\(v.time): \(v.detail)")
            } else {
                print("  lifted run (seed 1): \(target == nil ? "✔ no violation either" : "✘ does not reproduce \(target!.oracle)")")
            }
            print("  neighbours: \(seeds.count) of \(neighbours) reproduce \(target?.oracle ?? "a violation") (\(neighboursPath), seed K = neighbour K)")
            if let s = seeds.first {
                print("    e.g. imsim run \(neighboursPath) --seed \(s)   (reproducing seeds: \(seeds.prefix(12).map(String.init).joined(separator: ", "))\(seeds.count > 12 ? ", …" : ""))")
            }
            for n in lifted.notes { print("  note: \(n)") }
        }
        if !summary.liftedReproduces { throw ExitCode(1) }
    }

    static func defaultOut(_ capture: String) -> String {
        var base = capture
        for ext in [".zst", ".jsonl", ".json"] where base.hasSuffix(ext) { base = String(base.dropLast(ext.count)) }
        return base + ".lifted.json"
    }
}
