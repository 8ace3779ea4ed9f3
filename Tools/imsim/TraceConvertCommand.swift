import ArgumentParser
import Foundation
import IMSim

/// `imsim trace convert IN OUT`: the same records in another format version.
struct TraceConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Rewrite a trace in another format version (2: smaller; 1: for imsim builds that read only format 1).",
        discussion: """
            Decodes every record of IN and writes it again into OUT with --format (Docs/trace-format.md, \
            "Versions"): same records, times, header fields and final digest; `imsim trace diff IN OUT` \
            finds no difference. Format 2 predefines the user and device ids of IN's meta.device records. \
            OUT is written next to its final path and renamed when complete.
            """
    )

    @Argument(help: "Trace to read (format 1 or 2).") var input: String
    @Argument(help: "Trace to write.") var output: String
    @Option(help: "Format version to write (1 or 2).") var format: UInt16 = TraceFormat.majorVersion
    @Option(name: .customLong("zstd-level"), help: "zstd level of the blocks (1…19).") var zstdLevel: Int32 = 3

    func validate() throws {
        guard TraceFormat.readableMajorVersions.contains(format) else { throw ValidationError("--format must be 1 or 2") }
        guard (1...19).contains(zstdLevel) else { throw ValidationError("--zstd-level must be 1…19") }
    }

    func run() throws {
        let temporary = output + ".converting"
        do {
            // The world's ids, from the meta.device records at the start (users by index, then devices).
            var users: [(Int, String)] = [], devices: [String] = []
            let scan = try TraceEventReader(path: input)
            while let e = try scan.next() {
                if case .meta(.device(_, let deviceId, let userId, _, let userIndex)) = e.event {
                    devices.append(deviceId)
                    if !users.contains(where: { $0.1 == userId }) { users.append((userIndex, userId)) }
                } else if case .meta(.checkpoint) = e.event {
                    continue
                } else {
                    break
                }
            }
            var predefined: [String] = []
            var seen = Set<String>()
            for s in users.sorted(by: { $0.0 < $1.0 }).map(\.1) + devices where seen.insert(s).inserted { predefined.append(s) }

            let reader = try TraceEventReader(path: input)
            let writer = try TraceWriter(path: temporary, header: reader.header,
                                         options: TraceWriterOptions(compressionLevel: zstdLevel, formatMajor: format))
            try writer.predefine(predefined)
            while let e = try reader.next() {
                try writer.append(kind: e.event.kind, time: e.time) { e.event.encode(into: &$0, epochMs: reader.epochMs) }
            }
            let summary = try writer.finish(finalDigest: reader.reader.footer?.finalDigest ?? 0)
            try FileManager.default.moveItem(atPath: temporary, toPath: output)
            print("\(output): format \(format), \(summary.records) records, \(summary.fileBytes) bytes "
                  + "(\(String(format: "%.2f", Double(summary.fileBytes) / Double(max(1, summary.records)))) bytes/record)")
        } catch let e as TraceError {
            try? FileManager.default.removeItem(atPath: temporary)
            FileHandle.standardError.write(Data("imsim: \(input): \(e)\n".utf8))
            throw ExitCode(2)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            FileHandle.standardError.write(Data("imsim: \(output): \(error.localizedDescription)\n".utf8))
            throw ExitCode(2)
        }
    }
}
