/// Direction of a byte stream in a connection.
public enum StreamDirection: Int, Sendable, Hashable {
    case clientToServer = 0
    case serverToClient = 1

    public var name: String { self == .clientToServer ? "client→server" : "server→client" }
}

/// What happened on a reassembled connection, in packet order.
public enum ConnectionEvent: Sendable {
    /// The client's SYN.
    case syn(micros: Int64, packet: Int)
    /// The server's SYN-ACK (the connection is open for the client).
    case synAck(micros: Int64, packet: Int)
    /// In-order bytes that became available with this packet (a retransmission or a late
    /// out-of-order segment may release several segments' worth at once).
    case data(StreamDirection, micros: Int64, packet: Int, bytes: [UInt8])
    case fin(StreamDirection, micros: Int64, packet: Int)
    case rst(StreamDirection, micros: Int64, packet: Int)

    public var micros: Int64 {
        switch self {
        case .syn(let m, _), .synAck(let m, _), .data(_, let m, _, _), .fin(_, let m, _), .rst(_, let m, _): m
        }
    }
    public var packet: Int {
        switch self {
        case .syn(_, let p), .synAck(_, let p), .data(_, _, let p, _), .fin(_, _, let p), .rst(_, _, let p): p
        }
    }
}

/// One TCP connection, both directions reassembled.
public final class TCPConnection {
    /// Order of the connection's first packet in the file (0-based: tshark's `tcp.stream`).
    public let index: Int
    public let client: Endpoint
    public let server: Endpoint
    /// The capture starts after the connection's SYN.
    public let midStream: Bool
    /// Why `client` was taken for the client (SYN, SYN-ACK, the server filter, or a guess).
    public let roleBasis: String
    public private(set) var events: [ConnectionEvent] = []
    /// Holes and cuts: bytes the capture does not hold.
    public private(set) var problems: [String] = []
    /// Segments that carried only bytes already delivered (retransmissions, duplicates).
    public private(set) var retransmittedSegments = 0
    public private(set) var outOfOrderSegments = 0
    var dirs = [DirectionState(), DirectionState()]
    var ended: Bool { (dirs[0].finished && dirs[1].finished) || dirs[0].reset || dirs[1].reset }

    init(index: Int, client: Endpoint, server: Endpoint, midStream: Bool, roleBasis: String) {
        self.index = index
        self.client = client
        self.server = server
        self.midStream = midStream
        self.roleBasis = roleBasis
    }

    /// Every byte of one direction, in order (what `tshark -z follow,tcp,raw` prints).
    public func bytes(_ d: StreamDirection) -> [UInt8] {
        var out: [UInt8] = []
        for case .data(let dir, _, _, let b) in events where dir == d { out += b }
        return out
    }

    struct DirectionState {
        /// The sequence number of stream offset 0.
        var base: UInt32?
        var delivered: Int64 = 0
        /// Out-of-order bytes by stream offset, waiting for the hole before them.
        var pending: [Int64: [UInt8]] = [:]
        var pendingBytes = 0
        var finished = false
        var reset = false
        var synSeen = false
    }

    /// Bytes held out of order at most, per direction: beyond it segments are dropped (and said).
    static let maxPendingBytes = 32 * 1024 * 1024

    func add(_ s: TCPSegment, direction d: StreamDirection, micros: Int64, packet: Int) {
        var st = dirs[d.rawValue]
        defer { dirs[d.rawValue] = st }
        if s.syn {
            if !st.synSeen {
                st.synSeen = true
                if st.base == nil || st.delivered == 0 { st.base = s.seq &+ 1 }
                events.append(d == .clientToServer ? .syn(micros: micros, packet: packet) : .synAck(micros: micros, packet: packet))
            }
        }
        if s.rst, !st.reset {
            st.reset = true
            events.append(.rst(d, micros: micros, packet: packet))
            return
        }
        let dataSeq = s.syn ? s.seq &+ 1 : s.seq
        if st.base == nil {
            if s.payloadLength == 0 && !s.fin { return }
            st.base = dataSeq   // the capture starts mid-connection: this segment is offset 0
        }
        // Stream offset of the segment, unwrapped around what was delivered (sequence numbers wrap at 2^32).
        let expected = st.base! &+ UInt32(truncatingIfNeeded: st.delivered)
        let offset = st.delivered + Int64(Int32(bitPattern: dataSeq &- expected))
        if s.payload.count < s.payloadLength {
            let from = offset + Int64(s.payload.count), to = offset + Int64(s.payloadLength)
            problems.append("packet \(packet): \(d.name) bytes \(from)..<\(to) (\(to - from) bytes) not captured (snapshot length cut the packet)")
        }
        if !s.payload.isEmpty {
            var released: [UInt8] = []
            let end = offset + Int64(s.payload.count)
            if end <= st.delivered {
                retransmittedSegments += 1
            } else if offset <= st.delivered {
                released += s.payload.dropFirst(Int(st.delivered - offset))
                st.delivered = end
            } else {
                outOfOrderSegments += 1
                if st.pendingBytes + s.payload.count > Self.maxPendingBytes {
                    problems.append("packet \(packet): \(d.name) out-of-order segment at offset \(offset) dropped (more than \(Self.maxPendingBytes) bytes wait for a hole)")
                } else if (st.pending[offset]?.count ?? -1) < s.payload.count {
                    st.pendingBytes += s.payload.count - (st.pending[offset]?.count ?? 0)
                    st.pending[offset] = Array(s.payload)
                }
            }
            // Release waiting segments the delivered bytes reached (in offset order).
            while !released.isEmpty || !st.pending.isEmpty {
                guard let next = st.pending.keys.filter({ $0 <= st.delivered }).min() else { break }
                let seg = st.pending.removeValue(forKey: next)!
                st.pendingBytes -= seg.count
                let segEnd = next + Int64(seg.count)
                if segEnd > st.delivered {
                    released += seg.dropFirst(Int(st.delivered - next))
                    st.delivered = segEnd
                }
            }
            if !released.isEmpty { events.append(.data(d, micros: micros, packet: packet, bytes: released)) }
        }
        if s.fin, !st.finished {
            st.finished = true
            events.append(.fin(d, micros: micros, packet: packet))
        }
    }

