import CPcap
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One packet as libpcap hands it over: time, the captured bytes and the length on the wire
/// (larger when the snapshot length cut the packet).
public struct PcapPacket: Sendable {
    /// 1-based position in the file.
    public var number: Int
    /// Capture time in microseconds since the epoch.
    public var micros: Int64
    /// Length of the packet on the wire.
    public var wireLength: Int
    public var data: [UInt8]
}

/// Reads pcap and pcapng files with libpcap (`pcap_open_offline` understands both, in either
/// byte order, with micro- or nanosecond stamps; we ask for microseconds).
public final class PcapReader {
    private var handle: OpaquePointer?
    private var memoryFile: UnsafeMutablePointer<FILE>?
    private var memoryBuffer: UnsafeMutableRawPointer?
    /// The link-layer type (`DLT_*`) of every packet.
    public let linkType: Int32
    public let snapLength: Int32
    public private(set) var packetCount = 0

    /// Opens a capture file.
    public init(path: String) throws(ImportError) {
        var err = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard let h = pcap_open_offline_with_tstamp_precision(path, UInt32(PCAP_TSTAMP_PRECISION_MICRO), &err) else {
            throw Self.openError(String(cString: err), path)
        }
        handle = h
        linkType = pcap_datalink(h)
        snapLength = pcap_snapshot(h)
    }

    /// Opens a capture held in memory (the fuzzer; tests).
    public init(bytes: [UInt8]) throws(ImportError) {
        guard !bytes.isEmpty else { throw ImportError(.badFile, "empty input: not a pcap or pcapng file") }
        let buf = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 8)
        bytes.withUnsafeBytes { buf.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        guard let f = fmemopen(buf, bytes.count, "rb") else {
            buf.deallocate()
            throw ImportError(.io, "fmemopen failed")
        }
        var err = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard let h = pcap_fopen_offline_with_tstamp_precision(f, UInt32(PCAP_TSTAMP_PRECISION_MICRO), &err) else {
            fclose(f)
            buf.deallocate()
            throw Self.openError(String(cString: err), "(memory)")
        }
        handle = h
        memoryBuffer = buf
        linkType = pcap_datalink(h)
        snapLength = pcap_snapshot(h)
    }

    deinit {
        if let handle { pcap_close(handle) }   // closes the FILE too
        memoryBuffer?.deallocate()
    }

    private static func openError(_ text: String, _ path: String) -> ImportError {
        let lower = text.lowercased()
        if lower.contains("no such file") || lower.contains("permission") {
            return ImportError(.io, "\(path): \(text)")
        }
        if lower.contains("truncated") { return ImportError(.truncatedFile, "\(path): \(text)") }
        if lower.contains("link-layer") || lower.contains("linktype") || lower.contains("link type") {
            return ImportError(.unknownLinkType, "\(path): \(text)")
        }
        return ImportError(.badFile, "\(path): not a readable pcap or pcapng file: \(text)")
    }

    /// The next packet, nil at the end. A file cut inside a packet throws `truncatedFile`
    /// naming the packet (the packets before it were returned).
    public func next() throws(ImportError) -> PcapPacket? {
        guard let h = handle else { return nil }
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        let rc = pcap_next_ex(h, &header, &data)
        switch rc {
        case 1:
            packetCount += 1
            let hdr = header!.pointee
            let caplen = Int(hdr.caplen)
            let bytes = caplen > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: caplen)) : []
            // pcapng stamps are 64-bit: a damaged one can exceed what microseconds since 1970 hold.
            let (secMicros, o1) = Int64(hdr.ts.tv_sec).multipliedReportingOverflow(by: 1_000_000)
            let (micros, o2) = secMicros.addingReportingOverflow(Int64(hdr.ts.tv_usec))
            guard !o1, !o2, micros >= 0, micros < 1 << 52 else {
                throw ImportError(.badFile, "packet \(packetCount): timestamp \(hdr.ts.tv_sec) s is out of range (a damaged file?)")
            }
            return PcapPacket(number: packetCount, micros: micros, wireLength: Int(hdr.len), data: bytes)
        case -2:
            return nil
        default:
            let text = String(cString: pcap_geterr(h))
            let kind: ImportError.Kind = text.lowercased().contains("truncated") ? .truncatedFile : .badFile
            throw ImportError(kind, "after packet \(packetCount): \(text)")
        }
    }
}
