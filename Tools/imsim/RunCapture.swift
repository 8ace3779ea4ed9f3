import ArgumentParser
import Foundation
import IMSim

/// `imsim run … --capture DEVICE=FILE` (repeatable): records what each named device's SDK
/// would have logged (Docs/capture-format.md). Kept out of RunCommand.swift so the run command
/// only gains two lines.
struct RunCaptures {
    private var observers: [(spec: String, observer: WorldCaptureObserver)] = []

    /// Parses the `DEVICE=FILE` arguments and attaches one recorder per device.
    static func attach(_ specs: [String], to run: ScenarioRun, source: String) throws -> RunCaptures {
        var set = RunCaptures()
        for spec in specs {
            guard let eq = spec.firstIndex(of: "="), eq != spec.startIndex, spec.index(after: eq) != spec.endIndex else {
                set.abandon()
                throw ValidationError("--capture expects DEVICE=FILE, got \"\(spec)\"")
            }
            let device = String(spec[..<eq]), path = String(spec[spec.index(after: eq)...])
            do {
                let o = try WorldCaptureObserver(deviceId: device, path: path, source: source)
                try o.attach(to: run.world)
                set.observers.append((spec, o))
            } catch {
                set.abandon()
                FileHandle.standardError.write(Data("imsim: --capture \(spec): \(error)\n".utf8))
                throw ExitCode(2)
            }
        }
        return set
    }

    /// Finishes every capture (renames the files into place) and says where they are.
    func finish(quiet: Bool) throws {
        for (spec, o) in observers {
            do { try o.finish() } catch {
                FileHandle.standardError.write(Data("imsim: --capture \(spec): \(error)\n".utf8))
                throw ExitCode(2)
            }
            if !quiet {
                let n = o.recorder?.recordCount ?? 0
                print("  capture: \(o.deviceId) → \(spec.split(separator: "=", maxSplits: 1)[1]) (\(n) records)")
            }
        }
    }

    func abandon() { for (_, o) in observers { o.abandon() } }
}
