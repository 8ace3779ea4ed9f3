import Foundation
import IMClient
import IMServer
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMTrace
@testable import IMTraceFormat

/// A hand-made trace of one private message alice-phone → bob (bob-phone), plus noise on a
/// third device: every step of the path, with realistic times.
enum Flow {
    static let uid = "BK00-0000-0000-00A1"
    static let epoch = Samples.epoch
    static let toBob = ConversationKey(.privateChat, "bob")
    static let fromAlice = ConversationKey(.privateChat, "alice")

    static func message(id: Int64, uid: String?, conv: ConversationKey, dir: MessageDirection, at ms: Int64) -> TraceMessage {
        TraceMessage(messageId: id, messageUId: uid, conversation: conv, senderUserId: "alice", direction: dir, objectName: "RC:TxtMsg",
                     content: .of("{\"content\":\"hi bob\"}", keep: false), extra: nil, sentTime: epoch + ms, receivedTime: epoch + ms,
                     sentStatus: dir == .send ? .sending : .received, receivedStatus: 0, flags: 3, clientUniqueId: dir == .send ? 55 : nil)
    }

    static func events() -> [(TraceEvent, SimTime)] {
        func t(_ ms: Int64) -> SimTime { SimTime.zero + .milliseconds(ms) }
        let c0 = ConnectionID(0), c1 = ConnectionID(1), c2 = ConnectionID(2)
        let accepted = AcceptedMessage(messageUId: uid, conversation: toBob, senderUserId: "alice", senderDeviceId: "alice-phone",
                                       objectName: "RC:TxtMsg", dataTime: epoch + 5_060, flags: .normal, clientUniqueId: 55,
                                       recipients: ["bob"], contentLength: 20, contentHash: 7)
        var e: [(TraceEvent, SimTime)] = [
            (.meta(.device(index: 0, deviceId: "alice-phone", userId: "alice", platform: .mobile, userIndex: 0)), t(0)),
            (.meta(.device(index: 1, deviceId: "bob-phone", userId: "bob", platform: .mobile, userIndex: 1)), t(0)),
            (.meta(.device(index: 2, deviceId: "carol-phone", userId: "carol", platform: .web, userIndex: 2)), t(0)),
            (.world(.connectionOpened(c0, device: 0)), t(100)), (.world(.connectionOpened(c1, device: 1)), t(120)),
            (.world(.connectionOpened(c2, device: 2)), t(130)),
            (.kernel(.script(step: 0, repeatIndex: 0)), t(5_000)),
            (.clientInput(device: 0, .send(conversation: toBob, objectName: "RC:TxtMsg", content: .of("{\"content\":\"hi bob\"}", keep: false),
                                           pushText: nil, mentioned: false)), t(5_000)),
            (.callback(device: 0, .messageInserted(message(id: 9, uid: nil, conv: toBob, dir: .send, at: 5_000))), t(5_000)),
            (.clientEffect(device: 0, .send(TraceBytes(count: 80), frames: [OutgoingFrame(type: .publish, messageId: 3, topic: "ppMsgP")])), t(5_000)),
            (.kernel(.deliver(c0, device: 0, toServer: true)), t(5_060)),
            (.serverInput(.bytes(c0, TraceBytes(count: 80))), t(5_060)),
            (.serverEvent(.messageAccepted(accepted)), t(5_060)),
            (.serverEffect(.send(c0, TraceBytes(count: 40), frames: [FrameSummary(type: .puback, messageId: 3)])), t(5_060)),
            (.serverEvent(.fannedOut(messageUId: uid, userId: "bob", deviceId: "bob-phone", c1, via: .direct)), t(5_060)),
            (.serverEffect(.send(c1, TraceBytes(count: 120), frames: [FrameSummary(type: .publish, messageId: 1, topic: "s_msg")])), t(5_060)),
            (.kernel(.clientTimer(device: 2, .heartbeat)), t(5_070)),
            (.clientEffect(device: 2, .send(TraceBytes(count: 2), frames: [OutgoingFrame(type: .pingReq)])), t(5_070)),
            (.kernel(.deliver(c0, device: 0, toServer: false)), t(5_110)),
            (.clientInput(device: 0, .transportBytes(TraceBytes(count: 40))), t(5_110)),
            (.callback(device: 0, .sendResult(messageId: 9, messageUId: uid, sentTime: epoch + 5_060, error: nil)), t(5_110)),
            (.kernel(.deliver(c1, device: 1, toServer: false)), t(5_130)),
            (.clientInput(device: 1, .transportBytes(TraceBytes(count: 120))), t(5_130)),
            (.clientNote(device: 1, .stored(messageId: 4, messageUId: uid, conversation: fromAlice, sentTime: epoch + 5_060,
                                            direction: .receive, isNew: true)), t(5_130)),
            (.callback(device: 1, .received(message(id: 4, uid: uid, conv: fromAlice, dir: .receive, at: 5_060), left: 0, offline: false,
                                            hasPackage: false)), t(5_130)),
            (.clientEffect(device: 1, .send(TraceBytes(count: 4), frames: [OutgoingFrame(type: .puback, messageId: 1)])), t(5_130)),
            (.kernel(.faultStart(.reset, device: 2)), t(9_000)),
            (.callback(device: 2, .connectionStatus(.connecting)), t(9_000)),
        ]
        // Kernel events the flow's records belong to (records must follow their event).
        e.insert((.kernel(.appStart(device: 0)), t(100)), at: 3)
        return e
    }

