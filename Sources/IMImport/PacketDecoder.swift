/// An IP address and port, printed as `1.2.3.4:80` or `[::1]:80`.
public struct Endpoint: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6).
    public var address: [UInt8]
    public var port: UInt16

    public init(address: [UInt8], port: UInt16) {
        self.address = address
        self.port = port
    }

    public var host: String {
        if address.count == 4 { return address.map(String.init).joined(separator: ".") }
        var groups: [String] = []
        for i in stride(from: 0, to: address.count, by: 2) {
            groups.append(String(UInt16(address[i]) << 8 | UInt16(address[i + 1]), radix: 16))
        }
        return groups.joined(separator: ":")
    }

    public var description: String { address.count == 4 ? "\(host):\(port)" : "[\(host)]:\(port)" }

    public static func < (a: Self, b: Self) -> Bool {
        a.address.lexicographicallyPrecedes(b.address) || (a.address == b.address && a.port < b.port)
    }

    /// Parses `HOST:PORT` (`127.0.0.1:9100`, `[::1]:9100`, `localhost:9100`) or a bare port (`:9100`, `9100`).
    /// A nil address matches any host.
    public static func parseFilter(_ text: String) -> (address: [UInt8]?, port: UInt16)? {
        var hostPart = "", portPart = text
        if let i = text.lastIndex(of: ":") {
            hostPart = String(text[..<i])
            portPart = String(text[text.index(after: i)...])
        }
        guard let port = UInt16(portPart) else { return nil }
        if hostPart.hasPrefix("["), hostPart.hasSuffix("]") { hostPart = String(hostPart.dropFirst().dropLast()) }
        if hostPart.isEmpty || hostPart == "*" { return (nil, port) }
        if hostPart == "localhost" { return ([127, 0, 0, 1], port) }
        let parts = hostPart.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, let bytes = Optional(parts.compactMap { UInt8($0) }), bytes.count == 4 { return (bytes, port) }
        if let v6 = parseIPv6(hostPart) { return (v6, port) }
        return nil
    }

    static func parseIPv6(_ s: String) -> [UInt8]? {
        let halves = s.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ t: String) -> [UInt16]? {
            if t.isEmpty { return [] }
            var out: [UInt16] = []
            for g in t.split(separator: ":", omittingEmptySubsequences: false) {
                guard let v = UInt16(g, radix: 16) else { return nil }
                out.append(v)
            }
            return out
        }
        guard let head = groups(halves[0]) else { return nil }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count < 8 else { return nil }
            all += [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard all.count == 8 else { return nil }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}

/// A TCP segment decoded from a packet.
public struct TCPSegment: Sendable {
    public var source: Endpoint
    public var destination: Endpoint
    public var seq: UInt32
    public var ack: UInt32
    public var flags: UInt8
    /// The payload bytes the capture holds.
    public var payload: ArraySlice<UInt8>
    /// Payload length on the wire (from the IP length); more than `payload.count` when the
    /// snapshot length cut the packet.
    public var payloadLength: Int

    public var syn: Bool { flags & 0x02 != 0 }
    public var fin: Bool { flags & 0x01 != 0 }
    public var rst: Bool { flags & 0x04 != 0 }
    public var ackFlag: Bool { flags & 0x10 != 0 }
}

/// What a packet turned out to be.
public enum DecodedPacket: Sendable {
    case tcp(TCPSegment)
    /// Not TCP over IP (ARP, UDP, ICMP, …): ignored, counted.
    case other(String)
    /// An IP fragment (not reassembled: the importer says so).
    case fragment
    /// The packet is shorter than its headers: what is missing.
    case cut(String)
}

/// Link layer → IPv4/IPv6 → TCP. Bounds-checked everywhere; never trusts a length field
/// beyond the captured bytes.
public enum PacketDecoder {
    /// Link types decoded (DLT values as libpcap reports them).
    public static let supportedLinkTypes: [Int32: String] = [
        0: "NULL (BSD loopback)", 1: "EN10MB (Ethernet)", 12: "RAW (IP)", 14: "RAW (IP, OpenBSD)", 101: "RAW (IP)",
        108: "LOOP (OpenBSD loopback)", 113: "LINUX_SLL (Linux cooked)", 228: "IPV4", 229: "IPV6", 276: "LINUX_SLL2 (Linux cooked v2)",
    ]

