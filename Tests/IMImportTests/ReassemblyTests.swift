import Benchmarks
import Foundation
import IMImport
import IMReplay
import IMWire
import Testing

/// TCP reassembly and the pcap reader on generated captures.
@Suite("pcap reading and TCP reassembly")
struct ReassemblyTests {
    static func randomBytes(_ n: Int, seed: UInt64) -> [UInt8] {
        var r = TestRNG(state: seed)
        return (0..<n).map { _ in UInt8(truncatingIfNeeded: r.next()) }
    }

    static func reassemble(_ w: PcapWriter) throws -> TCPReassembler {
        let reader = try PcapReader(bytes: w.bytes)
        let r = TCPReassembler()
        while let p = try reader.next() { r.add(p, linkType: reader.linkType) }
        r.finish()
        return r
    }

    @Test("reordered, duplicated and overlapping segments (sequence numbers wrapping) give back both streams", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func reorderedSegments(seed: UInt64) throws {
        let plan = SegmentPlan(up: Self.randomBytes(5000, seed: seed), down: Self.randomBytes(7000, seed: seed + 100), seed: seed)
        var w = PcapWriter()
        plan.write(into: &w)
        let r = try Self.reassemble(w)
        #expect(r.connections.count == 1)
        let c = try #require(r.connections.first)
        #expect(c.bytes(.clientToServer) == plan.up)
        #expect(c.bytes(.serverToClient) == plan.down)
        #expect(c.outOfOrderSegments > 0)
        #expect(c.problems.isEmpty)
        #expect(c.client.description == "10.0.0.1:40000")
    }

    @Test("tshark's follow,tcp,raw gives the same bytes per direction on generated captures",
          .enabled(if: toolAvailable("tshark"), "tshark is not installed (Tools/setup.sh --with-capture-tools installs it)"),
          arguments: [11, 12, 13] as [UInt64])
    func tsharkAgreesOnGenerated(seed: UInt64) throws {
        let plan = SegmentPlan(up: Self.randomBytes(3000, seed: seed), down: Self.randomBytes(4000, seed: seed + 1), seed: seed)
        var w = PcapWriter()
        plan.write(into: &w)
        let path = NSTemporaryDirectory() + "imsim-import-gen-\(getpid())-\(seed).pcap"
        try w.write(path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let streams = try tsharkStreams(path)
        let r = try Self.reassemble(w)
        try #require(streams.count == r.connections.count)
        for (s, c) in zip(streams, r.connections) {   // one connection per file
            let clientIs0 = s.node0 == c.client.description
            #expect(clientIs0 || s.node1 == c.client.description)
            #expect(clientIs0 ? s.from0 == c.bytes(.clientToServer) : s.from1 == c.bytes(.clientToServer))
            #expect(clientIs0 ? s.from1 == c.bytes(.serverToClient) : s.from0 == c.bytes(.serverToClient))
        }
    }

    @Test("a packet cut by the snapshot length: the missing stream bytes are named and the rest is delivered")
    func snaplenCut() throws {
        let up = Self.randomBytes(300, seed: 9)
        var plan = SegmentPlan(up: up, down: [1, 2, 3], shuffle: false, duplicates: false, overlaps: false)
        plan.clientISN = 1000
        var w = PcapWriter(snaplen: 96)
        // Handshake, then one 200-byte segment cut to 96 captured bytes (54 headers + 42 payload), then the rest.
        w.packet(micros: 1, PcapWriter.tcpPacket(src: plan.client, dst: plan.server, seq: 1000, ack: 0, flags: 0x02, payload: []))
        w.packet(micros: 2, PcapWriter.tcpPacket(src: plan.server, dst: plan.client, seq: 5, ack: 1001, flags: 0x12, payload: []))
        w.packet(micros: 3, PcapWriter.tcpPacket(src: plan.client, dst: plan.server, seq: 1001, ack: 6, flags: 0x18, payload: Array(up[0..<200])), caplen: 96)
        w.packet(micros: 4, PcapWriter.tcpPacket(src: plan.client, dst: plan.server, seq: 1201, ack: 6, flags: 0x18, payload: Array(up[200...])), caplen: 96)
        let r = try Self.reassemble(w)
        let c = try #require(r.connections.first)
        #expect(c.bytes(.clientToServer) == Array(up[0..<42]))
        #expect(c.problems.contains { $0.contains("packet 3") && $0.contains("bytes 42..<200") && $0.contains("snapshot length") })
        #expect(c.problems.contains { $0.contains("never captured") })
    }

    @Test("a file cut inside a packet: truncatedFile after the last whole packet, earlier packets kept")
    func truncatedFile() throws {
        var w = PcapWriter()
        SegmentPlan(up: Self.randomBytes(2000, seed: 3), down: Self.randomBytes(100, seed: 4), shuffle: false).write(into: &w)
        let cut = Array(w.bytes[0..<(w.bytes.count - 30)])
        let reader = try PcapReader(bytes: cut)
        var n = 0
        var failure: ImportError?
        do { while try reader.next() != nil { n += 1 } } catch { failure = error }
        #expect(n > 3)
        #expect(failure?.kind == .truncatedFile)
        #expect(failure?.message.contains("after packet \(n)") == true)
    }

    @Test("unknown link type, not a pcap, empty input: typed errors")
    func badFiles() throws {
        var w = PcapWriter(linkType: 147)   // USER0
        w.packet(micros: 1, [1, 2, 3])
        let path = NSTemporaryDirectory() + "imsim-import-user0-\(getpid()).pcap"
        try w.write(path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var importer = PcapImporter()
        #expect { _ = try importer.read(path: path) } throws: { ($0 as? ImportError)?.kind == .unknownLinkType && "\($0)".contains("147") }
        #expect { _ = try PcapReader(bytes: Array("not a capture at all".utf8)) } throws: { ($0 as? ImportError)?.kind == .badFile }
        #expect { _ = try PcapReader(bytes: []) } throws: { ($0 as? ImportError)?.kind == .badFile }
        #expect { _ = try PcapReader(path: "/nonexistent/x.pcap") } throws: { ($0 as? ImportError)?.kind == .io }
    }

    static func importBytes(_ w: PcapWriter, options: PcapImporter.Options = .init()) throws -> ObservedTraffic {
        let reader = try PcapReader(bytes: w.bytes)
        var importer = PcapImporter(options: options)
        return try importer.read(reader, source: "(test)")
    }

    @Test("TLS on the IM port is refused with a pointer to a terminating proxy; other traffic is 'no IM traffic'")
    func tlsAndOther() throws {
        var w = PcapWriter()
        SegmentPlan(up: [0x16, 0x03, 0x01, 0x02, 0x00] + Self.randomBytes(500, seed: 1), down: [0x16, 0x03, 0x03, 0, 10], shuffle: false).write(into: &w)
        #expect { _ = try Self.importBytes(w) } throws: { e in
            let ie = e as? ImportError
            return ie?.kind == .tls && ie!.message.contains("terminating proxy")
        }
        var h = PcapWriter()
        SegmentPlan(up: Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), down: Array("HTTP/1.1 200 OK\r\n\r\n".utf8), shuffle: false).write(into: &h)
        #expect { _ = try Self.importBytes(h) } throws: { e in
            let ie = e as? ImportError
            return ie?.kind == .noIMTraffic && ie!.message.contains("HTTP")
        }
    }
}

