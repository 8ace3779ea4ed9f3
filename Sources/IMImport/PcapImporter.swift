import IMCapture
import IMWire

/// `imsim import pcap`: a packet capture → the traffic of one RMTP client.
public struct PcapImporter {
    public struct Options: Sendable {
        /// `HOST:PORT` or a port: only connections to it are IM connections.
        public var server: (address: [UInt8]?, port: UInt16)?
        /// The device to import (CONNECT's clientId `platform:deviceId`, or its deviceId).
        public var device: String?
        public init(server: (address: [UInt8]?, port: UInt16)? = nil, device: String? = nil) {
            self.server = server
            self.device = device
        }
    }

    /// What one TCP connection turned out to carry.
    public enum Carrier: Equatable, Sendable {
        case rmtpStream(obfuscated: Bool)
        case webSocket
        case tls
        case midStream
        case other(String)
    }

    public struct Classified {
        public var connection: TCPConnection
        public var carrier: Carrier
        public var observed: ObservedConnection?
        public var summary: String
    }

    public let options: Options
    public private(set) var classified: [Classified] = []
    public private(set) var notes: [String] = []

    public init(options: Options = Options()) { self.options = options }

    /// Reads a pcap/pcapng file and returns the chosen client's traffic.
    public mutating func read(path: String) throws(ImportError) -> ObservedTraffic {
        let reader = try PcapReader(path: path)
        return try read(reader, source: path)
    }

    public mutating func read(_ reader: PcapReader, source: String) throws(ImportError) -> ObservedTraffic {
        guard PacketDecoder.supportedLinkTypes[reader.linkType] != nil else {
            throw ImportError(.unknownLinkType, "\(source): link-layer type \(reader.linkType) is not decoded (known: \(PacketDecoder.supportedLinkTypes.keys.sorted().map { "\($0) \(PacketDecoder.supportedLinkTypes[$0]!)" }.joined(separator: ", ")))")
        }
        let r = TCPReassembler(serverHint: options.server)
        var truncation: ImportError?
        while true {
            do {
                guard let p = try reader.next() else { break }
                r.add(p, linkType: reader.linkType)
            } catch {
                // Keep what was read: the packets before the cut are good.
                truncation = error
                break
            }
        }
        r.finish()
        if let truncation {
            if reader.packetCount == 0 { throw truncation }
            notes.append("the file is cut: \(truncation.message); the \(reader.packetCount) packets before it are imported")
        }
        notes += r.cutPackets
        if r.fragments > 0 { notes.append("\(r.fragments) IP fragment(s) ignored (not reassembled)") }
        return try select(r, source: source)
    }

    private func matchesServer(_ c: TCPConnection) -> Bool {
        guard let s = options.server else { return true }
        return c.server.port == s.port && (s.address == nil || s.address! == c.server.address)
    }

