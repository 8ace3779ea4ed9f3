import ArgumentParser
import IMSim

/// `imsim trace …`: tools on trace files. Views (`show`, `export`, `ledger`, `diff`) are added
/// here as subcommands once the world's record schema exists.
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Inspect IMSim trace files (.imtrace).",
        discussion: "Format: Docs/trace-format.md.",
        subcommands: [TraceInfoCommand.self, TraceWriteSyntheticCommand.self]
    )
}
