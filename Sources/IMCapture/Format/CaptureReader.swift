import IMZstd
import IMClient
import IMWire

/// Reads a capture (`.jsonl` or zstd-compressed `.jsonl.zst`, detected by the zstd magic) one
/// record at a time with bounded memory, and checks everything that spans lines: the header
/// comes first, `t` never goes back (except by a declared `clock` step), connections are used in
/// order, and every frame byte decodes with the header's framing (a stream decoder per direction
/// of the current connection). Every problem is a `CaptureError` naming the line.
public final class CaptureReader {
    public static let defaultMaxLineLength = 4 * 1024 * 1024

    public let header: CaptureHeader
    /// Where the capture came from (a path, or `<memory>`).
    public let origin: String
    private let lines: LineReader
    private var lastT: Int64?
    private var currentConn: Int?
    private var highestConn = 0
    private var inDecoder: StreamDecoder?
    private var outDecoder: StreamDecoder?
    /// Records read so far.
    public private(set) var recordCount = 0
    /// Bytes of (decompressed) text read so far.
    public var bytesRead: Int { lines.bytesRead }

    public convenience init(path: String, maxLineLength: Int = CaptureReader.defaultMaxLineLength) throws(CaptureError) {
        try self.init(source: try FileSource(path: path), origin: path, maxLineLength: maxLineLength)
    }

    public convenience init(bytes: [UInt8], maxLineLength: Int = CaptureReader.defaultMaxLineLength) throws(CaptureError) {
        try self.init(source: MemorySource(bytes), origin: "<memory>", maxLineLength: maxLineLength)
    }

    init(source: ByteSource, origin: String, maxLineLength: Int) throws(CaptureError) {
        self.origin = origin
        var prefix: [UInt8] = []
        while prefix.count < 4, try source.read(into: &prefix, max: 4 - prefix.count) > 0 {}
        let src: ByteSource = prefix == zstdMagic
            ? try ZstdDecompressingSource(source, prefix: prefix)
            : PrefixedSource(prefix: prefix, source)
        lines = LineReader(source: src, maxLineLength: maxLineLength)
        guard let first = try lines.next() else { throw CaptureError(.badHeader, line: 1, "empty capture (no header line)") }
        let value: JSONValue
        do { value = try JSONValue.parse(first) } catch {
            throw CaptureError(.badHeader, line: 1, "the header line is not JSON: \(error)")
        }
        header = try CaptureHeader(json: value, line: 1)
    }

    /// The next record, checked; nil at the end of the capture.
    public func next() throws(CaptureError) -> CaptureRecord? {
        guard tornTail == nil, let bytes = try lines.next() else {
            if lines.sourceTruncated && tornTail == nil {
                tornTail = CaptureError(.zstd, line: lines.lineNumber + 1, "the compressed stream ends mid-frame (a torn tail)")
            }
            return nil
        }
        let line = lines.lineNumber
        do {
            let record = try decodeLine(bytes, line: line)
            recordCount += 1
            return record
        } catch {
            // The last line, without its newline, that does not decode: the writer was killed
            // mid-line. The complete lines before it stand; the caller warns (`tornTail`).
            guard lines.lastLineUnterminated else { throw error }
            tornTail = lines.sourceTruncated
                ? CaptureError(.zstd, line: line, "the compressed stream ends mid-frame, inside this line (\(error.message))")
                : error
            return nil
        }
    }

    /// Set when the capture ends in a torn line (no newline, does not decode) or a compressed
    /// stream cut mid-frame: what was wrong with it. The records before it were returned.
    public private(set) var tornTail: CaptureError?

    private func decodeLine(_ bytes: [UInt8], line: Int) throws(CaptureError) -> CaptureRecord {
        let record = try Self.decodeRecord(bytes, line: line)
        try check(record)
        return record
    }

    /// One record line, on its own (no checks across lines): the typed fast path for the common
    /// lines, the general path for every other line and for every error.
    package static func decodeRecord(_ bytes: [UInt8], line: Int) throws(CaptureError) -> CaptureRecord {
        if let r = CaptureLineFastDecoder.decode(bytes, line: line) { return r }
        return try decodeRecordGeneral(bytes, line: line)
    }

    /// The general path: a `JSONValue` tree read field by field (what `decodeRecord` must agree
    /// with; tests decode lines both ways).
    package static func decodeRecordGeneral(_ bytes: [UInt8], line: Int) throws(CaptureError) -> CaptureRecord {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { throw CaptureError(.emptyLine, line: line, "empty line") }
        let value: JSONValue
        do { value = try JSONValue.parse(bytes) } catch {
            throw CaptureError(.badJSON, line: line, "not a JSON object: \(error)")
        }
        return try CaptureLineCodec.decode(value, line: line)
    }

