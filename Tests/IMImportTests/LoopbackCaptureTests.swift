import Foundation
import IMClient
import IMImport
import IMReplay
import IMRuntime
import IMServer
import IMWire
import NIOCore
import NIOPosix
import Testing

/// A real run on loopback: `imsim serve`'s server, a fault proxy and two scripted clients
/// (the runtime's own pieces, in process), recorded by tcpdump; the import must replay with no
/// divergence and match the runtime's own capture of the same device.
struct LoopbackRun {
    var pcap: String
    var captures: [String: String]
    var proxyPort: Int
    var serverPort: Int

    static let scripts: [String: String] = [
        "alice": #"""
            [{"after": "300ms", "action": "send", "to": "private:bob", "text": "hi", "count": 4, "interval": "150ms"},
             {"after": "200ms", "action": "join", "room": "lobby", "count": 5},
             {"after": "200ms", "action": "send", "to": "chatroom:lobby", "text": "room"},
             {"after": "1500ms", "action": "send", "to": "private:bob", "text": "after the reset"},
             {"after": "300ms", "action": "read", "conversation": "private:bob"},
             {"after": "300ms", "action": "remoteHistory", "conversation": "private:bob", "count": 5}]
            """#,
        "bob": #"""
            [{"after": "600ms", "action": "send", "to": "private:alice", "text": "yo", "count": 2, "interval": "300ms"},
             {"after": "2500ms", "action": "wait"}]
            """#,
    ]

    /// Starts tcpdump on the loopback interface and waits until it listens.
    static func startTcpdump(_ path: String, ports: [Int]) throws -> (Process, String) {
        let log = path + ".log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["tcpdump", "-i", "lo", "-U", "-s", "0", "-w", path] + [ports.map { "tcp port \($0)" }.joined(separator: " or ")]
        p.standardError = FileHandle(forWritingAtPath: log)
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: log, encoding: .utf8), text.contains("listening on") { return (p, log) }
            if !p.isRunning { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        p.terminate()
        throw ToolFailure(text: "tcpdump did not start listening on lo: \(text)")
    }

    static func waitUntilQuiet(_ path: String) async throws {
        func size() -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1 }
        var last = size(), quiet = 0
        for _ in 0..<200 where quiet < 10 {
            try await Task.sleep(for: .milliseconds(100))
            let now = size()
            quiet = now == last ? quiet + 1 : 0
            last = now
        }
    }

    static func run(dir: String, tcpdump record: Bool = true) async throws -> LoopbackRun {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var so = RuntimeServerOptions()
        so.users = ["alice", "bob"]
        let server = try await RuntimeServer.start(so, group: group).get()
        var po = FaultProxyOptions(target: try SocketAddress(ipAddress: "127.0.0.1", port: server.port))
        po.delay = .milliseconds(15)
        po.seed = 3
        let proxy = try await FaultProxy.start(po, group: group).get()
        let pcap = "\(dir)/lo.pcap"
        let tcpdump = record ? try startTcpdump(pcap, ports: [proxy.port, server.port]).0 : nil
        var clients: [String: RuntimeClient] = [:]
        var captures: [String: String] = [:]
        for user in ["alice", "bob"] {
            var o = RuntimeClientOptions(server: try SocketAddress(ipAddress: "127.0.0.1", port: proxy.port),
                                         identity: DeviceIdentity(userId: user, deviceId: "\(user)-phone", platform: .mobile),
                                         token: RuntimeServerOptions.token(for: user))
            captures[user] = "\(dir)/\(user).jsonl"
            o.capture = RecorderCaptureSink.file(captures[user]!, source: "IMImportTests loopback")
            o.config.heartbeatInterval = .seconds(1)
            clients[user] = try await RuntimeClient.start(o, eventLoop: group.next()).get()
        }
        var runs: [EventLoopFuture<Void>] = []
        for user in ["alice", "bob"] {
            clients[user]!.connect()
            runs.append(clients[user]!.run(try ClientScript.parse(scripts[user]!, path: "\(user).json")))
        }
        // A reset of every proxied connection: both clients reconnect (reconnect timer, new SYN).
        try await Task.sleep(for: .milliseconds(1800))
        _ = try await proxy.resetAll().get()
        for f in runs { try await f.get() }
        try await Task.sleep(for: .milliseconds(500))
        for user in ["alice", "bob"] { _ = try await clients[user]!.stop().get() }
        // tcpdump writes each packet when it reads it (-U), but on a loaded machine it reads the
        // last ones (the final heartbeat, the FINs) well after they crossed the wire: wait until
        // the file has stopped growing for a second (at most 20 s) instead of a fixed pause.
        if record { try await waitUntilQuiet(pcap) } else { try await Task.sleep(for: .milliseconds(300)) }
        // The test runner blocks SIGINT/SIGTERM and its children inherit the mask: tcpdump is
        // killed; with -U every packet was written whole when it was captured.
        if let tcpdump {
            kill(tcpdump.processIdentifier, SIGKILL)
            tcpdump.waitUntilExit()
        }
        try await proxy.shutdown().get()
        try await server.shutdown().get()
        try await group.shutdownGracefully()
        return LoopbackRun(pcap: pcap, captures: captures, proxyPort: proxy.port, serverPort: server.port)
    }
}

@Suite("import of real loopback traffic", .serialized)
struct LoopbackCaptureTests {
    static let skipReason: Comment = "tcpdump is not installed (Tools/setup.sh --with-capture-tools installs tcpdump and tshark)"

    @Test("tcpdump of serve + proxy + 2 clients: the import replays with no divergence and has the runtime capture's frames, in order",
          .enabled(if: toolAvailable("tcpdump"), skipReason))
    func loopbackImportMatchesRuntimeCapture() async throws {
        let dir = NSTemporaryDirectory() + "imsim-import-loopback-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try await LoopbackRun.run(dir: dir)

        var pcaps = [run.pcap]
        if toolAvailable("editcap") {
            // The same packets as pcapng (what Wireshark and dumpcap write).
            try runTool("editcap", ["-F", "pcapng", run.pcap, "\(dir)/lo.pcapng"])
            pcaps.append("\(dir)/lo.pcapng")
        }
        for file in pcaps {
            for user in ["alice", "bob"] {
                var importer = PcapImporter(options: .init(server: (nil, UInt16(run.proxyPort)), device: "\(user)-phone"))
                let traffic = try importer.read(path: file)
                let out = "\(dir)/\(user)-imported.jsonl"
                let report = try Importer.write(traffic, overrides: IdentityOverrides(), to: out)
                #expect(report.notInferred.isEmpty, "\(file) \(user): \(report.notInferred)")
                #expect(report.inferred.contains { $0.contains("timer reconnect") }, "\(user): the reset must be followed by an inferred reconnect")

                let replay = try Replayer(path: out).run()
                #expect(replay.divergence == nil, "\(file) \(user): \(replay.text)")
                #expect(replay.violations.isEmpty)

                let imported = try CaptureReader(path: out).readAll()
                let runtime = try CaptureReader(path: run.captures[user]!).readAll()
                let runtimeOut = frameLines(runtime, outbound: true, framing: .stream)
                #expect(!runtimeOut.isEmpty)
                #expect(frameLines(imported, outbound: true, framing: .stream) == runtimeOut)
                #expect(frameLines(imported, outbound: false, framing: .stream) == frameLines(runtime, outbound: false, framing: .stream))
                let opens = { (rs: [CaptureRecord]) in rs.filter { if case .open = $0.event { true } else { false } }.count }
                #expect(opens(imported) == opens(runtime))
                #expect(opens(runtime) >= 2)
                // Times: a write shows on the wire after the core made it (same wall clock, ms).
                let outTimes = { (rs: [CaptureRecord]) in rs.compactMap { if case .bytesOut = $0.event { $0.t } else { nil } } }
                let a = outTimes(imported), b = outTimes(runtime)
                if a.count == b.count {
                    #expect(zip(a, b).allSatisfy { $0 >= $1 - 1 && $0 - $1 < 1000 }, "\(zip(a, b).map { $0 - $1 })")
                }
            }
        }
    }

    @Test("tshark's follow,tcp,raw agrees with the reassembly on the loopback capture",
          .enabled(if: toolAvailable("tcpdump") && toolAvailable("tshark"), "tcpdump and tshark are needed (Tools/setup.sh --with-capture-tools)"))
    func tsharkAgreesOnLoopback() async throws {
        let dir = NSTemporaryDirectory() + "imsim-import-loopback-ts-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try await LoopbackRun.run(dir: dir)
        let reader = try PcapReader(path: run.pcap)
        let r = TCPReassembler()
        while let p = try reader.next() { r.add(p, linkType: reader.linkType) }
        r.finish()
        let streams = try tsharkStreams(run.pcap)
        #expect(streams.count == r.connections.count)
        #expect(r.connections.count >= 8)   // 2 clients × 2 connections, each proxied to the server
        // tshark prints its -z reports in reverse order: pair the streams by their endpoints.
        for c in r.connections {
            let ends = Set([c.client.description, c.server.description])
            let s = try #require(streams.first { Set([$0.node0, $0.node1]) == ends }, "no tshark stream for \(ends)")
            let clientIs0 = s.node0 == c.client.description
            #expect((clientIs0 ? s.from0 : s.from1) == c.bytes(.clientToServer), "stream \(c.index)")
            #expect((clientIs0 ? s.from1 : s.from0) == c.bytes(.serverToClient), "stream \(c.index)")
            #expect(!c.bytes(.clientToServer).isEmpty)
        }
    }
}
