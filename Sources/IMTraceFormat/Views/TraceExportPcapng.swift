import IMWire
import SimKernel

/// `imsim trace export --format pcapng` and `imsim run --pcap`: the simulated network as a pcapng
/// capture for Wireshark / tshark (Docs/look.md).
///
/// One TCP connection per simulated connection that reached the server, with synthesised
/// Ethernet / IPv4 / TCP headers: device `d` is `10.x.y.z` (`deviceAddress`), the server
/// `10.0.0.1:5800`, connection `c` uses client port `32768 + c % 28000`. The capture point is the
/// receiving end of each link: a data packet is one read the simulated link delivered (split
/// frames stay split, coalesced segments stay one read), stamped with the delivery time; SYN at
/// the server's `ev.connectArrive`, SYN/ACK at `srv.in.accepted`, ACK at `ev.connectComplete`,
/// FIN / RST when the receiving side learns of the close (`ev.close.*`), RST/ACK for a refused
/// connect. Bytes that never arrived (written onto a dead or black-holed path, in flight at a
/// reset, or arriving after the receiver had gone) appear once, on the sender's side, with their
/// sequence numbers and a pcapng comment saying why. Timestamps are virtual time from the trace's
/// fixed epoch (`epochMs`), nanosecond resolution. A pure function of the trace.
public enum TraceExportPcapng {
    public static let serverPort: UInt16 = 5800
    public static let serverAddress: [UInt8] = [10, 0, 0, 1]
    /// IPv4 limit: a delivered read longer than this is cut into several packets.
    static let maxSegment = 65_495

    public struct Summary: Equatable, Sendable {
        public var packets = 0
        /// Connections with a SYN in the capture (= tshark's TCP streams).
        public var connections = 0
        /// Payload bytes delivered, per direction.
        public var bytesToServer = 0
        public var bytesToDevices = 0
        /// Payload bytes shown on the sender's side only (never delivered).
        public var bytesLost = 0
    }