    static func trace(perBlock: Int = 8192) throws -> [UInt8] {
        let options = TraceRecorderOptions(writer: TraceWriterOptions(compressionLevel: 1, recordsPerBlock: perBlock))
        let header = try TraceHeader(seed: 1, scenarioDigest: 2, scenarioName: "flow", options: [TraceOption("epochMs", "\(epoch)")])
        let recorder = try TraceRecorder(writer: try TraceWriter(inMemory: header, options: options.writer), options: options, epochMs: epoch)
        for (ev, t) in events() { recorder.record(ev, at: t) }
        try recorder.close(finalDigest: 3)
        return recorder.writer.bytes
    }
}

func show(_ bytes: [UInt8], _ configure: (inout TraceFilter) -> Void = { _ in }, limit: Int? = nil) throws -> [String] {
    var f = TraceFilter()
    configure(&f)
    var state = TraceFilterState(f)
    try state.prepare { () throws(TraceError) in try TraceEventReader(bytes: bytes) }
    var lines: [String] = []
    try TraceShow.run(try TraceEventReader(bytes: bytes), filter: &state, limit: limit) { lines.append($0) }
    return lines
}

/// Column 4 (actor) and 5 (kind) of a show line.
func actorAndKind(_ line: String) -> (String, String) {
    let cols = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    return (cols[3], cols[4])
}

func exported(_ bytes: [UInt8], _ run: (TextOutput) throws -> Void) throws -> String {
    let path = temporaryPath("export-\(UInt64.random(in: 0...UInt64.max))")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let out = try TextOutput(path: path)
    try run(out)
    #expect(!FileManager.default.fileExists(atPath: path))  // nothing at the path before commit
    try out.commit()
    #expect(!FileManager.default.fileExists(atPath: path + ".partial"))
    return try String(contentsOfFile: path, encoding: .utf8)
}

@Suite struct ShowTests {
    @Test func linesAreAlignedAndNumbered() throws {
        let lines = try show(try Flow.trace())
        #expect(lines.count == Flow.events().count)  // the checkpoint is hidden
        let kindColumn = TraceShow.columnHeader.range(of: "kind")!.lowerBound.utf16Offset(in: TraceShow.columnHeader)
        for l in lines {
            #expect(l.count > kindColumn)
            #expect(l.utf16.count >= kindColumn)
        }
        // The kernel event index: "-" before the first kernel event, then the event each record belongs to.
        #expect(lines[0].contains("       -      0.000000  alice-phone"))
        let send = lines.first { $0.contains("api.send") }!
        #expect(send.contains(" 1      5.000000  alice-phone"))  // event 1 = the script step
        #expect(send.contains("conversation=private:bob type=RC:TxtMsg content=20B #"))
    }