    /// Called at the end of the file: bytes still waiting behind a hole are reported.
    func finish() {
        for d in [StreamDirection.clientToServer, .serverToClient] {
            let st = dirs[d.rawValue]
            if let first = st.pending.keys.min() {
                problems.append("\(d.name) bytes \(st.delivered)..<\(first) (\(first - st.delivered) bytes) never captured; \(st.pendingBytes) bytes after them cannot be placed in the stream")
            }
        }
    }
}

/// Splits a packet capture into TCP connections and reassembles each direction.
public final class TCPReassembler {
    public private(set) var connections: [TCPConnection] = []
    public private(set) var nonTCPPackets = 0
    public private(set) var fragments = 0
    public private(set) var cutPackets: [String] = []
    /// The IM server, if given: decides the roles of connections whose SYN is not captured.
    public var serverHint: (address: [UInt8]?, port: UInt16)?
    private var current: [PairKey: Int] = [:]

    struct PairKey: Hashable {
        var a: Endpoint
        var b: Endpoint
        init(_ x: Endpoint, _ y: Endpoint) {
            if x < y { a = x; b = y } else { a = y; b = x }
        }
    }

    public init(serverHint: (address: [UInt8]?, port: UInt16)? = nil) {
        self.serverHint = serverHint
    }

    private func isServer(_ e: Endpoint) -> Bool {
        guard let h = serverHint else { return false }
        return e.port == h.port && (h.address == nil || h.address! == e.address)
    }

    public func add(_ packet: PcapPacket, linkType: Int32) {
        switch PacketDecoder.decode(packet.data, linkType: linkType) {
        case .tcp(let s): add(s, micros: packet.micros, packet: packet.number)
        case .other: nonTCPPackets += 1
        case .fragment: fragments += 1
        case .cut(let what):
            if cutPackets.count < 50 {
                cutPackets.append("packet \(packet.number): \(packet.data.count) of \(packet.wireLength) bytes captured, \(what) is incomplete (snapshot length or a damaged file)")
            }
        }
    }

    public func add(_ s: TCPSegment, micros: Int64, packet: Int) {
        let key = PairKey(s.source, s.destination)
        var conn = current[key].map { connections[$0] }
        // A new SYN on an ended connection's address pair is a new connection (port reuse).
        if let c = conn, s.syn, !s.ackFlag, c.ended || (c.client == s.source && c.dirs[0].synSeen && c.dirs[0].base != s.seq &+ 1) {
            conn = nil
        }
        if conn == nil {
            let client: Endpoint, server: Endpoint, basis: String, mid: Bool
            if s.syn && !s.ackFlag {
                (client, server, basis, mid) = (s.source, s.destination, "SYN", false)
            } else if s.syn {
                (client, server, basis, mid) = (s.destination, s.source, "SYN-ACK", false)
            } else if isServer(s.destination) {
                (client, server, basis, mid) = (s.source, s.destination, "server address", true)
            } else if isServer(s.source) {
                (client, server, basis, mid) = (s.destination, s.source, "server address", true)
            } else {
                // No handshake in the capture: the lower port is most likely the service.
                let sourceIsServer = s.source.port < s.destination.port
                (client, server) = sourceIsServer ? (s.destination, s.source) : (s.source, s.destination)
                (basis, mid) = ("guess: the lower port is the server", true)
            }
            let c = TCPConnection(index: connections.count, client: client, server: server, midStream: mid, roleBasis: basis)
            connections.append(c)
            current[key] = c.index
            conn = c
        }
        let c = conn!
        c.add(s, direction: s.source == c.client ? .clientToServer : .serverToClient, micros: micros, packet: packet)
    }

    public func finish() {
        for c in connections { c.finish() }
    }
}
