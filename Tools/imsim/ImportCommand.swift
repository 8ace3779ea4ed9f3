import ArgumentParser
import Foundation
import IMImport
import IMSim

/// `imsim import pcap|har`: production traffic → a capture `imsim replay` can replay.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Turn a packet capture (pcap/pcapng) or a browser HAR into a capture of one client.",
        discussion: """
        The capture holds the connections with their times, every received chunk as it arrived, the \
        client's frames, and the app calls and timers inferred from what the client sent (each marked \
        "inferred"). What cannot be inferred is listed in the import report, never invented. Replay \
        it with `imsim replay C.jsonl` (frames are compared; there are no callbacks to compare). \
        Walk-through: Docs/guide-reproduce-a-bug.md.
        """,
        subcommands: [ImportPcapCommand.self, ImportHARCommand.self])
}

struct ImportIdentityOptions: ParsableArguments {
    @Option(help: "The device to import when several talk RMTP (its deviceId, or CONNECT's clientId platform:deviceId).")
    var device: String?
    @Option(help: "The user id, when no accepted CONNACK names it.")
    var user: String?
    @Option(help: "The token, when no CONNECT or URL carries it.")
    var token: String?
    @Option(help: "mobile, desktop or web, when CONNECT does not say.")
    var platform: String?
    @Option(name: .customLong("out"), help: "Where to write the capture (.jsonl, or .jsonl.zst to compress). Written atomically.")
    var out: String
    @Option(help: "Also write the import report to this file.")
    var report: String?

    func overrides() throws -> IdentityOverrides {
        var p: Platform?
        if let platform {
            guard let v = Platform(rawValue: platform) else { throw ValidationError("--platform must be mobile, desktop or web") }
            p = v
        }
        let deviceOnly = device.map { d in d.split(separator: ":", maxSplits: 1).count == 2 && Platform(rawValue: String(d.split(separator: ":")[0])) != nil ? String(d.split(separator: ":", maxSplits: 1)[1]) : d }
        return IdentityOverrides(deviceId: deviceOnly, userId: user, platform: p, token: token)
    }

    func finish(_ traffic: ObservedTraffic) throws {
        do {
            let r = try Importer.write(traffic, overrides: try overrides(), to: out)
            let text = r.text + "\n  wrote \(out)\n"
            print(text, terminator: "")
            if let report { try text.write(toFile: report, atomically: true, encoding: .utf8) }
        } catch let e as ImportError {
            FileHandle.standardError.write(Data("imsim import: \(e)\n".utf8))
            throw ExitCode(2)
        }
    }
}

struct ImportPcapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pcap",
        abstract: "Import a pcap or pcapng file (read with libpcap; TCP reassembled per connection and direction).",
        discussion: """
        IM connections are found by --server HOST:PORT (or :PORT), else by recognising RMTP: a CONNECT in \
        stream framing (plain or XOR-obfuscated) or a WebSocket upgrade carrying message framing. TLS \
        cannot be read: capture at a terminating proxy instead. Connections that start before the \
        capture (no SYN) are skipped and listed.
        """)
    @Argument(help: "The .pcap or .pcapng file.") var file: String
    @Option(help: "The IM server as HOST:PORT or :PORT.") var server: String?
    @OptionGroup var identity: ImportIdentityOptions

    func run() throws {
        var filter: (address: [UInt8]?, port: UInt16)?
        if let server {
            guard let f = Endpoint.parseFilter(server) else { throw ValidationError("--server: expected HOST:PORT or :PORT, got \(server)") }
            filter = f
        }
        var importer = PcapImporter(options: .init(server: filter, device: identity.device))
        let traffic: ObservedTraffic
        do { traffic = try importer.read(path: file) } catch let e as ImportError {
            FileHandle.standardError.write(Data("imsim import pcap: \(e)\n".utf8))
            throw ExitCode(2)
        }
        try identity.finish(traffic)
    }
}

struct ImportHARCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "har",
        abstract: "Import a browser HAR 1.2 file with WebSocket frames (Chromium's _webSocketMessages).",
        discussion: "Save it from DevTools → Network → (the WebSocket) → Save all as HAR with content. wss:// is fine: the browser recorded the frames decrypted.")
    @Argument(help: "The .har file.") var file: String
    @OptionGroup var identity: ImportIdentityOptions

    func run() throws {
        let traffic: ObservedTraffic
        do { traffic = try HARImporter(device: identity.device).read(path: file) } catch let e as ImportError {
            FileHandle.standardError.write(Data("imsim import har: \(e)\n".utf8))
            throw ExitCode(2)
        }
        try identity.finish(traffic)
    }
}
