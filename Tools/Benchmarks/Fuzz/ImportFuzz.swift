import IMImport
import IMCapture
import IMWire
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Deterministic mutation fuzzing of the pcap/pcapng and HAR readers (`imsim fuzz pcap|har`).
/// Input i is a pure function of (seed, i). Every input goes through the whole import (libpcap,
/// link/IP/TCP decoding, reassembly, RMTP/WebSocket recognition, or the HAR parser) and, when it
/// yields traffic, through the capture builder; the capture it writes must read back under the
/// strict reader. A crash, a hang or an importer-written capture that its own reader refuses is a
/// finding.
public enum ImportFuzz {
    public enum Target: String, Sendable, CaseIterable { case pcap, har }

    public struct Stats: Sendable, Codable {
        public var inputs = 0
        public var inputBytes = 0
        public var imported = 0
        public var capturesBuilt = 0
        public var errors: [String: Int] = [:]
        public var violations = 0
        public var firstViolation: String?
        public var maxResidentKB = 0
    }

    /// The seed inputs: a small RMTP session as classic pcap, as pcapng, and as a HAR.
    public static func corpus(_ target: Target) -> [[UInt8]] {
        let s = seedSession()
        switch target {
        case .pcap: return [classicPcap(s), pcapng(s)]
        case .har: return [har(s)]
        }
    }

    public static func run(_ target: Target, seed: UInt64, iterations: Int, first: Int = 0, buildEvery: Int = 16) -> Stats {
        var stats = Stats()
        let seeds = corpus(target)
        for i in first..<(first + iterations) {
            var rng = SplitMix(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(i))
            let base = seeds[Int(rng.next() % UInt64(seeds.count))]
            // Byte mutations mostly break HAR's JSON: half of the HAR inputs change only letters and
            // digits (base64 payloads, times, names) so the WebSocket and RMTP layers get exercised.
            let input = target == .har && rng.next() & 1 == 0 ? mutateText(base, &rng) : mutate(base, &rng)
            stats.inputs += 1
            stats.inputBytes += input.count
            do {
                let traffic: ObservedTraffic
                switch target {
                case .pcap:
                    let reader = try PcapReader(bytes: input)
                    var importer = PcapImporter()
                    traffic = try importer.read(reader, source: "fuzz")
                case .har:
                    traffic = try HARImporter().read(bytes: input, source: "fuzz")
                }
                stats.imported += 1
                // The builder runs a client core over SQLite: every input that imports would
                // make the run 50× slower, so it sees every `buildEvery`-th one (and input 0).
                if i % buildEvery == 0 {
                    let (capture, _) = try Importer.build(traffic, overrides: IdentityOverrides(userId: "fuzz"))
                    stats.capturesBuilt += 1
                    do { _ = try CaptureReader(bytes: capture).readAll() } catch {
                        stats.violations += 1
                        if stats.firstViolation == nil { stats.firstViolation = "input \(i): the importer wrote a capture its reader refuses: \(error)" }
                    }
                }
            } catch let e as ImportError {
                stats.errors[e.kind.rawValue, default: 0] += 1
            } catch {
                stats.errors["other", default: 0] += 1
            }
        }
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        stats.maxResidentKB = Int(usage.ru_maxrss)
        return stats
    }

