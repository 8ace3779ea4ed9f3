import Foundation
import IMClient
import IMStore
import SimKernel
import IMImport
import IMReplay
import IMWire
import Testing

/// Hand-built RMTP sessions (stream framing plain and obfuscated, WebSocket) → import → replay.
@Suite("import of synthetic sessions")
struct SyntheticSessionTests {
    /// What a client core and a server say in a minimal session: the client's frames come from a
    /// real `ClientCore` (so the replayed core must send exactly them), the server's are made here.
    static func session(obfuscated: Bool) throws -> (up: [[UInt8]], down: [[UInt8]], upFrames: [Frame], downFrames: [Frame]) {
        let identity = DeviceIdentity(userId: "alice", deviceId: "alice-phone", platform: .mobile)
        var config = ClientConfig()
        config.obfuscatedStream = obfuscated
        let store = try IMStore(location: .memory)
        var core = ClientCore(identity: identity, config: config, store: store)
        var up: [[UInt8]] = [], upFrames: [Frame] = []
        var dec = StreamDecoder(direction: .clientToServer, obfuscated: obfuscated)
        func take(_ effects: [ClientEffect]) throws {
            for case .send(let b, _) in effects {
                up.append(b)
                upFrames += try dec.feed(b)
            }
        }
        let t0: Int64 = 1_767_225_600_000
        try take(core.handle(.api(.connect(token: "token-alice", timeLimitSeconds: 0)), now: DeviceTime(milliseconds: t0)))
        try take(core.handle(.transport(.opened), now: DeviceTime(milliseconds: t0 + 1)))
        let connack = Frame.connack(Frame.Connack(status: .accepted, session: .init(userId: "alice", sessionId: "s1", timestamp: t0 + 2)))
        var down: [[UInt8]] = [try StreamFraming.encode(connack, direction: .serverToClient, obfuscated: obfuscated)]
        try take(core.handle(.transport(.bytes(down[0])), now: DeviceTime(milliseconds: t0 + 3)))
        return (up, down, upFrames, [connack])
    }

    @Test("stream framing, plain and XOR-obfuscated: recognised, identity from CONNECT/CONNACK, replays with no divergence",
          arguments: [false, true])
    func streamSession(obfuscated: Bool) throws {
        let s = try Self.session(obfuscated: obfuscated)
        var w = PcapWriter()
        var plan = SegmentPlan(up: [], down: [], shuffle: false, duplicates: false, overlaps: false)
        plan.clientISN = 100
        plan.serverISN = 900
        var t: Int64 = 1_767_225_600_000_000
        var useq: UInt32 = 101, dseq: UInt32 = 901
        func pkt(_ fromClient: Bool, _ payload: [UInt8], flags: UInt8 = 0x18) {
            let p = fromClient
                ? PcapWriter.tcpPacket(src: plan.client, dst: plan.server, seq: useq, ack: dseq, flags: flags, payload: payload)
                : PcapWriter.tcpPacket(src: plan.server, dst: plan.client, seq: dseq, ack: useq, flags: flags, payload: payload)
            if fromClient { useq &+= UInt32(payload.count) } else { dseq &+= UInt32(payload.count) }
            w.packet(micros: t, p)
            t += 1000
        }
        w.packet(micros: t, PcapWriter.tcpPacket(src: plan.client, dst: plan.server, seq: 100, ack: 0, flags: 0x02, payload: [])); t += 1000
        w.packet(micros: t, PcapWriter.tcpPacket(src: plan.server, dst: plan.client, seq: 900, ack: 101, flags: 0x12, payload: [])); t += 1000
        pkt(true, s.up[0])        // CONNECT
        pkt(false, s.down[0])     // CONNACK
        for b in s.up.dropFirst() { pkt(true, b) }   // what the core sends after CONNACK (pull)
        pkt(true, [], flags: 0x11)                   // the client closes

        let traffic = try ReassemblyTests.importBytes(w)
        #expect(traffic.obfuscated == obfuscated)
        #expect(traffic.framing == .stream)
        let (capture, report) = try Importer.build(traffic, overrides: IdentityOverrides())
        #expect(report.notInferred.isEmpty)
        #expect(report.inferred.first?.contains("connect") == true)
        let reader = try CaptureReader(bytes: capture)
        #expect(reader.header.identity.deviceId == "alice-phone")
        #expect(reader.header.identity.userId == "alice")
        #expect(reader.header.imported == "pcap")
        #expect(reader.header.config.obfuscatedStream == obfuscated)
        let records = try reader.readAll()
        #expect(records.contains { $0.inferred != nil })
        #expect(frameLines(records, outbound: true, framing: .stream, obfuscated: obfuscated) ==
                s.upFrames.map { FrameText.headerLine($0, direction: .clientToServer) })
        let replay = try Replayer(reader: try CaptureReader(bytes: capture)).run()
        #expect(replay.divergence == nil)
        #expect(replay.outputsCompared >= s.upFrames.count)
    }

    @Test("plain WebSocket: the upgrade, masked client frames and server frames carry message framing")
    func webSocketSession() throws {
        let s = try Self.session(obfuscated: false)
        func ws(_ payload: [UInt8], masked: Bool, key: [UInt8] = [0x11, 0x22, 0x33, 0x44]) -> [UInt8] {
            var f: [UInt8] = [0x82]
            let n = payload.count
            let m: UInt8 = masked ? 0x80 : 0
            if n < 126 { f.append(m | UInt8(n)) } else { f += [m | 126] + PcapWriter.be16(n) }
            if masked { f += key }
            f += payload.enumerated().map { masked ? $0.element ^ key[$0.offset & 3] : $0.element }
            return f
        }
        let upMessages = s.upFrames.map { try! MessageFraming.encode($0, direction: .clientToServer) }
        let downMessages = s.downFrames.map { try! MessageFraming.encode($0, direction: .serverToClient) }
        let request = Array("GET /websocket?appId=imsim-app&token=token-alice HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)
        let response = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)
        var up = request
        up += ws(upMessages[0], masked: true)
        var down = response + ws(downMessages[0], masked: false)
        for m in upMessages.dropFirst() { up += ws(m, masked: true, key: [1, 2, 3, 4]) }
        down += []
        var w = PcapWriter()
        // One ordered connection; the reassembler splits the streams, the WebSocket reader the messages.
        SegmentPlan(up: up, down: down, shuffle: false, duplicates: false, overlaps: false).write(into: &w)
        let traffic = try ReassemblyTests.importBytes(w)
        #expect(traffic.framing == .message)
        let conn = try #require(traffic.connections.first)
        #expect(conn.token == "token-alice")
        let outs = conn.events.compactMap { if case .out(_, let b) = $0 { b } else { nil } }
        #expect(outs == upMessages)
        let (capture, _) = try Importer.build(traffic, overrides: IdentityOverrides())
        let reader = try CaptureReader(bytes: capture)
        #expect(reader.header.framing == .message)
        _ = try reader.readAll()
    }

    @Test("an unmasked client WebSocket frame is an RFC 6455 error naming the offset")
    func unmaskedClientFrame() {
        var d = WebSocketDecoder(fromClient: true)
        #expect { _ = try d.feed([0x82, 0x02, 0x10, 0x00]) } throws: { e in
            let ie = e as? ImportError
            return ie?.kind == .webSocket && ie!.message.contains("offset 0") && ie!.message.contains("not masked")
        }
        var big = WebSocketDecoder(fromClient: false)
        #expect { _ = try big.feed([0x82, 127, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) } throws: { ($0 as? ImportError)?.kind == .webSocket }
    }
}
