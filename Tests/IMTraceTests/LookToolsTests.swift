import Foundation
import IMSimTestSupport
import IMWire
import IMWorld
import SimKernel
import Testing

@testable import IMTrace
@testable import IMTraceFormat

/// The exports for outside tools, checked with the real tools (Docs/look.md): tshark reads the
/// pcapng and decodes it with Tools/wireshark/rmtp.lua the way IMWire does; the perfetto package's
/// protobuf bindings read the Perfetto trace (Tools/perfetto/check_trace.py). Without the tools
/// these suites are reported as skipped with the reason; `.ci/run` installs them
/// (`Tools/setup.sh --with-tshark`), so CI runs them.
enum LookTools {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized.path
    static let lua = root + "/Tools/wireshark/rmtp.lua"
    static let checkScript = root + "/Tools/perfetto/check_trace.py"

    static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/usr/local/bin").split(separator: ":") {
            let p = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }

    static let tshark: String? = {
        guard let p = which("tshark"), (try? run(p, ["--version"]))?.status == 0 else { return nil }
        return p
    }()

    /// A python3 that can import the perfetto package's protobuf bindings.
    static let python: String? = {
        guard let p = which("python3"),
              (try? run(p, ["-c", "from perfetto.protos.perfetto.trace import perfetto_trace_pb2"]))?.status == 0 else { return nil }
        return p
    }()

    struct Output { var status: Int32; var out: Data; var err: String }

    static func run(_ exe: String, _ args: [String]) throws -> Output {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        // stderr goes to a file, stdout is read to the end before waiting (tshark's JSON can
        // exceed a pipe buffer).
        let errPath = tempPath("stderr-\(StableHash.fnv1a(Array(([exe] + args).joined(separator: "\u{0}").utf8)))")
        FileManager.default.createFile(atPath: errPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errPath) }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle(forWritingAtPath: errPath)
        try p.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let errData = FileManager.default.contents(atPath: errPath) ?? Data()
        return Output(status: p.terminationStatus, out: outData, err: String(decoding: errData, as: UTF8.self))
    }

    static func tempPath(_ name: String) -> String {
        NSTemporaryDirectory() + "imsim-look-\(ProcessInfo.processInfo.processIdentifier)-\(name)"
    }

    /// Records `scenario` at `seed` with the wire bytes; returns the trace bytes.
    static func record(_ scenario: String, seed: UInt64) throws -> [UInt8] {
        let (sc, _) = try Scenario.load(pathOrName: scenario)
        let run = try ScenarioRun(scenario: sc, seed: seed)
        let recorder = try TraceRecorder(inMemory: sc, seed: seed, options: TraceRecorderOptions(keepContent: true))
        recorder.attach(to: run)
        let reason = run.run(until: nil)
        try recorder.finish(stopReason: reason.description)
        return recorder.writer.bytes
    }

    /// Exports a capture of the trace into a file; returns its path and the summary.
    static func pcap(_ trace: [UInt8], name: String) throws -> (String, TraceExportPcapng.Summary) {
        let path = tempPath(name)
        let out = try TextOutput(path: path)
        let s = try TraceExportPcapng.run(try TraceEventReader(bytes: trace), to: out)
        try out.commit()
        return (path, s)
    }

    /// What the trace says crossed the links: bytes delivered each way, and the connections
    /// whose SYN reached the server.
    static func delivered(_ trace: [UInt8]) throws -> (toServer: Int, toDevices: Int, connections: Set<UInt64>) {
        let r = try TraceEventReader(bytes: trace)
        var up = 0, down = 0
        var conns: Set<UInt64> = []
        while let e = try r.next() {
            switch e.event {
            case .serverInput(.bytes(_, let b)): up += b.count
            case .clientInput(_, .transportBytes(let b)): down += b.count
            case .kernel(.connectArrive(let c, _)): conns.insert(c.raw)
            default: break
            }
        }
        return (up, down, conns)
    }
}

/// Which frame a decoder saw: the fields `imsim decode` and the dissector both report.
struct SeenFrame: Equatable, CustomStringConvertible {
    var type: String
    var msgId: String
    var topic: String
    var target: String
    var dup: Bool
    var objectName: String
    var description: String { "\(type) \(topic)→\(target) #\(msgId)\(dup ? " dup" : "") \(objectName)" }
}

