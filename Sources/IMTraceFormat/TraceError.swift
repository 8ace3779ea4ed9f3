import IMWire

/// Every way reading or writing a trace can fail, each naming the place (block number, byte
/// offset in the file, offset inside the block's uncompressed payload) so a damaged file can be
/// inspected with `xxd -s OFFSET`.
public enum TraceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call failed.
    case io(path: String, operation: String, errno: Int32)
    /// The file does not start with the IMTrace magic bytes: not a trace at all.
    case notATrace(found: [UInt8])
    /// A major version this reader does not know.
    case unsupportedVersion(major: UInt16, minor: UInt16)
    /// The file ends inside the header.
    case truncatedHeader(needed: Int, fileSize: Int)
    /// The header is damaged (checksum) or malformed (field at `offset`).
    case badHeader(offset: Int, reason: String)
    /// A block header failed its checksum or sanity checks. `block` is nil when the number is unknown.
    case badBlockHeader(block: Int?, offset: Int, reason: String)
    /// The file ends inside a block (the usual tail of a killed run).
    case truncatedBlock(block: Int?, offset: Int, needed: Int, available: Int)
    /// The uncompressed payload does not match the block's CRC-32C.
    case checksumMismatch(block: Int, offset: Int, expected: UInt32, actual: UInt32)
    /// zstd rejected the block's frame.
    case zstd(block: Int, offset: Int, message: String)
    /// The payload passed its checksum but its records are inconsistent (a writer bug).
    case malformedBlock(block: Int, offset: Int, payloadOffset: Int, reason: String)
    /// The footer's index and the block header disagree.
    case indexMismatch(block: Int, offset: Int, reason: String)
    /// No trailer at the end of the file: the writer did not finish (or the trailer is damaged).
    case missingFooter(fileSize: Int)
    /// The trailer or footer is damaged or inconsistent.
    case badFooter(offset: Int, reason: String)
    /// Salvage: bytes between blocks that are no block (damaged block header, garbage).
    case unreadableBytes(offset: Int, length: Int)
    /// Writer: options out of range.
    case invalidOptions(String)
    /// Writer: a header value that cannot be written (duplicate option key, …).
    case invalidHeader(String)
    /// A view was asked for a device the trace does not have (`known`: its device count and
    /// the first few ids, for the message).
    case unknownDevice(String, deviceCount: Int, examples: [String])
    /// Writer: a record (body plus its string definitions) larger than the format allows.
    case recordTooLarge(bytes: Int, limit: Int)
    /// Writer: `append`/`flush` after `finish`, or after an earlier I/O error.
    case writerClosed
    /// A record body could not be decoded.
    case record(RecordDecodeError)

    public var description: String {
        switch self {
        case let .io(path, op, e): "I/O error: \(op) \(path): errno \(e)"
        case let .notATrace(found): "not an IMTrace file (first bytes \(hex(found)))"
        case let .unsupportedVersion(major, minor):
            "unsupported trace format version \(major).\(minor) (this reader reads \(TraceFormat.readableMajorVersions.map { "\($0).x" }.joined(separator: " and ")))"
        case let .truncatedHeader(needed, size): "truncated header: needs \(needed) bytes, file has \(size)"
        case let .badHeader(offset, reason): "bad header at offset \(offset): \(reason)"
        case let .badBlockHeader(block, offset, reason): "bad block header\(blockText(block)) at offset \(offset): \(reason)"
        case let .truncatedBlock(block, offset, needed, available):
            "truncated block\(blockText(block)) at offset \(offset): needs \(needed) bytes, \(available) available"
        case let .checksumMismatch(block, offset, expected, actual):
            "checksum mismatch in block \(block) at offset \(offset): expected \(hex32(expected)), computed \(hex32(actual))"
        case let .zstd(block, offset, message): "zstd error in block \(block) at offset \(offset): \(message)"
        case let .malformedBlock(block, offset, payloadOffset, reason):
            "malformed block \(block) at offset \(offset), payload byte \(payloadOffset): \(reason)"
        case let .indexMismatch(block, offset, reason): "index does not match block \(block) at offset \(offset): \(reason)"
        case let .missingFooter(size):
            "no footer: the trace is incomplete (writer killed before finish?) or its trailer is damaged; file size \(size); read it with salvage"
        case let .badFooter(offset, reason): "bad footer at offset \(offset): \(reason)"
        case let .unreadableBytes(offset, length): "\(length) unreadable bytes at offset \(offset)"
        case let .invalidOptions(r): "invalid trace writer options: \(r)"
        case let .invalidHeader(r): "invalid trace header: \(r)"
        case let .unknownDevice(name, count, examples):
            "no device \"\(name)\" in this trace (\(count) devices: \(examples.joined(separator: ", "))\(count > examples.count ? ", …" : "")"
                + (count > 0 ? "; or an index d0…d\(count - 1))" : ")")
        case let .recordTooLarge(bytes, limit): "record of \(bytes) bytes exceeds the limit of \(limit)"
        case .writerClosed: "trace writer is closed (finished or failed)"
        case let .record(e): e.description
        }
    }

    private func blockText(_ b: Int?) -> String { b.map { " \($0)" } ?? "" }
    private func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes, separator: " ") }
    private func hex32(_ v: UInt32) -> String {
        let s = String(v, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - s.count) + s
    }
}

/// A record body that does not decode as the caller expects.
public struct RecordDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The body ends inside a field that needs `needed` more bytes.
        case truncated(needed: Int)
        /// A varint that does not end within the body.
        case truncatedVarint
        /// A varint longer than 10 bytes or with bits beyond 64.
        case overlongVarint
        /// A string reference to an id not defined in this record's block.
        case badStringID(UInt64)
        /// A bool byte other than 0 or 1.
        case invalidBool(UInt8)
        /// A non-interned string field whose bytes are not UTF-8.
        case invalidUTF8
        /// A value that does not fit the requested type.
        case outOfRange(value: UInt64, max: UInt64)
        /// `expectEnd()` found unread bytes.
        case trailingBytes(Int)
        /// A field whose value the schema does not allow (an unknown enum value, a count larger
        /// than the body).
        case invalidValue(field: String, value: String)
    }

    /// Trace-wide index of the record.
    public var record: UInt64
    /// Byte offset inside the record body.
    public var offset: Int
    public var reason: Reason

    public init(record: UInt64, offset: Int, reason: Reason) {
        self.record = record
        self.offset = offset
        self.reason = reason
    }

    public var description: String {
        let what: String = switch reason {
        case let .truncated(n): "body ends inside a field (needs \(n) more bytes)"
        case .truncatedVarint: "truncated varint"
        case .overlongVarint: "overlong varint"
        case let .badStringID(id): "string id \(id) is not defined in this block"
        case let .invalidBool(b): "invalid bool byte \(b)"
        case .invalidUTF8: "string is not valid UTF-8"
        case let .outOfRange(v, max): "value \(v) out of range (max \(max))"
        case let .trailingBytes(n): "\(n) unread bytes at the end of the body"
        case let .invalidValue(field, value): "invalid \(field) \(value)"
        }
        return "record \(record), body byte \(offset): \(what)"
    }
}