    mutating func select(_ r: TCPReassembler, source: String) throws(ImportError) -> ObservedTraffic {
        classified = r.connections.map { classify($0) }
        let candidates = classified.filter { matchesServer($0.connection) }
        let im = candidates.filter {
            if case .rmtpStream = $0.carrier { return true }
            return $0.carrier == .webSocket && $0.observed != nil
        }
        if im.isEmpty {
            if let tls = candidates.first(where: { $0.carrier == .tls }) {
                throw ImportError(.tls, "\(tls.summary): the traffic is TLS-encrypted and cannot be read. Capture where TLS ends instead: at a terminating proxy (mitmproxy, Charles, a load balancer's plain side) or with the SDK's plain-TCP/ws:// option in a test build")
            }
            let seen = candidates.prefix(20).map { "  \($0.summary)" }.joined(separator: "\n")
            throw ImportError(.noIMTraffic, "no RMTP connection found among \(r.connections.count) TCP connection(s)\(options.server.map { " to port \($0.port)" } ?? "") (\(r.nonTCPPackets) non-TCP packet(s))\(seen.isEmpty ? "" : ":\n" + seen)")
        }
        // One device: by --device, or the only one.
        func device(_ c: Classified) -> String { c.observed?.clientId ?? "?" }
        let devices = Array(Set(im.map(device))).sorted()
        var chosen = im
        if let d = options.device {
            chosen = im.filter { device($0) == d || device($0).hasSuffix(":" + d) }
            guard !chosen.isEmpty else {
                throw ImportError(.ambiguousDevice, "no connection of device \(d); devices in the capture: \(devices.joined(separator: ", "))")
            }
        } else if devices.count > 1 {
            throw ImportError(.ambiguousDevice, "\(devices.count) devices talk RMTP in this capture (\(devices.joined(separator: ", "))): choose one with --device NAME")
        }
        var skipped: [String] = []
        chosen = chosen.filter { c in
            if c.connection.midStream { skipped.append(c.summary) }
            return !c.connection.midStream
        }
        let framings = Set(chosen.map { $0.carrier == .webSocket ? "message" : "stream" })
        guard framings.count <= 1 else {
            throw ImportError(.noIMTraffic, "the device uses both TCP and WebSocket connections; import one kind with --server")
        }
        guard let first = chosen.first else {
            throw ImportError(.noIMTraffic, "every connection of the device starts before the capture (no SYN): the SDK's state at that point is unknown; capture from before the app connects")
        }
        var obfuscated = false
        if case .rmtpStream(let o) = first.carrier { obfuscated = o }
        var t = ObservedTraffic(framing: first.carrier == .webSocket ? .message : .stream, obfuscated: obfuscated,
                                connections: chosen.map { $0.observed! }, origin: "pcap", source: source)
        t.notes = notes
        for s in skipped { t.notes.append("skipped (started before the capture): \(s)") }
        for c in chosen {
            t.notes += c.connection.problems.map { "tcp stream \(c.connection.index): \($0)" }
            if c.connection.retransmittedSegments + c.connection.outOfOrderSegments > 0 {
                t.notes.append("tcp stream \(c.connection.index): \(c.connection.retransmittedSegments) retransmitted and \(c.connection.outOfOrderSegments) out-of-order segment(s) reassembled")
            }
        }
        let others = classified.filter { c in !chosen.contains { $0.connection === c.connection } }
        if !others.isEmpty { t.notes.append("\(others.count) other TCP connection(s) not imported (other devices, other services)") }
        return t
    }

    private func classify(_ c: TCPConnection) -> Classified {
        let label = "tcp stream \(c.index) \(c.client) → \(c.server)"
        let up = Array(c.bytes(.clientToServer).prefix(4096))
        if c.midStream {
            return Classified(connection: c, carrier: .midStream, observed: nil, summary: "\(label): starts before the capture (\(c.roleBasis))")
        }
        if up.count >= 3, up[0] == 0x16, up[1] == 0x03, up[2] <= 0x04 {
            return Classified(connection: c, carrier: .tls, observed: nil, summary: "\(label): TLS")
        }
        if up.starts(with: Array("GET ".utf8)) {
            if case .some(.some(let req)) = HTTPUpgrade.parseRequest(up), req.isWebSocket {
                let o = webSocketConnection(c, label: "\(label) ws \(req.target)", request: req)
                return Classified(connection: c, carrier: .webSocket, observed: o, summary: "\(label): WebSocket \(req.target)")
            }
            return Classified(connection: c, carrier: .other("HTTP"), observed: nil, summary: "\(label): HTTP (not a WebSocket upgrade)")
        }
        for obf in [false, true] {
            var d = StreamDecoder(direction: .clientToServer, obfuscated: obf)
            if let frames = try? d.feed(up), case .connect(let k)? = frames.first, k.protocolName == Frame.Connect.rcloudProtocolName {
                var o = streamConnection(c, label: label)
                o.clientId = k.clientId
                o.token = k.token
                o.appKey = k.appKey
                o.keepAlive = k.keepAlive
                var s = StreamDecoder(direction: .serverToClient, obfuscated: obf)
                if let fs = try? s.feed(Array(c.bytes(.serverToClient).prefix(4096))), case .connack(let a)? = fs.first {
                    o.userId = a.session?.userId
                }
                return Classified(connection: c, carrier: .rmtpStream(obfuscated: obf), observed: o,
                                  summary: "\(label): RMTP\(obf ? " (obfuscated)" : "") CONNECT \(k.clientId)")
            }
        }
        let what = up.isEmpty ? "no client bytes" : "unrecognised (first bytes \(Hex.encode(up.prefix(8))))"
        return Classified(connection: c, carrier: .other(what), observed: nil, summary: "\(label): \(what)")
    }