@Suite(.serialized, .enabled(if: LookTools.tshark != nil,
                             "tshark not found on PATH — run Tools/setup.sh --with-tshark (Debian package tshark) to run the Wireshark checks"))
struct PcapngTsharkTests {
    /// `tshark -r` reads the export of a run with resets, partitions, half-open connections and
    /// split frames: every packet, one TCP stream per simulated connection that reached the
    /// server, and the payload bytes each way equal the bytes the trace says were delivered (plus,
    /// marked by a comment, the bytes that never arrived).
    @Test(arguments: [("quickstart", UInt64(1)), ("everyday", UInt64(3))])
    func tsharkReadsTheCapture(scenario: String, seed: UInt64) throws {
        let trace = try LookTools.record(scenario, seed: seed)
        let (path, s) = try LookTools.pcap(trace, name: "\(scenario).pcapng")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let o = try LookTools.run(LookTools.tshark!, ["-r", path, "-T", "fields", "-E", "separator=|",
                                                     "-e", "tcp.stream", "-e", "tcp.dstport", "-e", "tcp.len", "-e", "frame.comment"])
        #expect(o.status == 0, "tshark: \(o.err)")
        let lines = String(decoding: o.out, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == s.packets)
        var streams: Set<Substring> = [], up = 0, down = 0, lost = 0
        for l in lines {
            let f = l.split(separator: "|", omittingEmptySubsequences: false)
            streams.insert(f[0])
            let n = Int(f[2]) ?? -1
            if f[3].hasPrefix("never delivered") { lost += n } else if f[1] == "5800" { up += n } else { down += n }
        }
        let expected = try LookTools.delivered(trace)
        #expect(streams.count == expected.connections.count)
        #expect(streams.count == s.connections)
        #expect(up == expected.toServer)
        #expect(down == expected.toDevices)
        #expect(lost == s.bytesLost)
        #expect(up > 10_000 && down > 10_000)
        if scenario == "everyday" { #expect(lost > 0, "the half-open faults should leave bytes that never arrived") }
    }

    /// The dissector decodes every frame the way IMWire does (`imsim decode`): the same frames in
    /// the same order on every connection and direction, with type, msgId, topic (a QUERYACK's
    /// from its QUERY), target, dup/syncMsg and the body's objectName — on runs whose frames were
    /// split across segments (so TCP reassembly through dissect_tcp_pdus is exercised).
    @Test(arguments: [("quickstart", UInt64(1)), ("everyday", UInt64(3))])
    func luaDissectorDecodesLikeIMWire(scenario: String, seed: UInt64) throws {
        let trace = try LookTools.record(scenario, seed: seed)
        let (path, _) = try LookTools.pcap(trace, name: "\(scenario)-lua.pcapng")
        defer { try? FileManager.default.removeItem(atPath: path) }

        // Reference: IMWire's stream decoder over each direction's TCP payload.
        let raw = try LookTools.run(LookTools.tshark!, ["-r", path, "-T", "fields", "-E", "separator=|",
                                                       "-e", "tcp.stream", "-e", "tcp.srcport", "-e", "tcp.payload"])
        #expect(raw.status == 0, "tshark: \(raw.err)")
        var decoders: [String: StreamDecoder] = [:]
        var queryTopics: [String: String] = [:]
        var expected: [String: [SeenFrame]] = [:]
        for l in String(decoding: raw.out, as: UTF8.self).split(separator: "\n") {
            let f = l.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 3, !f[2].isEmpty else { continue }
            let c2s = f[1] != "5800"
            let key = f[0] + (c2s ? ">" : "<")
            let bytes = try #require(try? Hex.decode(f[2]).get())
            var d = decoders[key] ?? StreamDecoder(direction: c2s ? .clientToServer : .serverToClient)
            for frame in try d.feed(bytes) {
                let j = FrameJSON.describe(frame, direction: c2s ? .clientToServer : .serverToClient)
                var topic = j["topic"]?.stringValue ?? ""
                let msgId = j["messageId"]?.int64Value.map { String($0) } ?? ""
                if case .query = frame { queryTopics[f[0] + "#" + msgId] = topic }
                if case .queryAck = frame { topic = queryTopics[f[0] + "#" + msgId] ?? "" }
                expected[key, default: []].append(SeenFrame(
                    type: j["frame"]?.stringValue ?? "?", msgId: msgId, topic: topic,
                    target: j["targetId"]?.stringValue ?? "", dup: j["dup"]?.boolValue ?? false,
                    objectName: j["content"]?["objectName"]?.stringValue ?? ""))
            }
            decoders[key] = d
        }

        // The dissector's view.
        let o = try LookTools.run(LookTools.tshark!, ["-X", "lua_script:" + LookTools.lua, "-r", path, "-Y", "rmtp",
                                                     "-T", "json", "--no-duplicate-keys", "-J", "tcp rmtp"])
        #expect(o.status == 0, "tshark: \(o.err)")
        #expect(!o.err.contains("Lua"), "Lua errors: \(o.err.prefix(2000))")
        let packets = try #require(try JSONSerialization.jsonObject(with: o.out) as? [[String: Any]])
        var seen: [String: [SeenFrame]] = [:]
        var reassembled = 0
        for p in packets {
            let layers = try #require((p["_source"] as? [String: Any])?["layers"] as? [String: Any])
            let tcp = try #require(layers["tcp"] as? [String: Any])
            let stream = try #require(tcp["tcp.stream"] as? String)
            let c2s = (tcp["tcp.srcport"] as? String) != "5800"
            if layers["tcp.segments"] != nil { reassembled += 1 }
            let pdus: [[String: Any]] = (layers["rmtp"] as? [[String: Any]]) ?? [(layers["rmtp"] as? [String: Any]) ?? [:]]
            for r in pdus {
                #expect(r["rmtp.error"] == nil, "stream \(stream): \(r["rmtp.error"] ?? "")")
                let classname = Self.find("rmtp.classname", in: r)
                seen[stream + (c2s ? ">" : "<"), default: []].append(SeenFrame(
                    type: r["rmtp.type"] as? String ?? "?", msgId: r["rmtp.msgid"] as? String ?? "",
                    topic: r["rmtp.topic"] as? String ?? "", target: r["rmtp.target"] as? String ?? "",
                    dup: (r["rmtp.dup"] as? String) == "1", objectName: classname ?? ""))
            }
        }
        #expect(reassembled > 0, "no frame spanned segments: the split-frame path was not exercised")
        #expect(seen.keys.sorted() == expected.keys.sorted())
        var frames = 0
        for key in expected.keys.sorted() {
            let a = seen[key] ?? [], b = expected[key] ?? []
            frames += b.count
            #expect(a.count == b.count, "\(key): dissector \(a.count) frames, IMWire \(b.count)")
            if let i = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                Issue.record("\(key) frame \(i): dissector \(a[i]) vs IMWire \(b[i])")
            }
        }
        #expect(frames > 500)
        // Sync echoes carry the syncMsg bit.
        if scenario == "quickstart" { #expect(seen.values.joined().contains { $0.type == "PUBLISH" && $0.dup }) }
    }

    /// A first-level or nested field of a tshark JSON tree (bodies sit under rmtp.body_tree).
    static func find(_ name: String, in tree: [String: Any]) -> String? {
        if let v = tree[name] as? String { return v }
        for (_, v) in tree.sorted(by: { $0.key < $1.key }) {
            if let t = v as? [String: Any], let found = find(name, in: t) { return found }
        }
        return nil
    }

    /// The official test vector (wire-protocol.md §5) in all three framings the dissector reads:
    /// stream framing split across two segments, the same obfuscated, and message framing inside
    /// a WebSocket binary message after an HTTP upgrade.
    @Test func luaDissectorDecodesTheOfficialVector() throws {
        let vector: [UInt8] = [82, 0, 7, 112, 117, 108, 108, 77, 115, 103, 0, 6, 98, 49, 48, 56, 48, 54, 0, 1, 8, 0, 16, 0, 32, 1]
        let frame = try MessageFraming.decode(vector, direction: .clientToServer)
        for variant in ["stream", "obfuscated", "websocket"] {
            let path = LookTools.tempPath("vector-\(variant).pcapng")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let out = try TextOutput(path: path)
            var w = PcapngWriter(out: out, epochNs: 1_767_225_600_000_000_000)
            w.header(comment: "official vector, \(variant)")
            let client: [UInt8] = [10, 1, 0, 1], server: [UInt8] = [10, 0, 0, 1]
            let port: UInt16 = variant == "websocket" ? 80 : 5800
            var cseq: UInt32 = 1000, sseq: UInt32 = 5000, t: Int64 = 0
            func send(_ c2s: Bool, _ flags: UInt8, _ payload: [UInt8] = []) {
                t += 1_000_000
                w.packet(src: c2s ? client : server, dst: c2s ? server : client, srcPort: c2s ? 40000 : port, dstPort: c2s ? port : 40000,
                         flags: flags, seq: c2s ? cseq : sseq, ack: c2s ? sseq : cseq, payload: payload[...], ns: t, comment: nil)
                let n = UInt32(payload.count) + (flags & 0x03 != 0 ? 1 : 0)
                if c2s { cseq &+= n } else { sseq &+= n }
            }
            send(true, 0x02); send(false, 0x12); send(true, 0x10)
            switch variant {
            case "websocket":
                send(true, 0x18, Array("GET /websocket HTTP/1.1\r\nHost: im.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8))
                send(false, 0x18, Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n".utf8))
                let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
                let masked = vector.enumerated().map { $0.element ^ mask[$0.offset % 4] }
                send(true, 0x18, [0x82, 0x80 | UInt8(vector.count)] + mask + masked)
            default:
                let bytes = try StreamFraming.encode(frame, direction: .clientToServer, obfuscated: variant == "obfuscated")
                send(true, 0x18, Array(bytes[0..<9]))
                send(true, 0x18, Array(bytes[9...]))
            }
            try out.commit()
            var args = ["-X", "lua_script:" + LookTools.lua, "-r", path, "-Y", "rmtp", "-T", "fields", "-E", "separator=|",
                        "-e", "rmtp.type", "-e", "rmtp.topic", "-e", "rmtp.target", "-e", "rmtp.msgid", "-e", "rmtp.qos",
                        "-e", "rmtp.body_type", "-e", "rmtp.pb", "-e", "rmtp.checksum_ok"]
            if variant == "obfuscated" { args = ["-o", "rmtp.obfuscated:TRUE"] + args }
            let o = try LookTools.run(LookTools.tshark!, args)
            #expect(o.status == 0, "\(variant): \(o.err)")
            let rows = String(decoding: o.out, as: UTF8.self).split(separator: "\n")
            #expect(rows.count == 1, "\(variant): \(rows)")
            let f = rows.first.map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) } ?? []
            #expect(f.count == 8)
            guard f.count == 8 else { continue }
            #expect(f[0] == "QUERY" && f[1] == "pullMsg" && f[2] == "b10806" && f[3] == "1" && f[4] == "1", "\(variant): \(f)")
            #expect(f[5] == "SyncRequestMsg")
            #expect(f[6] == "syncTime: 0,ispolling: false,isPullSend: true", "\(variant): \(f[6])")
            #expect(f[7] == (variant == "websocket" ? "" : "1"), "\(variant): checksum \(f[7])")
        }
    }

    /// A capture needs the wire bytes: a trace recorded without --keep-content is refused with a
    /// typed error that says what to do, and no file is left behind.
    @Test func refusesATraceWithoutWireBytes() throws {
        let (sc, _) = try Scenario.load(pathOrName: "quickstart")
        let run = try ScenarioRun(scenario: sc, seed: 1)
        let recorder = try TraceRecorder(inMemory: sc, seed: 1)
        recorder.attach(to: run)
        try recorder.finish(stopReason: run.run(until: SimTime.zero + .seconds(5)).description)
        let path = LookTools.tempPath("refused.pcapng")
        let out = try TextOutput(path: path)
        #expect {
            _ = try TraceExportPcapng.run(try TraceEventReader(bytes: recorder.writer.bytes), to: out)
        } throws: { e in
            (e as? TraceViewError).map { "\($0)".contains("--keep-content") } ?? false
        }
        out.abandon()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: path + ".partial"))
    }
}

