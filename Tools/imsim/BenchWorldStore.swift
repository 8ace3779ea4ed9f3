import ArgumentParser
import Foundation
import IMSim

/// `imsim bench world --store both`: the cost of durability modelling (issue 28) — the same
/// scenario on `:memory:` stores and on simulated device disks (the VFS), run alternately in one
/// process so that both see the same machine load; reported as the ratio of CPU times.
extension BenchWorld {
    struct StorePair: Codable {
        var benchmark = "world-store"
        var build: String
        var scenario: String
        var seed: UInt64
        var devices: Int
        var until: String?
        var oracles: Bool
        var events: [String: UInt64]
        var digests: [String: String]
        /// CPU seconds of each run, in order, per store.
        var memoryCpuSeconds: [Double]
        var deviceCpuSeconds: [Double]
        /// device / memory CPU of each pair, and of the best runs.
        var pairRatios: [Double]
        var bestRatio: Double
        var peakRSSMegabytes: Double
    }

    func runStorePair(_ base: Scenario, runSeed: UInt64, untilTime: SimTime?, modes: [Bool]) throws {
        for withOracles in modes {
            var cpus: [ClientSettings.StoreMode: [Double]] = [.memory: [], .device: []]
            var digests: [ClientSettings.StoreMode: String] = [:]
            var events: [ClientSettings.StoreMode: UInt64] = [:]
            var devices = 0
            for _ in 0..<repetitions {
                for mode in [ClientSettings.StoreMode.memory, .device] {
                    var sc = base
                    sc.client.store = mode
                    let run = try makeRun(sc, seed: runSeed, withOracles: withOracles)
                    devices = run.world.deviceCount
                    let cpu0 = CPUClock.threadSeconds()
                    run.run(until: untilTime)
                    let cpu = CPUClock.threadSeconds() - cpu0
                    let r = run.report(wallSeconds: 0)
                    if let d = digests[mode], d != r.digest {
                        FileHandle.standardError.write(Data("imsim: \(mode.rawValue) stores: digest \(r.digest) differs from the first run's \(d)\n".utf8))
                        throw ExitCode(1)
                    }
                    digests[mode] = r.digest
                    events[mode] = r.events
                    cpus[mode]!.append(cpu)
                }
            }
            let mem = cpus[.memory]!, dev = cpus[.device]!
            let pairs = zip(dev, mem).map { $0 / $1 }
            let best = dev.min()! / mem.min()!
            let report = StorePair(
                build: IMSimVersion.buildConfiguration, scenario: base.name, seed: runSeed, devices: devices,
                until: until, oracles: withOracles,
                events: ["memory": events[.memory] ?? 0, "device": events[.device] ?? 0],
                digests: ["memory": digests[.memory] ?? "", "device": digests[.device] ?? ""],
                memoryCpuSeconds: mem, deviceCpuSeconds: dev, pairRatios: pairs, bestRatio: best,
                peakRSSMegabytes: Self.peakRSSMegabytes())
            if json {
                print(BenchFormat.json(report))
            } else {
                let f = { (x: [Double]) in x.map { String(format: "%.2f", $0) }.joined(separator: ", ") }
                print("\(withOracles ? "oracles" : "no oracles"): \(devices) devices, seed \(runSeed)")
                print("  :memory: stores  CPU s \(f(mem)); \(events[.memory] ?? 0) events, digest \(digests[.memory] ?? "-")")
                print("  device (VFS)     CPU s \(f(dev)); \(events[.device] ?? 0) events, digest \(digests[.device] ?? "-")")
                print("  device / memory: pairs \(pairs.map { String(format: "%.3f", $0) }.joined(separator: ", ")); best runs \(String(format: "%.3f", best)) (\(String(format: "%+.1f", (best - 1) * 100))% CPU)")
            }
        }
    }
}