    public static func decode(_ p: [UInt8], linkType: Int32) -> DecodedPacket {
        switch linkType {
        case 0, 108:
            guard p.count >= 4 else { return .cut("the 4-byte loopback header") }
            // DLT_NULL: host byte order; LOOP: network order. Families 2 (IPv4), 24/28/30 (IPv6).
            let le = UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24
            let be = UInt32(p[3]) | UInt32(p[2]) << 8 | UInt32(p[1]) << 16 | UInt32(p[0]) << 24
            let family = linkType == 108 ? be : (le < 256 ? le : be)
            switch family {
            case 2: return ip(p, at: 4, version: 4)
            case 24, 28, 30: return ip(p, at: 4, version: 6)
            default: return .other("loopback family \(family)")
            }
        case 1:
            var off = 12
            guard p.count >= 14 else { return .cut("the 14-byte Ethernet header") }
            var type = UInt16(p[off]) << 8 | UInt16(p[off + 1])
            while type == 0x8100 || type == 0x88A8 {   // VLAN tags
                off += 4
                guard p.count >= off + 2 else { return .cut("a VLAN tag") }
                type = UInt16(p[off]) << 8 | UInt16(p[off + 1])
            }
            return ethertype(type, p, at: off + 2)
        case 12, 14, 101: return ip(p, at: 0, version: nil)
        case 228: return ip(p, at: 0, version: 4)
        case 229: return ip(p, at: 0, version: 6)
        case 113:
            guard p.count >= 16 else { return .cut("the 16-byte Linux cooked header") }
            return ethertype(UInt16(p[14]) << 8 | UInt16(p[15]), p, at: 16)
        case 276:
            guard p.count >= 20 else { return .cut("the 20-byte Linux cooked v2 header") }
            return ethertype(UInt16(p[0]) << 8 | UInt16(p[1]), p, at: 20)
        default:
            return .other("link type \(linkType)")
        }
    }

    private static func ethertype(_ type: UInt16, _ p: [UInt8], at off: Int) -> DecodedPacket {
        switch type {
        case 0x0800: ip(p, at: off, version: 4)
        case 0x86DD: ip(p, at: off, version: 6)
        default: .other("ethertype 0x\(String(type, radix: 16))")
        }
    }

    private static func ip(_ p: [UInt8], at off: Int, version: Int?) -> DecodedPacket {
        guard p.count > off else { return .cut("the IP header") }
        let v = Int(p[off] >> 4)
        if let version, v != version { return .other("IP version \(v) where \(version) was announced") }
        if v == 4 {
            guard p.count >= off + 20 else { return .cut("the 20-byte IPv4 header") }
            let ihl = Int(p[off] & 0x0F) * 4
            guard ihl >= 20 else { return .other("IPv4 header length \(ihl)") }
            guard p.count >= off + ihl else { return .cut("IPv4 options") }
            let total = Int(p[off + 2]) << 8 | Int(p[off + 3])
            let fragment = (Int(p[off + 6]) << 8 | Int(p[off + 7]))
            if fragment & 0x3FFF != 0 { return .fragment }   // more-fragments or an offset
            guard p[off + 9] == 6 else { return .other("IP protocol \(p[off + 9])") }
            // A total length of 0 happens with TSO captures: trust the captured length then.
            let ipEnd = total >= ihl ? off + total : p.count
            let src = Array(p[(off + 12)..<(off + 16)]), dst = Array(p[(off + 16)..<(off + 20)])
            return tcp(p, at: off + ihl, ipEnd: ipEnd, src, dst)
        } else if v == 6 {
            guard p.count >= off + 40 else { return .cut("the 40-byte IPv6 header") }
            let payloadLength = Int(p[off + 4]) << 8 | Int(p[off + 5])
            var next = p[off + 6]
            var h = off + 40
            let ipEnd = payloadLength > 0 ? off + 40 + payloadLength : p.count
            // Skip the extension headers that may precede TCP.
            var hops = 0
            while next == 0 || next == 43 || next == 60 || next == 44 {
                if next == 44 { return .fragment }
                guard p.count >= h + 8, hops < 8 else { return .cut("an IPv6 extension header") }
                next = p[h]
                h += (Int(p[h + 1]) + 1) * 8
                hops += 1
            }
            guard next == 6 else { return .other("IPv6 next header \(next)") }
            let src = Array(p[(off + 8)..<(off + 24)]), dst = Array(p[(off + 24)..<(off + 40)])
            return tcp(p, at: h, ipEnd: ipEnd, src, dst)
        }
        return .other("IP version \(v)")
    }

    private static func tcp(_ p: [UInt8], at off: Int, ipEnd: Int, _ src: [UInt8], _ dst: [UInt8]) -> DecodedPacket {
        guard p.count >= off + 20 else { return .cut("the 20-byte TCP header") }
        func u16(_ i: Int) -> UInt16 { UInt16(p[i]) << 8 | UInt16(p[i + 1]) }
        func u32(_ i: Int) -> UInt32 { UInt32(u16(i)) << 16 | UInt32(u16(i + 2)) }
        let dataOffset = Int(p[off + 12] >> 4) * 4
        guard dataOffset >= 20 else { return .other("TCP header length \(dataOffset)") }
        guard p.count >= off + dataOffset else { return .cut("TCP options") }
        let start = off + dataOffset
        let wireLength = max(0, ipEnd - start)
        let end = min(p.count, max(start, ipEnd))
        return .tcp(TCPSegment(source: Endpoint(address: src, port: u16(off)), destination: Endpoint(address: dst, port: u16(off + 2)),
                               seq: u32(off + 4), ack: u32(off + 8), flags: p[off + 13], payload: p[start..<end],
                               payloadLength: wireLength))
    }
}
