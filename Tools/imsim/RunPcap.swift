import ArgumentParser
import Foundation
import IMSim

/// `imsim run … --pcap FILE.pcapng`: records the run into a private full trace with the wire
/// bytes (`FILE.pcapng.imtrace.partial`), converts it with `TraceExportPcapng` (the same code as
/// `imsim trace export --format pcapng`), and removes it. FILE appears only when complete.
struct RunPcap {
    let path: String
    let recorder: TraceRecorder
    var tracePath: String { path + ".imtrace.partial" }

    static func attach(_ path: String?, to run: ScenarioRun, scenario: Scenario, seed: UInt64) throws -> RunPcap? {
        guard let path else { return nil }
        let tmp = path + ".imtrace.partial"
        do {
            let options = TraceRecorderOptions(keepContent: true, level: .full, writer: TraceWriterOptions(), headerOptions: [])
            let r = try TraceRecorder(path: tmp, scenario: scenario, seed: seed, options: options)
            r.attach(to: run)
            return RunPcap(path: path, recorder: r)
        } catch {
            FileHandle.standardError.write(Data("imsim: --pcap \(path): \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    /// Finishes the private trace and writes the capture; returns the report line.
    func finish(stopReason: String) throws -> String {
        defer { try? FileManager.default.removeItem(atPath: tracePath) }
        do {
            _ = try recorder.finish(stopReason: stopReason)
            let reader = try TraceEventReader(path: tracePath)
            let out = try TextOutput(path: path)
            do {
                let s = try TraceExportPcapng.run(reader, to: out)
                try out.commit()
                return "  pcap \(path): \(s.packets) packets, \(s.connections) TCP connections, \(out.byteCount) bytes"
            } catch {
                out.abandon()
                throw error
            }
        } catch {
            FileHandle.standardError.write(Data("imsim: --pcap \(path): \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}