    /// The typed fast path alone: nil for a line it leaves to the general path.
    package static func decodeRecordFast(_ bytes: [UInt8], line: Int) -> CaptureRecord? {
        CaptureLineFastDecoder.decode(bytes, line: line)
    }

    /// Reads every remaining record (for captures that fit in memory: tests, lift).
    public func readAll() throws(CaptureError) -> [CaptureRecord] {
        var out: [CaptureRecord] = []
        while let r = try next() { out.append(r) }
        return out
    }

    // MARK: - Checks across lines

    private func check(_ r: CaptureRecord) throws(CaptureError) {
        if let last = lastT {
            let floor: Int64
            if case .clock(let step) = r.event { floor = last + min(0, step) } else { floor = last }
            if r.t < floor {
                throw CaptureError(.timeBackwards, line: r.line, field: "t",
                                   "time goes backwards: t=\(r.t) after t=\(last)" +
                                   (floor < last ? " (the clock step allows down to \(floor))" : " (a wall-clock step needs a \"clock\" record)"))
            }
        }
        lastT = r.t
        switch r.event {
        case .open(let c):
            guard c > highestConn else {
                throw CaptureError(.badConnection, line: r.line, field: "conn", "connection \(c) opened after connection \(highestConn): ids must increase")
            }
            highestConn = c
            currentConn = c
            let h = header
            inDecoder = StreamDecoder(direction: .serverToClient, maxFrameSize: h.config.maxFrameSize, obfuscated: h.config.obfuscatedStream)
            outDecoder = StreamDecoder(direction: .clientToServer, maxFrameSize: h.config.maxFrameSize, obfuscated: h.config.obfuscatedStream)
        case .opened(let c):
            try expectCurrent(c, r)
        case .bytesIn(let c, let b):
            try expectCurrent(c, r)
            try decode(b, inbound: true, r)
        case .bytesOut(let c, let b):
            try expectCurrent(c, r)
            try decode(b, inbound: false, r)
        case .closed(let c, _), .close(let c):
            try expectCurrent(c, r)
            currentConn = nil
        case .app(.kill):
            currentConn = nil
        default:
            break
        }
    }

    private func expectCurrent(_ c: Int, _ r: CaptureRecord) throws(CaptureError) {
        guard currentConn == c else {
            throw CaptureError(.badConnection, line: r.line, field: "conn",
                               currentConn.map { "\"\(r.event.kind)\" on connection \(c), but the current connection is \($0)" }
                               ?? "\"\(r.event.kind)\" on connection \(c), but no connection is open (missing \"open\" record?)")
        }
    }

    private func decode(_ bytes: [UInt8], inbound: Bool, _ r: CaptureRecord) throws(CaptureError) {
        let field: String? = nil
        switch header.framing {
        case .message:
            do { _ = try MessageFraming.decode(bytes, direction: inbound ? .serverToClient : .clientToServer) } catch {
                throw CaptureError(.frameDecode, line: r.line, field: field, "frame does not decode: \(error)")
            }
        case .stream:
            do {
                if inbound { _ = try inDecoder!.feed(bytes) } else { _ = try outDecoder!.feed(bytes) }
            } catch {
                let total = inbound ? inDecoder!.consumedByteCount : outDecoder!.consumedByteCount
                throw CaptureError(.frameDecode, line: r.line, field: field,
                                   "\(inbound ? "inbound" : "outbound") stream of connection \(currentConn ?? 0) does not decode: \(error)" +
                                   " (offsets count from the connection's first \(inbound ? "inbound" : "outbound") byte; \(total) decoded before)")
            }
        }
    }
}

/// Bytes already read (the magic sniff), then the rest of a source.
final class PrefixedSource: ByteSource {
    private var prefix: [UInt8]
    private let source: ByteSource
    init(prefix: [UInt8], _ source: ByteSource) {
        self.prefix = prefix
        self.source = source
    }
    func read(into buffer: inout [UInt8], max: Int) throws(CaptureError) -> Int {
        if !prefix.isEmpty {
            let n = min(max, prefix.count)
            buffer.append(contentsOf: prefix[0..<n])
            prefix.removeFirst(n)
            return n
        }
        return try source.read(into: &buffer, max: max)
    }
}