@Suite(.serialized, .enabled(if: LookTools.python != nil,
                             "python3 with the perfetto package not found — run Tools/setup.sh --with-tshark (pip install perfetto protobuf) to run the Perfetto checks"))
struct PerfettoProtoTests {
    /// The export parses with the perfetto package's own protobuf bindings, and
    /// Tools/perfetto/check_trace.py finds: a track per device and the server, every slice ends,
    /// and every message's flow runs from its send to each device that stored it.
    @Test func perfettoPackageReadsTheExport() throws {
        let trace = try LookTools.record("quickstart", seed: 1)
        let path = LookTools.tempPath("quickstart.perfetto-trace")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let out = try TextOutput(path: path)
        let s = try TraceExportPerfettoProto.run(open: { () throws(TraceError) in try TraceEventReader(bytes: trace) }, filter: TraceFilter(), to: out)
        try out.commit()
        // Stores the trace itself counts: each (message, device) stored as new is one flow.
        let r = try TraceEventReader(bytes: trace)
        var stores: Set<String> = []
        while let e = try r.next() {
            if case .clientNote(let d, .stored(_, let uid?, _, _, _, true)) = e.event { stores.insert("\(uid)/\(d)") }
        }
        #expect(stores.count > 20)
        let o = try LookTools.run(LookTools.python!, [LookTools.checkScript, path, "--json", "--expect-stores", String(stores.count),
                                                     "--devices", "alice-phone,alice-desktop,bob-phone,carol-phone,dave-web"])
        let text = String(decoding: o.out, as: UTF8.self)
        #expect(o.status == 0, "check_trace: \(text) \(o.err)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(text.split(separator: "\n").first.map(String.init)?.utf8 ?? "".utf8)) as? [String: Any])
        #expect(summary["flows"] as? Int == stores.count)
        #expect(summary["packets"] as? Int == s.packets)
        let names = summary["trackNames"] as? [String] ?? []
        #expect(names.contains("server"))
        #expect(names.contains { $0.hasPrefix("connection c0 ") })
        #expect(names.contains { $0.hasSuffix(" unread") } && names.contains { $0.hasSuffix(" in flight (bytes)") })
        #expect(s.slices > 10)
    }