@Suite("import fuzzing")
struct ImportFuzzTests {
    @Test("a short deterministic fuzz run of each reader: no violation, every error typed", arguments: ImportFuzz.Target.allCases)
    func shortFuzz(target: ImportFuzz.Target) {
        let s = ImportFuzz.run(target, seed: 7, iterations: 1500, buildEvery: 4)
        #expect(s.violations == 0, "\(s.firstViolation ?? "")")
        #expect(s.imported > 0)
        #expect(s.capturesBuilt > 0)
        #expect(s.errors["other"] == nil)
    }

    @Test("the seed corpus imports cleanly: pcap, pcapng and HAR")
    func corpusImports() throws {
        for target in ImportFuzz.Target.allCases {
            for input in ImportFuzz.corpus(target) {
                let traffic: ObservedTraffic
                if target == .pcap {
                    var importer = PcapImporter()
                    traffic = try importer.read(try PcapReader(bytes: input), source: "corpus")
                } else {
                    traffic = try HARImporter().read(bytes: input, source: "corpus")
                }
                // (The seed is a minimal exchange, not what a client core sends: only the reading matters here.)
                let (capture, report) = try Importer.build(traffic, overrides: IdentityOverrides())
                #expect(report.inferred.first?.contains("connect") == true)
                #expect(try CaptureReader(bytes: capture).readAll().count > 4)
            }
        }
    }
}