    private static func ms(_ micros: Int64) -> Int64 { micros >= 0 ? micros / 1000 : (micros - 999) / 1000 }

    /// Transport events of a connection (data handled by the caller).
    private func transport(_ e: ConnectionEvent, _ c: TCPConnection, opened: inout Bool, closed: inout Bool) -> ObservedEvent? {
        let t = Self.ms(e.micros)
        switch e {
        case .syn: return .connect(t: t)
        case .synAck:
            opened = true
            return .opened(t: t)
        case .fin(let d, _, _), .rst(let d, _, _):
            guard !closed else { return nil }
            closed = true
            var isReset = false
            if case .rst = e { isReset = true }
            if d == .serverToClient, !opened, isReset { return .refused(t: t) }
            return d == .clientToServer ? .clientClosed(t: t) : .serverClosed(t: t, reset: isReset)
        case .data: return nil
        }
    }

    private func streamConnection(_ c: TCPConnection, label: String) -> ObservedConnection {
        var o = ObservedConnection(label: label)
        var opened = false, closed = false
        for e in c.events {
            if case .data(let d, let m, _, let b) = e {
                o.events.append(d == .clientToServer ? .out(t: Self.ms(m), bytes: b) : .in(t: Self.ms(m), bytes: b))
            } else if let x = transport(e, c, opened: &opened, closed: &closed) {
                o.events.append(x)
            }
        }
        return o
    }

    private func webSocketConnection(_ c: TCPConnection, label: String, request: HTTPUpgrade) -> ObservedConnection? {
        var o = ObservedConnection(label: label)
        for (k, v) in request.query {
            switch k {
            case "token": o.token = v
            case "appId", "appKey": o.appKey = v
            case "deviceId", "clientId": o.clientId = v
            default: break
            }
        }
        var opened = false, closed = false
        var upSkip = request.length, downHeader: [UInt8] = [], downDone = false
        var up = WebSocketDecoder(fromClient: true), down = WebSocketDecoder(fromClient: false)
        var failed = false
        for e in c.events {
            if case .data(let d, let m, _, var b) = e {
                let t = Self.ms(m)
                if failed { continue }
                if d == .clientToServer {
                    let skip = min(upSkip, b.count)
                    upSkip -= skip
                    b.removeFirst(skip)
                } else if !downDone {
                    downHeader += b
                    guard let end = HTTPUpgrade.findCRLFCRLF(downHeader, limit: min(downHeader.count, 65536)) else { continue }
                    downDone = true
                    b = Array(downHeader[(end + 4)...])
                    o.events.append(.opened(t: t))
                }
                if b.isEmpty { continue }
                do {
                    let msgs = try (d == .clientToServer ? up.feed(b) : down.feed(b))
                    for msg in msgs where msg.opcode == 2 {
                        if d == .clientToServer, o.clientId == nil, let f = try? MessageFraming.decode(msg.payload, direction: .clientToServer),
                           case .connect(let k) = f {
                            o.clientId = k.clientId
                            o.token = o.token ?? k.token
                            o.appKey = o.appKey ?? k.appKey
                            o.keepAlive = k.keepAlive
                        }
                        if d == .serverToClient, o.userId == nil, let f = try? MessageFraming.decode(msg.payload, direction: .serverToClient),
                           case .connack(let a) = f {
                            o.userId = a.session?.userId
                        }
                        o.events.append(d == .clientToServer ? .out(t: t, bytes: msg.payload) : .in(t: t, bytes: msg.payload))
                    }
                } catch {
                    failed = true
                    o.events.append(d == .clientToServer ? .clientClosed(t: t) : .serverClosed(t: t, reset: false))
                }
            } else if let x = transport(e, c, opened: &opened, closed: &closed) {
                if case .opened = x { continue }   // a WebSocket is open when the upgrade is answered
                o.events.append(x)
            }
        }
        return o.clientId == nil ? nil : o
    }
}