    // MARK: - Mutations

    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
    }

    static func mutateText(_ seed: [UInt8], _ rng: inout SplitMix) -> [UInt8] {
        var b = seed
        let alnum = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        for _ in 0..<(1 + rng.int(6)) {
            let at = rng.int(b.count)
            let c = b[at]
            let isAlnum = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
            if isAlnum { b[at] = alnum[rng.int(alnum.count)] }
        }
        return b
    }

    static func mutate(_ seed: [UInt8], _ rng: inout SplitMix) -> [UInt8] {
        var b = seed
        let rounds = 1 + rng.int(4)
        for _ in 0..<rounds {
            guard !b.isEmpty else { b = [UInt8(rng.int(256))]; continue }
            let at = rng.int(b.count)
            switch rng.int(8) {
            case 0: b[at] ^= UInt8(1 << rng.int(8))
            case 1: b[at] = [0, 0xFF, 0x7F, 0x80, 0x01, 0x16, 0x22, 0x5C][rng.int(8)]
            case 2: b.removeSubrange(at..<min(b.count, at + 1 + rng.int(64)))
            case 3: b = Array(b[0..<at])                                          // truncation
            case 4: b.insert(contentsOf: (0..<(1 + rng.int(16))).map { _ in UInt8(rng.int(256)) }, at: at)
            case 5:                                                                  // duplicate a run (a repeated packet, a repeated JSON value)
                let len = min(b.count - at, 1 + rng.int(200))
                b.insert(contentsOf: b[at..<(at + len)], at: rng.int(b.count))
            case 6:                                                                  // a 32-bit length-ish field set to an extreme
                if at + 4 <= b.count {
                    let v: [UInt8] = [[0xFF, 0xFF, 0xFF, 0x7F], [0, 0, 0, 0], [0xFF, 0xFF, 0, 0], [0, 0, 1, 0]][rng.int(4)]
                    for k in 0..<4 { b[at + k] = v[k] }
                }
            default: b[at] = UInt8(rng.int(256))
            }
        }
        return b
    }

    // MARK: - Seeds

    /// A session's client and server byte streams (stream framing): CONNECT, CONNACK, a pull, a send.
    static func seedSession() -> (up: [[UInt8]], down: [[UInt8]]) {
        let connect = Frame.connect(Frame.Connect(keepAlive: 30, clientId: "mobile:alice-phone", appKey: "imsim-app", token: "token-alice"))
        let connack = Frame.connack(Frame.Connack(status: .accepted, session: .init(userId: "alice", sessionId: "s", timestamp: 1_767_225_600_000)))
        let ping = Frame.pingReq(.none)
        let pong = Frame.pingResp(.none)
        let up = [connect, ping].map { try! StreamFraming.encode($0, direction: .clientToServer) }
        let down = [connack, pong].map { try! StreamFraming.encode($0, direction: .serverToClient) }
        return (up, down)
    }

    private static func be16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    private static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    private static func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)] }

    /// Ethernet/IPv4/TCP packets of the session: handshake, the frames, FINs.
    static func packets(_ s: (up: [[UInt8]], down: [[UInt8]])) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var cs: UInt32 = 1000, ss: UInt32 = 5000
        func p(_ fromClient: Bool, _ flags: UInt8, _ payload: [UInt8]) {
            let (sa, da, sp, dp): ([UInt8], [UInt8], Int, Int) = fromClient ? ([10, 0, 0, 1], [10, 0, 0, 2], 40000, 9100) : ([10, 0, 0, 2], [10, 0, 0, 1], 9100, 40000)
            var tcp = be16(sp) + be16(dp) + be32(fromClient ? cs : ss) + be32(fromClient ? ss : cs) + [0x50, flags] + be16(65535) + [0, 0, 0, 0]
            tcp += payload
            let ip: [UInt8] = [0x45, 0] + be16(20 + tcp.count) + [0, 1, 0x40, 0, 64, 6, 0, 0] + sa + da + tcp
            out.append([0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00] + ip)
            let adv = UInt32(payload.count) + (flags & 0x03 != 0 ? 1 : 0)
            if fromClient { cs &+= adv } else { ss &+= adv }
        }
        p(true, 0x02, [])
        p(false, 0x12, [])
        p(true, 0x18, s.up[0])
        p(false, 0x18, s.down[0])
        p(true, 0x18, s.up[1])
        p(false, 0x18, s.down[1])
        p(true, 0x11, [])
        p(false, 0x11, [])
        return out
    }

    static func classicPcap(_ s: (up: [[UInt8]], down: [[UInt8]])) -> [UInt8] {
        var b: [UInt8] = le32(0xA1B2_C3D4) + [2, 0, 4, 0] + le32(0) + le32(0) + le32(262_144) + le32(1)
        for (i, p) in packets(s).enumerated() {
            b += le32(1_767_225_600 + UInt32(i)) + le32(1000) + le32(UInt32(p.count)) + le32(UInt32(p.count)) + p
        }
        return b
    }

    static func pcapng(_ s: (up: [[UInt8]], down: [[UInt8]])) -> [UInt8] {
        func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
            var body = body
            while body.count % 4 != 0 { body.append(0) }
            let len = UInt32(12 + body.count)
            return le32(type) + le32(len) + body + le32(len)
        }
        var b = block(0x0A0D_0D0A, le32(0x1A2B_3C4D) + [1, 0, 0, 0] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        b += block(1, [1, 0, 0, 0] + le32(262_144))   // IDB: Ethernet, snaplen (µs stamps by default)
        for (i, p) in packets(s).enumerated() {
            let ts = UInt64(1_767_225_600 + i) * 1_000_000
            b += block(6, le32(0) + le32(UInt32(ts >> 32)) + le32(UInt32(ts & 0xFFFF_FFFF)) + le32(UInt32(p.count)) + le32(UInt32(p.count)) + p)
        }
        return b
    }

    static func har(_ s: (up: [[UInt8]], down: [[UInt8]])) -> [UInt8] {
        func msg(_ type: String, _ t: String, _ frame: [UInt8], _ dir: WireDirection) -> String {
            var d = StreamDecoder(direction: dir)
            let f = try! d.feed(frame)[0]
            let m = try! MessageFraming.encode(f, direction: dir)
            return "{\"type\":\"\(type)\",\"time\":\(t),\"opcode\":2,\"data\":\"\(base64(m))\"}"
        }
        let msgs = [msg("send", "1767225600.001", s.up[0], .clientToServer), msg("receive", "1767225600.020", s.down[0], .serverToClient),
                    msg("send", "1767225600.030", s.up[1], .clientToServer), msg("receive", "1767225600.040", s.down[1], .serverToClient)]
        let text = "{\"log\":{\"version\":\"1.2\",\"creator\":{\"name\":\"WebInspector\",\"version\":\"537.36\"},\"entries\":[{\"startedDateTime\":\"2026-01-01T00:00:00.000Z\",\"request\":{\"method\":\"GET\",\"url\":\"wss://im.example.com/ws?appId=imsim-app&token=token-alice\"},\"response\":{\"status\":101},\"_resourceType\":\"websocket\",\"_webSocketMessages\":[\(msgs.joined(separator: ","))]}]}}"
        return Array(text.utf8)
    }

    static func base64(_ b: [UInt8]) -> String {
        let a = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < b.count {
            let n = min(3, b.count - i)
            let v = (UInt32(b[i]) << 16) | (n > 1 ? UInt32(b[i + 1]) << 8 : 0) | (n > 2 ? UInt32(b[i + 2]) : 0)
            out += [a[Int(v >> 18 & 63)], a[Int(v >> 12 & 63)], n > 1 ? a[Int(v >> 6 & 63)] : 61, n > 2 ? a[Int(v & 63)] : 61]
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
