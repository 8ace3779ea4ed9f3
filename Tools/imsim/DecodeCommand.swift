import ArgumentParser
import Foundation
import IMSim

struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode RMTP frames and print them readably or as JSON.",
        discussion: """
            Input: --hex, --base64 or --decimal text (message framing: one frame per line; stream \
            framing: the lines are one byte stream), or a binary FILE ('-' = stdin; message framing: \
            the whole file is one frame). Each frame is printed with its type, flags, variable header, \
            the protobuf body with field names and the message content. --json prints one JSON \
            object per line, which `imsim encode` turns back into the same bytes. Exits 1 on the \
            first malformed frame, after printing the frames before it. Like the official decoders, \
            extra bytes after a fixed-layout frame and QoS 3 are accepted and reported as a note on \
            stderr (--strict: an error). --decimal accepts signed bytes (-26 = 230). Header strings \
            may be UTF-8 or CESU-8. Format: Docs/wire-format.md.
            """
    )

    @Argument(help: "Binary file of frames ('-' = stdin).") var file: String?
    @Option(help: "Frames as hex (spaces, ':', ',' and 0x ignored).") var hex: String?
    @Option(help: "Frames as base64.") var base64: String?
    @Option(help: "Frames as decimal bytes, e.g. \"82, 0, 7\".") var decimal: String?
    @Option(help: "message (WebSocket: one frame per message) or stream (TCP: checksum + length).")
    var framing: WireIO.Framing = .message
    @Option(help: "c2s (client→server) or s2c (server→client): PUBLISH/PUBACK layouts differ.") var direction = "c2s"
    @Flag(help: "Stream payloads are XOR-obfuscated.") var obfuscated = false
    @Option(help: "Stream framing: largest accepted frame in bytes.") var maxFrameSize = StreamDecoder.defaultMaxFrameSize
    @Option(help: "Topic of the QUERY that QUERYACK bodies answer (e.g. pullMsg), to decode their protobuf.")
    var queryTopic: String?
    @Flag(help: "Print one JSON object per frame.") var json = false
    @Flag(help: "Reject what the official decoders accept (extra bytes after PINGRESP/DISCONNECT/PUBACK/CONNACK, QoS 3) instead of noting it.")
    var strict = false

    func validate() throws {
        let given = [file != nil, hex != nil, base64 != nil, decimal != nil].filter { $0 }.count
        guard given == 1 else { throw ValidationError("give exactly one input: FILE, --hex, --base64 or --decimal") }
        _ = try WireIO.direction(direction)
        if let t = queryTopic, Topic(rawValue: t) == nil { throw ValidationError("unknown --query-topic \(t)") }
    }

    /// A stream-framed FILE is read in 64 KiB chunks and each frame printed as it decodes:
    /// memory stays bounded whatever the file's size.
    func decodeStream(file: String, direction dir: WireDirection) throws {
        let input = try WireIO.ChunkReader(path: file)
        var decoder = StreamDecoder(direction: dir, maxFrameSize: maxFrameSize, obfuscated: obfuscated)
        decoder.lenient = !strict
        defer { for n in decoder.notes { WireIO.printNote("stream: \(n)") } }
        var index = 0
        do {
            _ = try StreamDecodeLoop.run(&decoder, read: { try input.next() }) { frame, offset, size in
                index += 1
                if json {
                    print(FrameJSON.describe(frame, direction: dir, queryTopic: queryTopic).serializedString)
                } else {
                    print("#\(index) @\(offset) (\(size) bytes) " + FrameText.describe(frame, direction: dir, queryTopic: queryTopic))
                }
            }
        } catch let e as ValidationError {
            throw e
        } catch {
            WireIO.printError("stream: \(error)")
            throw ExitCode.failure
        }
    }

    func run() throws {
        let dir = try WireIO.direction(direction)
        var chunks: [[UInt8]]
        if let file, framing == .stream { return try decodeStream(file: file, direction: dir) }
        if let file { chunks = [try WireIO.readFile(file, limit: maxFrameSize + 16)] }
        else if let hex { chunks = try WireIO.chunks(hex, format: .hex) }
        else if let base64 { chunks = try WireIO.chunks(base64, format: .base64) }
        else { chunks = try WireIO.chunks(decimal!, format: .decimal) }

        var index = 0
        func emit(_ frame: Frame, offset: Int, size: Int) {
            index += 1
            if json {
                print(FrameJSON.describe(frame, direction: dir, queryTopic: queryTopic).serializedString)
            } else {
                print("#\(index) @\(offset) (\(size) bytes) " + FrameText.describe(frame, direction: dir, queryTopic: queryTopic))
            }
        }
        switch framing {
        case .message:
            for c in chunks {
                do {
                    if strict {
                        emit(try MessageFraming.decode(c, direction: dir), offset: 0, size: c.count)
                    } else {
                        let (frame, notes) = try MessageFraming.decodeLenient(c, direction: dir)
                        emit(frame, offset: 0, size: c.count)
                        for n in notes { WireIO.printNote("frame \(index): \(n)") }
                    }
                } catch {
                    WireIO.printError("frame \(index + 1): \(error)")
                    throw ExitCode.failure
                }
            }
        case .stream:
            var decoder = StreamDecoder(direction: dir, maxFrameSize: maxFrameSize, obfuscated: obfuscated)
            decoder.lenient = !strict
            defer { for n in decoder.notes { WireIO.printNote("stream: \(n)") } }
            var offset = 0
            do {
                for c in chunks + [[]] {
                    for f in try decoder.feed(c) {
                        let size = (try? StreamFraming.encode(f, direction: dir).count) ?? 0
                        emit(f, offset: offset, size: size)
                        offset += size
                    }
                }
                try decoder.finish()
            } catch {
                WireIO.printError("stream: \(error)")
                throw ExitCode.failure
            }
        }
    }
}
