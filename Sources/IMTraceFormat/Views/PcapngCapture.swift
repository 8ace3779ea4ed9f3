import IMWire

/// A pcapng capture written as traffic happens (the real runtime's `imsim serve --pcap`): the
/// same blocks and TCP synthesis as `TraceExportPcapng`, fed with the bytes one side of real
/// connections read and wrote, at the caller's timestamps. Written to `PATH.partial`, renamed
/// over `PATH` by `finish()` (never a half-written capture under the final name).
/// Not thread-safe: one owner (the server's event loop) calls it.
public final class PcapngCapture {
    public struct Endpoint: Sendable, Hashable {
        public var address: [UInt8]
        public var port: UInt16
        public init(address: [UInt8], port: UInt16) {
            self.address = address.count == 4 ? address : [127, 0, 0, 1]
            self.port = port
        }
    }

    struct Conn {
        var client: Endpoint
        var server: Endpoint
        var clientSeq: UInt32
        var serverSeq: UInt32
    }

    private let out: TextOutput
    private var writer: PcapngWriter
    private var conns: [ConnectionID: Conn] = [:]
    public private(set) var packets = 0

    public init(path: String, comment: String) throws(TraceViewError) {
        out = try TextOutput(path: path)
        writer = PcapngWriter(out: out, epochNs: 0)
        writer.header(comment: comment)
    }

    /// The handshake of an accepted connection (`ns`: epoch nanoseconds).
    public func opened(_ id: ConnectionID, client: Endpoint, server: Endpoint, ns: Int64) {
        let c = Conn(client: client, server: server, clientSeq: TraceExportPcapng.isn(id, toServer: true),
                     serverSeq: TraceExportPcapng.isn(id, toServer: false))
        conns[id] = c
        emit(c, toServer: true, flags: 0x02, ns: ns)
        emit(c, toServer: false, flags: 0x12, ns: ns)
        conns[id]!.clientSeq &+= 1
        conns[id]!.serverSeq &+= 1
        emit(conns[id]!, toServer: true, flags: 0x10, ns: ns)
    }

    /// Bytes read from (`toServer`) or written to the client.
    public func data(_ id: ConnectionID, toServer: Bool, _ bytes: [UInt8], ns: Int64) {
        guard conns[id] != nil, !bytes.isEmpty else { return }
        var from = 0
        while from < bytes.count {
            let to = min(from + TraceExportPcapng.maxSegment, bytes.count)
            emit(conns[id]!, toServer: toServer, flags: 0x18, payload: bytes[from..<to], ns: ns)
            if toServer { conns[id]!.clientSeq &+= UInt32(to - from) } else { conns[id]!.serverSeq &+= UInt32(to - from) }
            from = to
        }
    }

    /// The connection ended: a FIN from the side that closed, or an RST.
    public func closed(_ id: ConnectionID, byServer: Bool, reset: Bool, ns: Int64) {
        guard let c = conns.removeValue(forKey: id) else { return }
        emit(c, toServer: !byServer, flags: reset ? 0x04 : 0x11, ns: ns)
    }

    /// Writes the rest and renames the file into place.
    public func finish() throws(TraceViewError) {
        try out.commit()
    }

    /// Drops the capture (nothing appears under the final name).
    public func abandon() { out.abandon() }

    private func emit(_ c: Conn, toServer: Bool, flags: UInt8, payload: ArraySlice<UInt8> = [], ns: Int64) {
        let src = toServer ? c.client : c.server, dst = toServer ? c.server : c.client
        writer.packet(src: src.address, dst: dst.address, srcPort: src.port, dstPort: dst.port, flags: flags,
                      seq: toServer ? c.clientSeq : c.serverSeq, ack: toServer ? c.serverSeq : c.clientSeq,
                      payload: payload, ns: ns, comment: nil)
        packets += 1
    }
}