    public static func deviceAddress(_ d: Int) -> [UInt8] {
        let n = d + 1
        return [10, UInt8(1 + (n >> 16) % 200), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
    }

    public static func clientPort(_ c: ConnectionID) -> UInt16 { UInt16(32768 + c.raw % 28000) }

    struct Direction {
        var isn: UInt32
        /// Bytes delivered (they have sequence numbers isn+1 …).
        var delivered: UInt64 = 0
        /// Sent, not yet delivered, in order.
        var pending: [UInt8] = []
        /// Bytes shown as lost (after `delivered + pending`).
        var lost: UInt64 = 0
        var fin = false
        var nextSeq: UInt32 { isn &+ 1 &+ UInt32(truncatingIfNeeded: delivered) &+ (fin ? 1 : 0) }
        var sentSeq: UInt32 { isn &+ 1 &+ UInt32(truncatingIfNeeded: delivered &+ UInt64(pending.count) &+ lost) }
    }

    struct Conn {
        var device: Int
        var up: Direction
        var down: Direction
        var synSeen = false
        var clientClosed = false
        var serverClosed = false
        var retired = false
    }

    public static func run(_ r: TraceEventReader, to out: TextOutput) throws(TraceViewError) -> Summary {
        guard r.header.keepContent else {
            throw .usage("the trace was recorded without --keep-content, so it holds no wire bytes; record it with `imsim run … --trace FILE --keep-content`, or use `imsim run … --pcap FILE.pcapng`")
        }
        if let level = r.header.option("traceLevel"), level != "3" {
            throw .usage("the trace was recorded at --trace-level \(level); the capture needs level 3 (every byte in and out)")
        }
        var w = PcapngWriter(out: out, epochNs: r.epochMs &* 1_000_000)
        w.header(comment: "imsim: scenario \(r.header.scenarioName), seed \(r.header.seed); \(r.header.build)")
        var conns: [Conn?] = []
        var devConn: [Int: Int] = [:]
        var lastDeliver: (conn: Int, toServer: Bool)?
        var s = Summary()

        func conn(_ c: ConnectionID) -> Int? {
            let i = Int(c.raw)
            return i < conns.count && conns[i] != nil ? i : nil
        }
        func emit(_ c: Int, toServer: Bool, flags: UInt8, seq: UInt32, ack: UInt32, payload: ArraySlice<UInt8> = [], time: SimTime, comment: String? = nil) {
            let k = conns[c]!
            let dev = deviceAddress(k.device), port = clientPort(ConnectionID(UInt64(c)))
            w.packet(src: toServer ? dev : serverAddress, dst: toServer ? serverAddress : dev,
                     srcPort: toServer ? port : serverPort, dstPort: toServer ? serverPort : port,
                     flags: flags, seq: seq, ack: ack, payload: payload, ns: time.nanoseconds, comment: comment)
            s.packets += 1
        }
        /// Sender-side packets for bytes that never arrived.
        func lose(_ c: Int, toServer: Bool, _ bytes: ArraySlice<UInt8>, why: String, time: SimTime) {
            guard !bytes.isEmpty else { return }
            var seq = toServer ? conns[c]!.up.sentSeq : conns[c]!.down.sentSeq
            let ack = toServer ? conns[c]!.down.nextSeq : conns[c]!.up.nextSeq
            var from = bytes.startIndex
            while from < bytes.endIndex {
                let to = min(from + maxSegment, bytes.endIndex)
                emit(c, toServer: toServer, flags: Tcp.ack | Tcp.psh, seq: seq, ack: ack, payload: bytes[from..<to], time: time,
                     comment: "never delivered: \(why) (\(bytes.count) bytes, shown on the sender's side)")
                seq &+= UInt32(to - from)
                from = to
            }
            if toServer { conns[c]!.up.lost += UInt64(bytes.count) } else { conns[c]!.down.lost += UInt64(bytes.count) }
            s.bytesLost += bytes.count
        }
        func losePending(_ c: Int, why: String, time: SimTime) {
            let up = conns[c]!.up.pending, down = conns[c]!.down.pending
            conns[c]!.up.pending = []
            conns[c]!.down.pending = []
            lose(c, toServer: true, up[...], why: why, time: time)
            lose(c, toServer: false, down[...], why: why, time: time)
        }
        func retireIfDone(_ c: Int, time: SimTime) {
            guard let k = conns[c], k.clientClosed, k.serverClosed, !k.retired else { return }
            conns[c]!.retired = true
            losePending(c, why: "the connection closed (or its path was black-holed) before they arrived", time: time)
        }
        func deliver(_ c: Int, toServer: Bool, _ bytes: [UInt8], record: UInt64, time: SimTime) throws(TraceViewError) {
            var dir = toServer ? conns[c]!.up : conns[c]!.down
            guard let at = find(bytes, in: dir.pending) else {
                throw .usage("record \(record): the bytes delivered on \(ConnectionID(UInt64(c))) \(toServer ? "to the server" : "to the device") were never sent on it (the trace is inconsistent)")
            }
            if at > 0 {
                // Taken off the link earlier but dropped by a receiver that had gone away.
                let gone = Array(dir.pending[0..<at])
                if toServer { conns[c]!.up.pending.removeFirst(at) } else { conns[c]!.down.pending.removeFirst(at) }
                // `lose` numbers them after pending: number them here, before the delivered bytes.
                var tmp = dir
                tmp.pending = []
                tmp.lost = 0
                let seq = tmp.sentSeq
                let ack = toServer ? conns[c]!.down.nextSeq : conns[c]!.up.nextSeq
                emit(c, toServer: toServer, flags: Tcp.ack | Tcp.psh, seq: seq, ack: ack, payload: gone[...], time: time,
                     comment: "never delivered: the receiver had gone when they arrived (\(gone.count) bytes)")
                if toServer { conns[c]!.up.delivered += UInt64(at) } else { conns[c]!.down.delivered += UInt64(at) }
                s.bytesLost += at
                dir = toServer ? conns[c]!.up : conns[c]!.down
            }
            let ack = toServer ? conns[c]!.down.nextSeq : conns[c]!.up.nextSeq
            var seq = dir.nextSeq
            var from = 0
            while from < bytes.count {
                let to = min(from + maxSegment, bytes.count)
                emit(c, toServer: toServer, flags: Tcp.ack | Tcp.psh, seq: seq, ack: ack, payload: bytes[from..<to], time: time)
                seq &+= UInt32(to - from)
                from = to
            }
            if toServer {
                conns[c]!.up.pending.removeFirst(bytes.count)
                conns[c]!.up.delivered += UInt64(bytes.count)
                s.bytesToServer += bytes.count
            } else {
                conns[c]!.down.pending.removeFirst(bytes.count)
                conns[c]!.down.delivered += UInt64(bytes.count)
                s.bytesToDevices += bytes.count
            }
        }
        func payload(_ b: TraceBytes, record: UInt64) throws(TraceViewError) -> [UInt8] {
            guard let bytes = b.bytes else { throw .usage("record \(record): wire bytes not kept (the trace needs --keep-content)") }
            return bytes
        }

        while true {
            let e: TraceEntry
            do {
                guard let n = try r.next() else { break }
                e = n
            } catch { throw .trace(error) }
            let t = e.time
            switch e.event {
            case .clientEffect(let d, .openConnection(let id)):
                let c = Int(id.raw)
                while conns.count <= c { conns.append(nil) }
                conns[c] = Conn(device: d, up: Direction(isn: isn(id, toServer: true)), down: Direction(isn: isn(id, toServer: false)))
                devConn[d] = c
            case .kernel(.connectArrive(let id, _)):
                guard let c = conn(id) else { continue }
                conns[c]!.synSeen = true
                s.connections += 1
                emit(c, toServer: true, flags: Tcp.syn, seq: conns[c]!.up.isn, ack: 0, time: t)
            case .serverInput(.connectionAccepted(let id)):
                guard let c = conn(id) else { continue }
                emit(c, toServer: false, flags: Tcp.syn | Tcp.ack, seq: conns[c]!.down.isn, ack: conns[c]!.up.isn &+ 1, time: t)
            case .world(.connectionRefused(let id, _)):
                guard let c = conn(id) else { continue }
                conns[c]!.serverClosed = true
                emit(c, toServer: false, flags: Tcp.rst | Tcp.ack, seq: 0, ack: conns[c]!.up.isn &+ 1, time: t,
                     comment: "connection refused")
            case .kernel(.connectComplete(let id, _)):
                guard let c = conn(id) else { continue }
                emit(c, toServer: true, flags: Tcp.ack, seq: conns[c]!.up.nextSeq, ack: conns[c]!.down.nextSeq, time: t)
            case .clientEffect(let d, .send(let b, _)):
                guard let c = devConn[d] else { continue }
                conns[c]!.up.pending.append(contentsOf: try payload(b, record: e.index))
            case .serverEffect(.send(let id, let b, _)):
                guard let c = conn(id), !conns[c]!.serverClosed else { continue }
                conns[c]!.down.pending.append(contentsOf: try payload(b, record: e.index))
            case .world(.bytesLost(let id, let toServer, let count)):
                guard let c = conn(id) else { continue }
                // The world refused the write it was just handed: the last `count` pending bytes.
                let p = toServer ? conns[c]!.up.pending : conns[c]!.down.pending
                let n = min(count, p.count)
                let bytes = p[(p.count - n)...]
                if toServer { conns[c]!.up.pending.removeLast(n) } else { conns[c]!.down.pending.removeLast(n) }
                lose(c, toServer: toServer, bytes, why: "written onto a dead or black-holed path", time: t)
            case .kernel(.deliver(let id, _, let toServer)):
                lastDeliver = (Int(id.raw), toServer)
            case .serverInput(.bytes(let id, let b)):
                guard let c = conn(id) else { continue }
                try deliver(c, toServer: true, try payload(b, record: e.index), record: e.index, time: t)
            case .clientInput(_, .transportBytes(let b)):
                guard let ld = lastDeliver, !ld.toServer, conns.indices.contains(ld.conn), conns[ld.conn] != nil else { continue }
                try deliver(ld.conn, toServer: false, try payload(b, record: e.index), record: e.index, time: t)
            case .kernel(.closeNotice(let id, _, let toServer, let reason)):
                guard let c = conn(id), conns[c]!.synSeen else { continue }
                switch reason {
                case .closedByPeer:
                    // The peer's FIN reaches this side.
                    let fromClient = toServer
                    if fromClient ? conns[c]!.up.fin : conns[c]!.down.fin { continue }
                    let seq = fromClient ? conns[c]!.up.nextSeq : conns[c]!.down.nextSeq
                    let ack = fromClient ? conns[c]!.down.nextSeq : conns[c]!.up.nextSeq
                    emit(c, toServer: fromClient, flags: Tcp.fin | Tcp.ack, seq: seq, ack: ack, time: t)
                    if fromClient { conns[c]!.up.fin = true } else { conns[c]!.down.fin = true }
                case .reset:
                    losePending(c, why: "in flight when the connection was reset", time: t)
                    let fromClient = !toServer
                    let seq = fromClient ? conns[c]!.up.sentSeq : conns[c]!.down.sentSeq
                    emit(c, toServer: fromClient, flags: Tcp.rst, seq: seq, ack: 0, time: t,
                         comment: "connection reset (\(toServer ? "the server" : "the device") learns of it)")
                default:
                    break
                }
            case .clientEffect(let d, .closeConnection):
                if let c = devConn.removeValue(forKey: d) {
                    conns[c]!.clientClosed = true
                    retireIfDone(c, time: t)
                }
            case .clientInput(let d, .transportClosed):
                if let c = devConn.removeValue(forKey: d) {
                    conns[c]!.clientClosed = true
                    retireIfDone(c, time: t)
                }
            case .serverEffect(.close(let id)), .serverInput(.connectionClosed(let id, _)):
                guard let c = conn(id) else { continue }
                conns[c]!.serverClosed = true
                retireIfDone(c, time: t)
            default:
                continue
            }
        }
        return s
    }

    /// Deterministic initial sequence numbers (Wireshark shows them relative anyway).
    static func isn(_ c: ConnectionID, toServer: Bool) -> UInt32 {
        UInt32(truncatingIfNeeded: StableHash.fnv1a(Array("\(c.raw)/\(toServer)".utf8)))
    }

    /// Where `needle` starts in `hay`, the earliest match (usually 0).
    static func find(_ needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard needle.count <= hay.count else { return nil }
        if hay.starts(with: needle) { return 0 }
        guard let first = needle.first else { return 0 }
        var i = 1
        while i + needle.count <= hay.count {
            if hay[i] == first, hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    enum Tcp {
        static let fin: UInt8 = 0x01, syn: UInt8 = 0x02, rst: UInt8 = 0x04, psh: UInt8 = 0x08, ack: UInt8 = 0x10
    }
}

/// pcapng blocks (https://www.ietf.org/archive/id/draft-ietf-opsawg-pcapng-02.html), little-endian:
/// one Section Header, one Ethernet interface with nanosecond timestamps, Enhanced Packet Blocks.
struct PcapngWriter {
    let out: TextOutput
    let epochNs: Int64
    var ipId: UInt16 = 0
    var buf: [UInt8] = []

    init(out: TextOutput, epochNs: Int64) {
        self.out = out
        self.epochNs = epochNs
        buf.reserveCapacity(1 << 16)
    }

    mutating func header(comment: String) {
        var opts: [UInt8] = []
        Self.option(1, Array(comment.utf8), into: &opts)
        Self.option(4, Array("imsim trace export --format pcapng".utf8), into: &opts)
        Self.option(0, [], into: &opts)
        var body: [UInt8] = []
        Self.u32(0x1A2B_3C4D, &body)
        Self.u16(1, &body); Self.u16(0, &body)
        body += [UInt8](repeating: 0xFF, count: 8)  // section length unknown
        block(0x0A0D_0D0A, body + opts)
        // Interface: Ethernet (LINKTYPE 1), no snap limit, if_name, if_tsresol = 10^-9.
        var idb: [UInt8] = []
        Self.u16(1, &idb); Self.u16(0, &idb); Self.u32(0, &idb)
        Self.option(2, Array("imsim-sim".utf8), into: &idb)
        Self.option(9, [9], into: &idb)
        Self.option(0, [], into: &idb)
        block(1, idb)
    }

    mutating func packet(src: [UInt8], dst: [UInt8], srcPort: UInt16, dstPort: UInt16, flags: UInt8,
                         seq: UInt32, ack: UInt32, payload: ArraySlice<UInt8>, ns: Int64, comment: String?) {
        var p: [UInt8] = []
        p.reserveCapacity(54 + payload.count)
        // Ethernet: locally administered MACs derived from the addresses.
        p += [0x02, 0x00] + dst + [0x02, 0x00] + src + [0x08, 0x00]
        // IPv4
        let ipStart = p.count
        let total = 20 + 20 + payload.count
        p += [0x45, 0x00, UInt8(total >> 8), UInt8(total & 0xFF), UInt8(ipId >> 8), UInt8(ipId & 0xFF), 0x40, 0x00, 64, 6, 0, 0]
        p += src + dst
        ipId &+= 1
        let ipSum = Self.checksum(p[ipStart..<(ipStart + 20)], initial: 0)
        p[ipStart + 10] = UInt8(ipSum >> 8); p[ipStart + 11] = UInt8(ipSum & 0xFF)
        // TCP, 20-byte header, window 65535.
        let tcpStart = p.count
        p += [UInt8(srcPort >> 8), UInt8(srcPort & 0xFF), UInt8(dstPort >> 8), UInt8(dstPort & 0xFF)]
        Self.be32(seq, &p)
        Self.be32(flags & Self.ackFlag != 0 ? ack : 0, &p)
        p += [0x50, flags, 0xFF, 0xFF, 0, 0, 0, 0]
        p += payload
        var pseudo: UInt32 = 0
        for i in stride(from: 0, to: 4, by: 2) {
            pseudo += UInt32(src[i]) << 8 | UInt32(src[i + 1])
            pseudo += UInt32(dst[i]) << 8 | UInt32(dst[i + 1])
        }
        pseudo += 6 + UInt32(20 + payload.count)
        let tcpSum = Self.checksum(p[tcpStart...], initial: pseudo)
        p[tcpStart + 16] = UInt8(tcpSum >> 8); p[tcpStart + 17] = UInt8(tcpSum & 0xFF)

        let ts = UInt64(bitPattern: epochNs &+ ns)
        var body: [UInt8] = []
        body.reserveCapacity(20 + p.count + 8)
        Self.u32(0, &body)
        Self.u32(UInt32(ts >> 32), &body); Self.u32(UInt32(ts & 0xFFFF_FFFF), &body)
        Self.u32(UInt32(p.count), &body); Self.u32(UInt32(p.count), &body)
        body += p
        while body.count % 4 != 0 { body.append(0) }
        if let comment {
            Self.option(1, Array(comment.utf8), into: &body)
            Self.option(0, [], into: &body)
        }
        block(6, body)
    }

    static let ackFlag: UInt8 = 0x10

    mutating func block(_ type: UInt32, _ body: [UInt8]) {
        let len = UInt32(12 + body.count)
        buf.removeAll(keepingCapacity: true)
        Self.u32(type, &buf); Self.u32(len, &buf)
        buf += body
        Self.u32(len, &buf)
        out.write(bytes: buf)
    }

    static func option(_ code: UInt16, _ value: [UInt8], into b: inout [UInt8]) {
        u16(code, &b); u16(UInt16(value.count), &b)
        b += value
        while b.count % 4 != 0 { b.append(0) }
    }

    /// The Internet checksum (RFC 1071).
    static func checksum(_ bytes: ArraySlice<UInt8>, initial: UInt32) -> UInt16 {
        var sum = UInt64(initial)
        var i = bytes.startIndex
        while i + 1 < bytes.endIndex {
            sum += UInt64(bytes[i]) << 8 | UInt64(bytes[i + 1])
            i += 2
        }
        if i < bytes.endIndex { sum += UInt64(bytes[i]) << 8 }
        while sum >> 16 != 0 { sum = (sum & 0xFFFF) + (sum >> 16) }
        return ~UInt16(sum)
    }

    static func u16(_ v: UInt16, _ b: inout [UInt8]) { b += [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func u32(_ v: UInt32, _ b: inout [UInt8]) {
        b += [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)]
    }
    static func be32(_ v: UInt32, _ b: inout [UInt8]) {
        b += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }
}
