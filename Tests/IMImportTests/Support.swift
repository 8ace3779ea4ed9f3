import Foundation
import IMClient
import IMImport
import IMReplay
import IMWire
import Testing

/// Writes classic pcap files (microsecond stamps, Ethernet) with IPv4/TCP packets: the test
/// generator for reordered, duplicated, overlapping and cut segments.
struct PcapWriter {
    var bytes: [UInt8] = []
    var linkType: UInt32

    init(linkType: UInt32 = 1, snaplen: UInt32 = 262_144) {
        self.linkType = linkType
        le32(0xA1B2_C3D4); le16(2); le16(4); le32(0); le32(0); le32(snaplen); le32(linkType)
    }

    mutating func le16(_ v: UInt16) { bytes += [UInt8(v & 0xFF), UInt8(v >> 8)] }
    mutating func le32(_ v: UInt32) { for i in 0..<4 { bytes.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }

    /// One packet; `caplen` < its length cuts it as a snapshot length would.
    mutating func packet(micros: Int64, _ data: [UInt8], caplen: Int? = nil) {
        let cap = min(caplen ?? data.count, data.count)
        le32(UInt32(micros / 1_000_000)); le32(UInt32(micros % 1_000_000)); le32(UInt32(cap)); le32(UInt32(data.count))
        bytes += data[0..<cap]
    }

    static func be16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

    /// Ethernet + IPv4 + TCP (checksums zero: neither libpcap nor tshark's follow checks them).
    static func tcpPacket(src: ([UInt8], UInt16), dst: ([UInt8], UInt16), seq: UInt32, ack: UInt32, flags: UInt8,
                          payload: [UInt8]) -> [UInt8] {
        var tcp = be16(Int(src.1)) + be16(Int(dst.1)) + be32(seq) + be32(ack) + [0x50, flags] + be16(65535) + [0, 0, 0, 0]
        tcp += payload
        var ip: [UInt8] = [0x45, 0] + be16(20 + tcp.count) + [0, 1, 0x40, 0, 64, 6, 0, 0] + src.0 + dst.0
        ip += tcp
        return [0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00] + ip
    }

    func write(_ path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
}

/// A deterministic generator (pinned seeds; no system randomness in tests).
struct TestRNG {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// One TCP connection written as packets: SYN, SYN-ACK, ACK, then the two byte streams cut in
/// segments, shuffled, duplicated and overlapped as asked, then FINs.
struct SegmentPlan {
    var client = ([UInt8]([10, 0, 0, 1]), UInt16(40000))
    var server = ([UInt8]([10, 0, 0, 2]), UInt16(9100))
    var clientISN: UInt32 = 0xFFFF_FF00   // wraps during the stream
    var serverISN: UInt32 = 0x1234_5678
    var up: [UInt8]
    var down: [UInt8]
    var shuffle = true
    var duplicates = true
    var overlaps = true
    var seed: UInt64 = 1

    func write(into w: inout PcapWriter, startMicros: Int64 = 1_767_225_600_000_000) {
        var rng = TestRNG(state: seed)
        var t = startMicros
        func emit(_ p: [UInt8]) { w.packet(micros: t, p); t += 137 }
        emit(PcapWriter.tcpPacket(src: client, dst: server, seq: clientISN, ack: 0, flags: 0x02, payload: []))
        emit(PcapWriter.tcpPacket(src: server, dst: client, seq: serverISN, ack: clientISN &+ 1, flags: 0x12, payload: []))
        emit(PcapWriter.tcpPacket(src: client, dst: server, seq: clientISN &+ 1, ack: serverISN &+ 1, flags: 0x10, payload: []))
        // Segments of both directions, interleaved.
        var segs: [(fromClient: Bool, off: Int, len: Int)] = []
        for (fromClient, data) in [(true, up), (false, down)] {
            var off = 0
            while off < data.count {
                let len = min(data.count - off, 1 + rng.int(300))
                segs.append((fromClient, off, len))
                if overlaps, rng.int(5) == 0, off > 0 {   // a segment that re-sends part of the previous one and more
                    let back = min(off, 1 + rng.int(40))
                    segs.append((fromClient, off - back, min(data.count - (off - back), back + 1 + rng.int(60))))
                }
                off += len
            }
        }
        var order = Array(segs.indices)
        if shuffle {
            // Local reordering (a window of 6), as networks do; the first segment of each side stays first.
            for i in stride(from: order.count - 1, to: 1, by: -1) {
                let j = max(1, i - rng.int(6))
                order.swapAt(i, j)
            }
        }
        for i in order {
            let s = segs[i]
            let data = s.fromClient ? up : down
            let payload = Array(data[s.off..<(s.off + s.len)])
            let seq = (s.fromClient ? clientISN : serverISN) &+ 1 &+ UInt32(s.off)
            let p = s.fromClient
                ? PcapWriter.tcpPacket(src: client, dst: server, seq: seq, ack: serverISN &+ 1, flags: 0x18, payload: payload)
                : PcapWriter.tcpPacket(src: server, dst: client, seq: seq, ack: clientISN &+ 1, flags: 0x18, payload: payload)
            emit(p)
            if duplicates, rng.int(7) == 0 { emit(p) }
        }
        emit(PcapWriter.tcpPacket(src: client, dst: server, seq: clientISN &+ 1 &+ UInt32(up.count), ack: serverISN &+ 1 &+ UInt32(down.count), flags: 0x11, payload: []))
        emit(PcapWriter.tcpPacket(src: server, dst: client, seq: serverISN &+ 1 &+ UInt32(down.count), ack: clientISN &+ 2 &+ UInt32(up.count), flags: 0x11, payload: []))
    }
}

/// Whether a command is on PATH.
func toolAvailable(_ name: String) -> Bool {
    let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    return paths.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
}

/// Runs a tool, returns its standard output; throws with its standard error if it fails.
@discardableResult
func runTool(_ path: String, _ args: [String]) throws -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path.hasPrefix("/") ? path : "/usr/bin/env")
    p.arguments = path.hasPrefix("/") ? args : [path] + args
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else {
        throw ToolFailure(text: "\(path) \(args.joined(separator: " ")) exited \(p.terminationStatus): \(String(decoding: e, as: UTF8.self).prefix(2000))")
    }
    return String(decoding: o, as: UTF8.self)
}

struct ToolFailure: Error, CustomStringConvertible { var text: String; var description: String { text } }

/// `tshark -q -z follow,tcp,raw,N` for every stream: endpoints and the bytes of each direction.
struct TsharkStream: Equatable {
    var node0: String
    var node1: String
    var from0: [UInt8]
    var from1: [UInt8]
}

func tsharkStreams(_ file: String) throws -> [TsharkStream] {
    let count = try runTool("tshark", ["-n", "-r", file, "-T", "fields", "-e", "tcp.stream"])
        .split(separator: "\n").compactMap { Int($0) }.max().map { $0 + 1 } ?? 0
    guard count > 0 else { return [] }
    var args = ["-n", "-r", file, "-q"]
    for n in 0..<count { args += ["-z", "follow,tcp,raw,\(n)"] }
    let text = try runTool("tshark", args)
    var out: [TsharkStream] = []
    var cur: TsharkStream?
    for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
        let line = String(raw)
        if line.hasPrefix("Node 0: ") { cur = TsharkStream(node0: String(line.dropFirst(8)), node1: "", from0: [], from1: []); continue }
        if line.hasPrefix("Node 1: ") { cur?.node1 = String(line.dropFirst(8)); continue }
        if line.hasPrefix("=====") {
            if let c = cur { out.append(c) }
            cur = nil
            continue
        }
        guard cur != nil, !line.isEmpty, !line.hasPrefix("Follow:"), !line.hasPrefix("Filter:") else { continue }
        let fromNode1 = line.hasPrefix("\t")
        let hex = line.trimmingCharacters(in: .whitespaces)
        guard case .success(let b) = Hex.decode(hex) else { continue }
        if fromNode1 { cur!.from1 += b } else { cur!.from0 += b }
    }
    return out
}

/// The frames of one direction of a capture's connections, in order (decoded summaries).
func frameLines(_ records: [CaptureRecord], outbound: Bool, framing: CaptureFraming, obfuscated: Bool = false) -> [String] {
    var lines: [String] = []
    var decoder: StreamDecoder?
    let dir: WireDirection = outbound ? .clientToServer : .serverToClient
    for r in records {
        switch r.event {
        case .open: decoder = StreamDecoder(direction: dir, obfuscated: obfuscated)
        case .bytesOut(_, let b) where outbound, .bytesIn(_, let b) where !outbound:
            let frames: [Frame]
            if framing == .message { frames = [try? MessageFraming.decode(b, direction: dir)].compactMap { $0 } } else {
                if decoder == nil { decoder = StreamDecoder(direction: dir, obfuscated: obfuscated) }
                frames = (try? decoder!.feed(b)) ?? []
            }
            lines += frames.map { FrameText.headerLine($0, direction: dir) }
        default: break
        }
    }
    return lines
}
