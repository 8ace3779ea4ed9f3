import ArgumentParser
import Foundation
import IMSim

struct TraceShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print a trace one record per line: record, event, time, actor, kind, details.",
        discussion: """
            `event` is the kernel event a record belongs to (the one being handled when it was \
            written); oracle violations name the same index. Filters combine (all must hold). \
            --salvage reads a damaged or unfinished trace (e.g. of a killed run): every intact \
            block is shown and the damage is listed on stderr. Exit status: 0, or 2 when the \
            trace cannot be read.
            """
    )

    @Argument(help: "Trace file (.imtrace).") var file: String
    @OptionGroup var filters: TraceFilterOptions
    @Option(help: "Print at most N lines.") var limit: Int?
    @Flag(help: "Read a damaged or unfinished trace (skip damaged blocks).") var salvage = false
    @Flag(name: .customLong("no-header"), help: "Leave out the column header.") var noHeader = false

    func validate() throws {
        if let l = limit, l < 0 { throw ValidationError("--limit must not be negative") }
    }

    func run() throws {
        let filter = try filters.filter()
        var state = TraceFilterState(filter)
        try TraceCLI.guarded("show", file) {
            try state.prepare { () throws(TraceError) in try TraceEventReader(path: file, salvage: salvage) }
            let reader = try TraceCLI.open(file, salvage: salvage, command: "show")
            let out = TextOutput()
            if !noHeader { out.writeLine(TraceShow.columnHeader) }
            let (_, truncated) = try TraceShow.run(reader, filter: &state, limit: limit) { out.writeLine($0) }
            try out.commit()
            if truncated { TraceCLI.printError("(stopped after --limit \(limit!) lines)") }
            for d in reader.reader.damage { TraceCLI.printError("damage: \(d)") }
        }
    }
}

struct TraceKindsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kinds",
        abstract: "List the record kinds (for --kind) and their categories."
    )

    func run() {
        print("categories (use as --kind prefix):")
        for c in TraceKinds.categories { print("  " + TraceText.pad(c.prefix, 10) + "  " + c.what) }
        print("kinds:")
        for k in TraceKinds.all { print("  " + TraceText.padLeft(String(k.kind), 4) + "  " + k.name) }
    }
}
