import ArgumentParser
import IMSim

/// `imsim trace …`: tools on trace files (`imsim run --trace FILE` writes them).
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Inspect IMSim trace files (.imtrace).",
        discussion: "Format and record schema: Docs/trace-format.md.",
        subcommands: [TraceShowCommand.self, TraceExportCommand.self, TraceLedgerCommand.self, TraceDiffCommand.self,
                      TraceInfoCommand.self, TraceKindsCommand.self, TraceWriteSyntheticCommand.self,
                      TraceConvertCommand.self]
    )
}