    /// The checker is not a rubber stamp: a slice that never ends and a flow that ends nowhere
    /// are reported (exit 1).
    @Test func checkerRejectsAnUnendedSliceAndADanglingFlow() throws {
        let path = LookTools.tempPath("broken.perfetto-trace")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let out = try TextOutput(path: path)
        var w = PerfettoWriter(out: out)
        w.descriptor(uuid: 1, name: "server", parent: nil, counterUnit: nil, rank: nil)
        w.event(ns: 10, track: 1, type: 1, name: "connected")
        w.event(ns: 20, track: 1, type: 3, name: "send X", flowIds: [7], annotations: [("uid", "X")])
        w.event(ns: 30, track: 1, type: 3, name: "accepted X", flowIds: [7], annotations: [("uid", "X")])
        w.flush()
        try out.commit()
        let o = try LookTools.run(LookTools.python!, [LookTools.checkScript, path])
        let text = String(decoding: o.out, as: UTF8.self)
        #expect(o.status == 1)
        #expect(text.contains("never end"))
        #expect(text.contains("not at a store"))
    }
}

/// `imsim run --pcap` end to end (no outside tool needed): the capture appears complete, is the
/// same bytes as exporting a --keep-content trace of the same run, and leaves no private trace.
@Suite(.serialized) struct RunPcapCLITests {
    @Test func runPcapEqualsTheExportOfTheSameRun() throws {
        let dir = LookTools.tempPath("cli")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try imsim(["run", "quickstart", "--seed", "2", "--until", "90s", "--pcap", dir + "/a.pcapng",
                           "--trace", dir + "/a.imtrace", "--keep-content"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("pcap \(dir)/a.pcapng: "))
        let e = try imsim(["trace", "export", dir + "/a.imtrace", "--format", "pcapng", "--out", dir + "/b.pcapng"])
        #expect(e.status == 0, "\(e.err)")
        let a = try Data(contentsOf: URL(fileURLWithPath: dir + "/a.pcapng"))
        let b = try Data(contentsOf: URL(fileURLWithPath: dir + "/b.pcapng"))
        #expect(a.count > 10_000)
        #expect(Array(a.prefix(4)) == [0x0A, 0x0D, 0x0D, 0x0A])
        #expect(a == b)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(left == ["a.imtrace", "a.pcapng", "b.pcapng"])
        // Filters would cut connections in half: refused with a reason.
        let f = try imsim(["trace", "export", dir + "/a.imtrace", "--format", "pcapng", "--out", dir + "/c.pcapng", "--device", "alice-phone"])
        #expect(f.status == 2)
        #expect(f.err.contains("filters do not apply"))
    }
}
