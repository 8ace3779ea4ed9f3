import ArgumentParser
import Foundation
import IMSim

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a production capture into the real client core; or lift it into a full-world scenario.",
        discussion: """
            CAPTURE is a capture file (.jsonl or .jsonl.zst; Docs/capture-format.md). Replay feeds its inputs \
            (frames in, transport events, timers, network, app lifecycle, API calls) to a real ClientCore with a fresh \
            in-memory store at the captured device times and compares the core's outputs (frames out byte for byte, \
            callbacks) with the captured ones; it reports the first divergence with context, the violations the \
            per-device checks find, and the device's ledger.
            --bugs B1,B4 / --fixed replay against a core with other bug switches (default: the capture's), to see a \
            bug reproduced with its switch on and gone with it off; outputs are then expected to differ and the \
            verdict rests on the violations.
            --lift builds a full-world scenario from the capture (Docs/guide-reproduce-a-bug.md) and explores \
            --neighbours N seeds around it.
            Exit status: 0 the replay matches and no violation (lift: the lifted scenario reproduces the violation), \
            1 a divergence or a violation (lift: not reproduced), 2 a usage or capture error.
            """
    )

    @Argument(help: "Capture file (.jsonl or .jsonl.zst).") var capture: String
    @Option(help: "Comma-separated client bug switches to replay with (replaces the capture's), e.g. B1,B4.") var bugs: String?
    @Flag(help: "Replay with every bug switch off.") var fixed = false
    @Flag(help: "Print the report as JSON.") var json = false
    @Option(help: "Capture records shown around the divergence.") var context = 5
    @Option(name: .customLong("max-line-length"), help: "Longest capture line accepted, in bytes.") var maxLineLength = CaptureReader.defaultMaxLineLength

    @Flag(help: "Build a full-world scenario from the capture and explore its neighbours.") var lift = false
    @Option(help: "With --lift: write the scenario here (default: CAPTURE without extension + .lifted.json).") var out: String?
    @Option(help: "With --lift: neighbours to explore (seeds 1…N with jittered network and faults).") var neighbours = 20

    func validate() throws {
        if fixed && bugs != nil { throw ValidationError("give --bugs or --fixed, not both") }
        if context < 0 || context > 1000 { throw ValidationError("--context must be 0…1000") }
        if maxLineLength < 1024 { throw ValidationError("--max-line-length must be at least 1024") }
        if neighbours < 0 || neighbours > 100_000 { throw ValidationError("--neighbours must be 0…100000") }
        if !lift && out != nil { throw ValidationError("--out needs --lift") }
    }

    func run() throws {
        var bugSet: ClientBugs?
        if fixed { bugSet = [] }
        if let list = bugs {
            do {
                let parsed = try BugSwitch.parseList(list)
                for b in parsed where b.side != .client {
                    throw ValidationError("\(b) is a \(b.side.rawValue) bug switch; replay drives the client core (client switches: B1, B3–B8, B10, B11, B14)")
                }
                bugSet = ClientBugs(parsed)
            } catch let e as BugListError {
                throw ValidationError("--bugs: \(e)")
            }
        }
        if lift { return try LiftCommandRunner(capture: capture, out: out, neighbours: neighbours, bugs: bugSet, json: json,
                                               maxLineLength: maxLineLength).run() }
        let report: ReplayReport
        do {
            let replayer = try Replayer(path: capture, options: ReplayOptions(bugs: bugSet, context: context), maxLineLength: maxLineLength)
            report = try replayer.run()
        } catch let e as CaptureError {
            FileHandle.standardError.write(Data("imsim: \(capture): \(e)\n".utf8))
            throw ExitCode(2)
        }
        for n in report.notes where n.hasPrefix("warning: ") {
            FileHandle.standardError.write(Data("imsim: \(capture): \(n)\n".utf8))
        }
        print(json ? BenchFormat.json(report) : report.text)
        if report.exitCode != 0 { throw ExitCode(report.exitCode) }
    }
}
