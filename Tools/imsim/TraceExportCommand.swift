import ArgumentParser
import Foundation
import IMSim

struct TraceExportCommand: ParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case jsonl, perfetto, mermaid
        case chromeJSON = "chrome-json"
        case pcapng
    }

    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a trace as JSONL (jq), a Perfetto trace, Chrome trace JSON, pcapng (Wireshark) or a Mermaid sequence diagram.",
        discussion: """
            jsonl: one JSON object per record ({"record","event","ns","time","kind","actor", …fields}).
            perfetto: a Perfetto TrackEvent protobuf trace (.perfetto-trace) for https://ui.perfetto.dev \
            or trace_processor: a track per device, connection and the server; state slices \
            (connected, reconnect wait, pulling); every record as an instant; a flow per message from \
            its send to every store; counters (unread per device, bytes in flight per connection).
            chrome-json: the legacy Chrome trace-event JSON (chrome://tracing; Perfetto reads it best-effort): \
            a flow arrow per message and recipient (send → accept → fan-out → delivery → store → notify).
            pcapng: the simulated traffic for Wireshark/tshark (Ethernet/IPv4/TCP per connection, \
            virtual-time stamps; needs a trace recorded with --keep-content; or use `imsim run --pcap`). \
            Decode RMTP in it with Tools/wireshark/rmtp.lua (Docs/look.md). Filters do not apply.
            mermaid: a sequenceDiagram of a time window (use --from/--to), at most --max-lines lines.
            With --out the file appears only when complete (written to FILE.partial, then renamed).
            The filters of `imsim trace show` apply.
            """
    )

    @Argument(help: "Trace file (.imtrace).") var file: String
    @Option(help: "jsonl, perfetto, chrome-json, pcapng or mermaid.") var format: Format
    @Option(help: "Output file (default: standard output).") var out: String?
    @OptionGroup var filters: TraceFilterOptions
    @Option(help: "Mermaid: most diagram lines.") var maxLines = TraceExportMermaid.defaultMaxLines
    @Flag(help: "Read a damaged or unfinished trace (skip damaged blocks).") var salvage = false

    func validate() throws {
        guard maxLines > 0 else { throw ValidationError("--max-lines must be positive") }
    }

    func run() throws {
        let filter = try filters.filter()
        var state = TraceFilterState(filter)
        try TraceCLI.guarded("export", file) {
            let open = { () throws(TraceError) -> TraceEventReader in try TraceEventReader(path: file, salvage: salvage) }
            try state.prepare(open)
            let reader = try TraceCLI.open(file, salvage: salvage, command: "export")
            let output = try out.map { try TextOutput(path: $0) } ?? TextOutput()
            do {
                var summary = ""
                switch format {
                case .jsonl:
                    let n = try TraceExportJSONL.run(reader, filter: &state, to: output)
                    summary = "\(n) records"
                case .chromeJSON:
                    let r = try TraceExportPerfetto.run(open: open, filter: filter, to: output)
                    summary = "\(r.slices) slices, \(r.flows) flow events"
                case .perfetto:
                    let r = try TraceExportPerfettoProto.run(open: open, filter: filter, to: output)
                    summary = "\(r.packets) packets: \(r.instants) instants, \(r.slices) state slices, \(r.counters) counter values, \(r.flows) flow steps"
                case .pcapng:
                    guard out != nil else { throw TraceViewError.usage("pcapng is binary: give --out FILE.pcapng") }
                    guard filter.isTimeOnly, filter.from == nil, filter.to == nil else {
                        throw TraceViewError.usage("the filters do not apply to pcapng (a capture needs whole connections); filter in Wireshark instead")
                    }
                    let r = try TraceExportPcapng.run(reader, to: output)
                    summary = "\(r.packets) packets, \(r.connections) TCP connections, \(r.bytesToServer) bytes to the server, \(r.bytesToDevices) to devices, \(r.bytesLost) never delivered"
                case .mermaid:
                    let r = try TraceExportMermaid.run(reader, filter: &state, maxLines: maxLines, to: output)
                    summary = "\(r.written) lines" + (r.omitted > 0 ? ", \(r.omitted) events left out (truncated)" : "")
                }
                try output.commit()
                if let out { TraceCLI.printError("wrote \(out): \(summary)") }
            } catch {
                output.abandon()
                throw error
            }
            for d in reader.reader.damage { TraceCLI.printError("damage: \(d)") }
        }
    }
}

struct TraceLedgerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "Print the ledger (what each device's user saw) recorded at the end of a trace, as JSON.",
        discussion: """
            The recorder stores the run's ledger when the run ends. A trace of a killed run has \
            none (exit 2, with the reason). A run stopped early (--until, a violation) stores the \
            state at the stop; a note on stderr says so.
            """
    )

    @Argument(help: "Trace file (.imtrace).") var file: String
    @Flag(help: "Read a damaged or unfinished trace.") var salvage = false

    func run() throws {
        try TraceCLI.guarded("ledger", file) {
            let reader = try TraceCLI.open(file, salvage: salvage, command: "ledger")
            let found = try TraceLedgerView.read(reader.reader)
            print(found.ledger.json())
            if !found.complete { TraceCLI.printError("note: the run stopped before the end of its liveness phase; this is the ledger at the stop") }
        }
    }
}

struct TraceDiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two traces: the first divergent record with context, then the ledger diff.",
        discussion: """
            Records are compared decoded (block size, zstd level, checkpoints and the build string \
            do not matter). Header options (how the run was invoked) are listed when they differ \
            but do not count. Exit status: 0 identical, 1 different, 2 a trace cannot be read.
            """
    )

    @Argument(help: "First trace.") var a: String
    @Argument(help: "Second trace.") var b: String
    @Option(help: "Records of context on each side.") var context = 5
    @Flag(help: "Read damaged or unfinished traces.") var salvage = false

    func validate() throws {
        guard context >= 0 else { throw ValidationError("--context must not be negative") }
    }

    func run() throws {
        let diff: TraceDiff
        do {
            diff = try TraceDiff.compare({ () throws(TraceError) in try TraceEventReader(path: a, salvage: salvage) },
                                         { () throws(TraceError) in try TraceEventReader(path: b, salvage: salvage) },
                                         context: context)
        } catch {
            TraceCLI.printError("imsim trace diff: \(error)")
            if case .missingFooter = error { TraceCLI.printError("hint: add --salvage to compare unfinished traces") }
            throw ExitCode(2)
        }
        print(diff.text(labelA: a, labelB: b))
        if !diff.isIdentical { throw ExitCode(1) }
    }
}
