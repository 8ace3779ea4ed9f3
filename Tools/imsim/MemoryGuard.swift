import ArgumentParser
import Foundation
import IMSim

/// Before a run: estimate its memory from the scenario and refuse one that would not fit the
/// machine (or, with --force, say so and run anyway).
enum MemoryGuard {
    /// Memory this process may count on: MemAvailable on Linux, else the physical memory.
    static func availableBytes() -> Int64 {
        if let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
                let kb = line.split(separator: " ").compactMap { Int64($0) }.first
                if let kb { return kb * 1024 }
            }
        }
        return Int64(clamping: ProcessInfo.processInfo.physicalMemory)
    }

    /// Throws ExitCode(2) with a one-line reason when the estimate exceeds what is available.
    static func check(_ scenario: Scenario, name: String, force: Bool) throws {
        let estimate = scenario.memoryEstimate
        let available = availableBytes()
        guard estimate.bytes > available else { return }
        let line = "\(name): this run needs about \(estimate); the machine has \(available >> 20) MiB available"
        if force {
            FileHandle.standardError.write(Data("imsim: warning: \(line) (running anyway: --force)\n".utf8))
            return
        }
        FileHandle.standardError.write(Data("imsim: \(line); refusing (--force runs anyway)\n".utf8))
        throw ExitCode(2)
    }
}
