import ArgumentParser
import Foundation
import IMSim

struct EncodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode",
        abstract: "Encode frames described as JSON (the output of `imsim decode --json`) to bytes.",
        discussion: """
            Reads JSON Lines (one frame object per line), a JSON array of frame objects, or one \
            object, from --input or stdin. A frame's "bodyHex" is its body byte for byte; without \
            it the body is built from "bodyType" + "body" (protobuf JSON), and "content.json" \
            replaces the message content. Message framing prints one line per frame; stream \
            framing prints the whole byte stream. So `imsim decode --json … | imsim encode` gives \
            back the input bytes. Header strings with characters outside the BMP (emoji) are \
            written as CESU-8, like the official clients; --utf8 writes standard UTF-8. \
            Format: Docs/wire-format.md.
            """
    )

    @Option(help: "JSON input file (default: stdin).") var input: String?
    @Option(help: "message or stream.") var framing: WireIO.Framing = .message
    @Option(help: "Direction for frames whose JSON has none (c2s or s2c).") var direction: String?
    @Flag(help: "Stream framing: XOR-obfuscate payloads.") var obfuscated = false
    @Option(help: "hex, base64, decimal or binary (binary needs --output).") var format: WireIO.ByteFormat = .hex
    @Option(help: "Write the bytes to this file (atomically) instead of stdout.") var output: String?
    @Flag(help: "Write header strings as standard UTF-8 (4-byte emoji) instead of CESU-8, which the official clients write.")
    var utf8 = false

    func validate() throws {
        if let d = direction { _ = try WireIO.direction(d) }
        if format == .binary && output == nil { throw ValidationError("--format binary needs --output FILE") }
    }

    func run() throws {
        let text = input.map { String(decoding: (try? WireIO.readFile($0)) ?? [], as: UTF8.self) } ?? WireIO.readStdinText()
        let defaultDirection = try direction.map(WireIO.direction)
        var descriptions: [(JSONValue, Int)] = []
        switch Result(catching: { () throws(WireError) in try JSONValue.parse(text) }) {
        case .success(.array(let items)): descriptions = items.enumerated().map { ($0.element, $0.offset + 1) }
        case .success(let one): descriptions = [(one, 1)]
        case .failure:
            for (n, line) in WireIO.jsonLines(text) {
                do {
                    descriptions.append((try JSONValue.parse(line), n))
                } catch {
                    WireIO.printError("line \(n): \(error)")
                    throw ExitCode.failure
                }
            }
        }
        let strings: WireStringEncoding = utf8 ? .utf8 : .cesu8
        var lines: [String] = []
        var all: [UInt8] = []
        for (json, n) in descriptions {
            do {
                let (frame, dir) = try FrameJSON.frame(from: json, direction: defaultDirection)
                switch framing {
                case .message:
                    let b = try MessageFraming.encode(frame, direction: dir, strings: strings)
                    all += b
                    lines.append(WireIO.format(b, as: format))
                case .stream:
                    try StreamFraming.encode(frame, direction: dir, obfuscated: obfuscated, strings: strings, into: &all)
                }
            } catch {
                WireIO.printError("frame \(n): \(error)")
                throw ExitCode.failure
            }
        }
        if framing == .stream { lines = [WireIO.format(all, as: format)] }
        if let output {
            if format == .binary {
                try WireIO.writeAtomically(all, to: output)
            } else {
                try WireIO.writeAtomically(Array((lines.joined(separator: "\n") + "\n").utf8), to: output)
            }
        } else {
            for l in lines { print(l) }
        }
    }
}