    @Test func deviceFilterKeepsItsRecordsItsLinksAndTheServersRecordsForIt() throws {
        let lines = try show(try Flow.trace()) { $0.devices = ["bob-phone"] }
        let pairs = lines.map(actorAndKind)
        #expect(pairs.map(\.1) == ["meta.device", "world.connectionOpened", "srv.fannedOut", "srv.out.send", "ev.deliver.down",
                                   "in.bytes", "client.stored", "cb.received", "out.send"])
        #expect(Set(pairs.map(\.0)) == ["bob-phone", "link:c1", "server"])
        #expect(try show(try Flow.trace()) { $0.devices = ["d1"] } == lines)
    }

    /// A device the trace does not have is an error naming it and listing the trace's devices,
    /// not an empty view.
    @Test func anUnknownDeviceIsAnErrorNotAnEmptyView() throws {
        for bad in ["0", "zoe", "d3", "d-1"] {
            #expect(throws: TraceError.unknownDevice(bad, deviceCount: 3, examples: ["alice-phone", "bob-phone", "carol-phone"])) {
                try show(try Flow.trace()) { $0.devices = ["bob-phone", bad] }
            }
        }
        let message = TraceError.unknownDevice("zoe", deviceCount: 3, examples: ["alice-phone", "bob-phone", "carol-phone"]).description
        #expect(message == "no device \"zoe\" in this trace (3 devices: alice-phone, bob-phone, carol-phone; or an index d0…d2)")
    }

    @Test func conversationFilterFollowsTheMessageToTheOtherSide() throws {
        let kinds = try show(try Flow.trace()) { $0.conversation = Flow.toBob }.map { actorAndKind($0).1 }
        #expect(kinds == ["api.send", "cb.messageInserted", "srv.accepted", "srv.fannedOut", "cb.sendResult", "client.stored", "cb.received"])
    }

    @Test func messageFilterIncludesTheSendersInsertBeforeTheUIdExisted() throws {
        let kinds = try show(try Flow.trace()) { $0.messageUId = Flow.uid }.map { actorAndKind($0).1 }
        #expect(kinds == ["cb.messageInserted", "srv.accepted", "srv.fannedOut", "cb.sendResult", "client.stored", "cb.received"])
        #expect(try show(try Flow.trace()) { $0.messageUId = "BK-none" }.isEmpty)
    }

    @Test func timeWindowKindAndLimit() throws {
        let bytes = try Flow.trace()
        let window = try show(bytes) { $0.from = SimTime.zero + .milliseconds(5_060); $0.to = SimTime.zero + .milliseconds(5_110) }
        #expect(window.count == 11)
        #expect(window.allSatisfy { $0.contains("5.060000") || $0.contains("5.070000") || $0.contains("5.110000") })
        let cb = try show(bytes) { $0.kinds = ["cb"] }.map { actorAndKind($0).1 }
        #expect(cb == ["cb.messageInserted", "cb.sendResult", "cb.received", "cb.connectionStatus"])
        let mixed = try show(bytes) { $0.kinds = ["srv.fannedOut", "ev.deliver"] }.map { actorAndKind($0).1 }
        #expect(mixed == ["ev.deliver.up", "srv.fannedOut", "ev.deliver.down", "ev.deliver.down"])
        #expect(try show(bytes, limit: 3).count == 3)
        #expect(TraceKinds.matches("srv", "srv.out.send"))
        #expect(!TraceKinds.matches("srv.out.s", "srv.out.send"))
        #expect(!TraceKinds.isKnownPattern("nonsense"))
    }
}

@Suite struct ExportTests {
    @Test func jsonlIsOneValidObjectPerRecord() throws {
        let bytes = try Flow.trace()
        let text = try exported(bytes) { out in
            var f = TraceFilterState(TraceFilter())
            try TraceExportJSONL.run(try TraceEventReader(bytes: bytes), filter: &f, to: out)
        }
        let lines = text.split(separator: "\n")
        #expect(lines.count == Flow.events().count)
        for l in lines {
            let o = try JSONSerialization.jsonObject(with: Data(l.utf8)) as? [String: Any]
            #expect(o?["kind"] is String)
            #expect(o?["ns"] is Int)
        }
        let received = try JSONSerialization.jsonObject(with: Data(lines.first { $0.contains("cb.received") }!.utf8)) as! [String: Any]
        #expect(received["actor"] as? String == "bob-phone")
        #expect(received["uid"] as? String == Flow.uid)
        #expect(received["sentTime"] as? Int == Int(Flow.epoch + 5_060))
        #expect((received["content"] as? [String: Any])?["length"] as? Int == 20)
        #expect(received["event"] as? Int == 5)  // kernel events: appStart, script, deliver up, timer, deliver c0, deliver c1
    }

