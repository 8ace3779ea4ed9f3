import Benchmarks
import Foundation
import SimKernel
import SwiftProtobuf
import Testing
@testable import IMWire

/// Independent check of the protobuf bodies against Google's own codec: `protoc --decode` and
/// `protoc --encode` with the checked-in `rmtp.proto`. Skipped (with the reason) without protoc.
@Suite(.enabled(if: Protoc.path != nil, "protoc not found on PATH — install protobuf-compiler (apt-get install protobuf-compiler) to run the cross-check"))
struct ProtocCrossCheckTests {
    @Test func publicVectorBodyAccordingToProtoc() throws {
        let text = try Protoc.run(["--decode=rmtp.SyncRequestMsg"], input: [8, 0, 16, 0, 32, 1])
        #expect(String(decoding: text, as: UTF8.self) == "syncTime: 0\nispolling: false\nisPullSend: true\n")
    }

    @Test(arguments: BodyKind.allCases)
    func swiftEncodesProtocDecodes(kind: BodyKind) throws {
        var rng = RandomStream(seed: 0xC0DE &+ UInt64(BodyKind.allCases.firstIndex(of: kind)!))
        for _ in 0..<3 {
            let m = FrameGenerator.message(kind, using: &rng)
            let bytes = try ProtoBody.encode(m)
            let text = try Protoc.run(["--decode=\(kind.protoName)"], input: bytes)
            let back = try kind.messageType.init(textFormatString: String(decoding: text, as: UTF8.self))
            #expect(back.isEqualTo(message: m), "\(kind): protoc read \(String(decoding: text, as: UTF8.self))")
        }
    }

    @Test(arguments: BodyKind.allCases)
    func protocEncodesSwiftDecodes(kind: BodyKind) throws {
        var rng = RandomStream(seed: 0xBEEF &+ UInt64(BodyKind.allCases.firstIndex(of: kind)!))
        for _ in 0..<3 {
            let m = FrameGenerator.message(kind, using: &rng)
            let bytes = try Protoc.run(["--encode=\(kind.protoName)"], input: Array(m.textFormatString().utf8))
            let back = try kind.decode(bytes)
            #expect(back.isEqualTo(message: m), "\(kind)")
            // Both writers emit fields in number order: the bytes agree exactly.
            #expect(bytes == (try ProtoBody.encode(m)), "\(kind)")
        }
    }

    @Test func downStreamPageOfTwentyAccordingToProtoc() throws {
        guard case .queryAck(let ack) = try WireBenchmark.samplePullPage(count: 20) else { return }
        let text = String(decoding: try Protoc.run(["--decode=rmtp.DownStreamMessages"], input: ack.body), as: UTF8.self)
        #expect(text.components(separatedBy: "list {").count - 1 == 20)
        #expect(text.contains("classname: \"RC:TxtMsg\""))
        #expect(text.contains("finished: false"))
        #expect(text.contains("type: 1"))  // DownStreamMessage.type is int32 now (im-semantics §1)
    }
}

enum Protoc {
    static let path: String? = {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/usr/local/bin").split(separator: ":") {
            let p = "\(dir)/protoc"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }()

    static let protoDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/IMWire/Proto").standardized.path

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs protoc with rmtp.proto, feeding `input` on stdin; returns stdout.
    static func run(_ args: [String], input: [UInt8]) throws -> [UInt8] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path!)
        p.arguments = args + ["--proto_path=\(protoDir)", "rmtp.proto"]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        p.standardInput = stdin
        p.standardOutput = stdout
        p.standardError = stderr
        try p.run()
        stdin.fileHandleForWriting.write(Data(input))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw Failure(description: "protoc \(args) exit \(p.terminationStatus): \(String(decoding: err, as: UTF8.self))")
        }
        return [UInt8](out)
    }
}
