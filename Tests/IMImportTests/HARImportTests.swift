import Foundation
import IMImport
import IMReplay
import IMWire
import Testing

/// A HAR in the shape Chromium writes, made from a real run's frames (the runtime's capture):
/// one WebSocket entry per connection, every frame one binary message (base64).
@Suite("HAR import", .serialized)
struct HARImportTests {
    static func iso(_ ms: Int64) -> String {
        let d = Date(timeIntervalSince1970: Double(ms) / 1000)
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: d)
    }

    /// The HAR of a capture: frames re-cut as WebSocket messages, times as epoch seconds.
    static func har(of records: [CaptureRecord], user: String) -> [UInt8] {
        var entries: [JSONValue] = []
        var messages: [JSONValue] = []
        var started: Int64 = 0
        var up = StreamDecoder(direction: .clientToServer), down = StreamDecoder(direction: .serverToClient)
        func flush() {
            guard started != 0 else { return }
            entries.append(.object([
                "startedDateTime": .string(iso(started)), "time": .int(0), "_resourceType": .string("websocket"),
                "request": .object(["method": .string("GET"), "url": .string("wss://im.example.com/websocket?appId=imsim-app&token=token-\(user)"),
                                    "httpVersion": .string("HTTP/1.1"), "headers": .array([])]),
                "response": .object(["status": .int(101), "statusText": .string("Switching Protocols")]),
                "_webSocketMessages": .array(messages),
            ]))
            messages = []
        }
        for r in records {
            switch r.event {
            case .open:
                flush()
                started = r.t
                up = StreamDecoder(direction: .clientToServer)
                down = StreamDecoder(direction: .serverToClient)
            case .bytesOut(_, let b), .bytesIn(_, let b):
                let outbound: Bool = if case .bytesOut = r.event { true } else { false }
                let frames = (try? (outbound ? up.feed(b) : down.feed(b))) ?? []
                for f in frames {
                    let m = try! MessageFraming.encode(f, direction: outbound ? .clientToServer : .serverToClient)
                    messages.append(.object(["type": .string(outbound ? "send" : "receive"),
                                             "time": .number(String(format: "%.3f", Double(r.t) / 1000)),
                                             "opcode": .int(2), "data": .string(Data(m).base64EncodedString())]))
                }
            default: break
            }
        }
        flush()
        let doc: JSONValue = .object(["log": .object(["version": .string("1.2"), "creator": .object(["name": .string("WebInspector"), "version": .string("537.36")]),
                                                      "pages": .array([]), "entries": .array(entries)])])
        return doc.serialized()
    }

    @Test("a HAR written from a real run's frames imports and replays with no divergence")
    func harFromRealRun() async throws {
        let dir = NSTemporaryDirectory() + "imsim-import-har-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try await LoopbackRun.run(dir: dir, tcpdump: false)
        for user in ["alice", "bob"] {
            let runtime = try CaptureReader(path: run.captures[user]!).readAll()
            let bytes = Self.har(of: runtime, user: user)
            let traffic = try HARImporter().read(bytes: bytes, source: "\(user).har")
            #expect(traffic.framing == .message)
            #expect(traffic.connections.count >= 2)
            let (capture, report) = try Importer.build(traffic, overrides: IdentityOverrides())
            #expect(report.notInferred.isEmpty, "\(user): \(report.notInferred)")
            let reader = try CaptureReader(bytes: capture)
            #expect(reader.header.imported == "har")
            #expect(reader.header.identity.deviceId == "\(user)-phone")
            let records = try reader.readAll()
            #expect(frameLines(records, outbound: true, framing: .message) == frameLines(runtime, outbound: true, framing: .stream))
            let replay = try Replayer(reader: try CaptureReader(bytes: capture)).run()
            #expect(replay.divergence == nil, "\(user): \(replay.text)")
            #expect(replay.outputsCompared > 5)
            if user == "alice" {
                // The same capture with one inferred call changed: the first divergent frame is
                // reported with both frames decoded.
                let text = String(decoding: capture, as: UTF8.self)
                #expect(text.contains("hi #1"))
                let changed = Array(text.replacingOccurrences(of: "hi #1", with: "ho #1").utf8)
                let diverged = try Replayer(reader: try CaptureReader(bytes: changed)).run()
                let d = try #require(diverged.divergence)
                #expect(d.captured.first?.contains("ppMsgP") == true)
                #expect(d.replayed.first?.contains("ppMsgP") == true)
                #expect(d.frameDiff.contains { $0.hasPrefix("captured") } && d.frameDiff.contains { $0.hasPrefix("replayed") })
                #expect(d.frameDiff.joined().contains("ho #1") && d.frameDiff.joined().contains("hi #1"))
            }
        }
    }

    @Test("bad HAR: typed errors naming the entry and field")
    func badHAR() {
        let cases: [(String, String)] = [
            ("{\"log\": {}}", "log.entries"),
            ("[1]", "log"),
            ("{\"log\": {\"entries\": [{\"request\": {\"url\": \"wss://x\"}}]}}", "none with _webSocketMessages"),
            ("{\"log\": {\"entries\": [{\"request\": {\"url\": \"wss://x\"}, \"startedDateTime\": \"yesterday\", \"_webSocketMessages\": []}]}}", "startedDateTime"),
            ("{\"log\": {\"entries\": [{\"request\": {\"url\": \"wss://x\"}, \"startedDateTime\": \"2026-01-01T00:00:00.000Z\", \"_webSocketMessages\": [{\"type\": \"send\", \"time\": 1.5, \"opcode\": 2, \"data\": \"!!\"}]}]}}", "_webSocketMessages[0].data"),
            ("{\"log\": {\"entries\": [{\"request\": {\"url\": \"wss://x\"}, \"startedDateTime\": \"2026-01-01T00:00:00.000Z\", \"_webSocketMessages\": [{\"type\": \"sideways\", \"time\": 1.5, \"opcode\": 2, \"data\": \"\"}]}]}}", "_webSocketMessages[0].type"),
            ("{\"log\"", "not JSON"),
        ]
        for (text, needle) in cases {
            #expect(throws: ImportError.self, "\(needle)") { _ = try HARImporter().read(bytes: Array(text.utf8), source: "t.har") }
            do { _ = try HARImporter().read(bytes: Array(text.utf8), source: "t.har") } catch {
                #expect("\(error)".contains(needle), "\(error)")
            }
        }
    }
}