    @Test func perfettoIsValidTraceEventJSONWithAFlowPerMessagePath() throws {
        let bytes = try Flow.trace()
        let text = try exported(bytes) { out in
            _ = try TraceExportPerfetto.run(open: { () throws(TraceError) in try TraceEventReader(bytes: bytes) }, filter: TraceFilter(), to: out)
        }
        let root = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
        let events = root["traceEvents"] as! [[String: Any]]
        #expect(root["displayTimeUnit"] as? String == "ms")
        for e in events {
            #expect(e["ph"] is String && e["pid"] is Int && e["tid"] is Int, "\(e)")
            if e["ph"] as? String != "M" { #expect(e["ts"] is Double || e["ts"] is Int, "\(e)") }
        }
        let slices = events.filter { $0["ph"] as? String == "X" }
        #expect(slices.count == Flow.events().count + 3)  // + one lifetime slice per connection
        // Track names: a thread per device, the server, each link.
        let threads = events.filter { $0["name"] as? String == "thread_name" }.compactMap { ($0["args"] as? [String: Any])?["name"] as? String }
        #expect(Set(threads).isSuperset(of: ["alice-phone", "bob-phone", "carol-phone", "server", "link:c0", "link:c1"]))
        // Slices on one track never overlap (so a flow point binds to exactly one slice).
        func µ(_ v: Any?) -> Double { (v as? Double) ?? Double(v as? Int ?? -1) }
        var byTrack: [[Int]: [(Double, Double)]] = [:]
        for s in slices where s["cat"] as? String != "link" {
            byTrack[[s["pid"] as! Int, s["tid"] as! Int], default: []].append((µ(s["ts"]), µ(s["ts"]) + µ(s["dur"])))
        }
        for (_, spans) in byTrack {
            let sorted = spans.sorted { $0.0 < $1.0 }
            for (x, y) in zip(sorted, sorted.dropFirst()) { #expect(x.1 <= y.0) }
        }
        // Flows: bob's path send → accept → fan-out → delivery → store → notify, alice's send → accept → result.
        let flows = events.filter { ["s", "t", "f"].contains($0["ph"] as? String ?? "") }
        let ids = Set(flows.map { $0["id"] as! Int })
        #expect(ids.count == 2)
        var chains: [[String]] = []
        for id in ids {
            let steps = flows.filter { $0["id"] as! Int == id }.sorted { µ($0["ts"]) < µ($1["ts"]) }
            #expect(steps.first?["ph"] as? String == "s")
            #expect(steps.last?["ph"] as? String == "f")
            #expect(steps.dropFirst().dropLast().allSatisfy { $0["ph"] as? String == "t" })
            #expect(steps.allSatisfy { $0["cat"] as? String == "message" && ($0["args"] as? [String: Any])?["uid"] as? String == Flow.uid })
            // Each flow point lies inside a slice of its own track.
            var chain: [String] = []
            for s in steps {
                let ts = µ(s["ts"])
                let slice = slices.first { $0["pid"] as? Int == s["pid"] as? Int && $0["tid"] as? Int == s["tid"] as? Int
                    && $0["cat"] as? String != "link" && µ($0["ts"]) <= ts && ts < µ($0["ts"]) + µ($0["dur"]) }
                #expect(slice != nil, "flow point \(s) binds to no slice")
                chain.append(((slice?["args"] as? [String: Any])?["kind"] as? String) ?? "?")
                if s["ph"] as? String != "s" { #expect(s["bp"] as? String == "e") }
            }
            chains.append(chain)
        }
        #expect(chains.sorted { $0.count < $1.count } == [
            ["cb.messageInserted", "srv.accepted", "cb.sendResult"],
            ["cb.messageInserted", "srv.accepted", "srv.fannedOut", "ev.deliver.down", "client.stored", "cb.received"],
        ])
    }

    @Test func mermaidIsASequenceDiagramCappedWithANote() throws {
        let bytes = try Flow.trace()
        let full = try exported(bytes) { out in
            var f = TraceFilterState(TraceFilter())
            try TraceExportMermaid.run(try TraceEventReader(bytes: bytes), filter: &f, to: out)
        }
        let lines = full.split(separator: "\n").map(String.init)
        #expect(lines.first == "sequenceDiagram")
        #expect(lines.contains("    participant S as server"))
        #expect(lines.contains("    participant d0 as alice-phone"))
        #expect(lines.contains("    participant d1 as bob-phone"))
        #expect(lines.contains { $0.hasPrefix("    d0->>S: 5.000s PUBLISH ppMsgP no.3 (80B)") })
        #expect(lines.contains { $0.hasPrefix("    S-->>d1: 5.060s PUBLISH s_msg no.1 (120B)") })
        #expect(lines.contains { $0.contains("Note over d1: 5.130s received private:alice \(Flow.uid)") })
        #expect(!full.contains("#"))
        #expect(!lines.contains { $0.contains("truncated") })
        let capped = try exported(bytes) { out in
            var f = TraceFilterState(TraceFilter())
            let r = try TraceExportMermaid.run(try TraceEventReader(bytes: bytes), filter: &f, maxLines: 3, to: out)
            #expect(r.written == 3)
            #expect(r.omitted > 0)
        }
        let cappedLines = capped.split(separator: "\n").map(String.init)
        #expect(cappedLines.filter { $0.hasPrefix("    d") || $0.hasPrefix("    S-") || $0.hasPrefix("    Note") }.count == 4)
        #expect(cappedLines.last!.contains("truncated:"))
    }

    @Test func anAbandonedOutputLeavesNoFile() throws {
        let path = temporaryPath("abandoned")
        let out = try TextOutput(path: path)
        out.write("half")
        out.abandon()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: path + ".partial"))
    }
}
