import IMWire
import SimKernel

/// Reads one record's body field by field, mirroring `RecordEncoder`. Every read checks bounds
/// and throws a `RecordDecodeError` naming the record and the body offset.
public struct RecordDecoder {
    @usableFromInline let block: TraceBlock
    /// Body bounds inside `block.bytes`.
    @usableFromInline let start: Int
    @usableFromInline let end: Int
    @usableFromInline let recordTime: SimTime
    /// Trace-wide index of the record (for error messages).
    public let record: UInt64
    /// Absolute position in `block.bytes`.
    @usableFromInline var position: Int
    /// The block's record-schema state before this record (`RecordContext`); context fields
    /// read and update it. The caller carries it from record to record.
    public var context: RecordContext

    @inlinable init(block: TraceBlock, body: Range<Int>, recordTime: SimTime, record: UInt64, context: RecordContext) {
        self.context = context
        self.block = block
        start = body.lowerBound
        end = body.upperBound
        position = body.lowerBound
        self.recordTime = recordTime
        self.record = record
    }

    /// Current read position, relative to the start of the body.
    @inlinable public var offset: Int { position - start }

    /// Bytes not read yet.
    @inlinable public var remaining: Int { end - position }
    @inlinable public var isAtEnd: Bool { position == end }

    @inlinable func fail(_ at: Int, _ reason: RecordDecodeError.Reason) -> RecordDecodeError {
        RecordDecodeError(record: record, offset: at, reason: reason)
    }

    @inlinable @inline(__always) public mutating func uvarint() throws(RecordDecodeError) -> UInt64 {
        if position < end {
            let b = block.bytes[position]
            if b < 0x80 { position += 1; return UInt64(b) }
        }
        return try uvarintLong()
    }

    @inlinable @inline(never) mutating func uvarintLong() throws(RecordDecodeError) -> UInt64 {
        let at = offset
        var p = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard p < end else { throw fail(at, .truncatedVarint) }
            let b = block.bytes[p]
            p += 1
            if shift == 63 {
                guard b <= 1 else { throw fail(at, .overlongVarint) }
                result |= UInt64(b) << 63
                break
            }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { break }
            shift += 7
        }
        position = p
        return result
    }

    /// An unsigned varint that must fit in `UInt32` (ids, counts).
    @inlinable public mutating func uvarint32() throws(RecordDecodeError) -> UInt32 {
        let at = offset
        let v = try uvarint()
        guard v <= UInt64(UInt32.max) else { throw fail(at, .outOfRange(value: v, max: UInt64(UInt32.max))) }
        return UInt32(v)
    }

    /// An unsigned varint that must fit in `Int`.
    @inlinable public mutating func uvarintInt() throws(RecordDecodeError) -> Int {
        let at = offset
        let v = try uvarint()
        guard v <= UInt64(Int.max) else { throw fail(at, .outOfRange(value: v, max: UInt64(Int.max))) }
        return Int(v)
    }

    /// A zigzag signed varint.
    @inlinable public mutating func varint() throws(RecordDecodeError) -> Int64 { Varint.unzigzag(try uvarint()) }

    /// Advances over `n` bytes, returning where they start.
    @inlinable mutating func skip(_ n: Int) throws(RecordDecodeError) -> Int {
        guard remaining >= n else { throw fail(offset, .truncated(needed: n - remaining)) }
        defer { position += n }
        return position
    }

    @inlinable mutating func take(_ n: Int) throws(RecordDecodeError) -> ArraySlice<UInt8> {
        let s = try skip(n)
        return block.bytes[s..<(s + n)]
    }

    @inlinable public mutating func fixed64() throws(RecordDecodeError) -> UInt64 {
        let s = try skip(8)
        return block.bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: s, as: UInt64.self)) }
    }

    @inlinable public mutating func fixed32() throws(RecordDecodeError) -> UInt32 {
        let s = try skip(4)
        return block.bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: s, as: UInt32.self)) }
    }

    @inlinable public mutating func bool() throws(RecordDecodeError) -> Bool {
        let at = offset
        let b = block.bytes[try skip(1)]
        switch b {
        case 0: return false
        case 1: return true
        default: throw fail(at, .invalidBool(b))
        }
    }

    /// Length-prefixed bytes (a slice of the block; no copy).
    @inlinable public mutating func bytes() throws(RecordDecodeError) -> ArraySlice<UInt8> {
        let at = offset
        let n = try uvarint()
        guard n <= UInt64(remaining) else {
            let needed = Int(clamping: n) - remaining
            position = start + at
            throw fail(at, .truncated(needed: needed))
        }
        return try take(Int(n))
    }

    /// `count` raw bytes (written by `RecordEncoder.raw`).
    @inlinable public mutating func raw(count: Int) throws(RecordDecodeError) -> ArraySlice<UInt8> {
        precondition(count >= 0)
        return try take(count)
    }

    /// All bytes not read yet.
    @inlinable public mutating func rest() -> ArraySlice<UInt8> {
        let s = position
        position = end
        return block.bytes[s..<end]
    }

    /// Length-prefixed UTF-8 written by `RecordEncoder.utf8(_:)`, validated.
    @inlinable public mutating func utf8() throws(RecordDecodeError) -> String {
        let at = offset
        let b = try bytes()
        guard let s = b.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else { throw fail(at, .invalidUTF8) }
        return s
    }

    /// The id of an interned string (checked to be defined in this block).
    @inlinable public mutating func stringID() throws(RecordDecodeError) -> UInt32 {
        let at = offset
        let id = try uvarint()
        guard id <= UInt64(UInt32.max), block.strings[UInt32(id)] != nil else { throw fail(at, .badStringID(id)) }
        return UInt32(id)
    }

    /// An interned string written by `RecordEncoder.string(_:)`.
    @inlinable public mutating func string() throws(RecordDecodeError) -> String {
        let at = offset
        let id = try uvarint()
        guard id <= UInt64(UInt32.max), let s = block.strings[UInt32(id)] else { throw fail(at, .badStringID(id)) }
        return s
    }

    @inlinable mutating func timeCode() throws(RecordDecodeError) -> Int64 {
        let code = try uvarint()
        if code == TimeCode.escape { return Int64(bitPattern: try fixed64()) }
        return Varint.unzigzag(code >> 2) &* TimeCode.multiplier(code & 3)
    }

    @inlinable public mutating func duration() throws(RecordDecodeError) -> SimDuration {
        SimDuration(nanoseconds: try timeCode())
    }

    /// An absolute time written by `RecordEncoder.time(_:)`.
    @inlinable public mutating func time() throws(RecordDecodeError) -> SimTime {
        SimTime(nanoseconds: recordTime.nanoseconds &+ (try timeCode()))
    }

    // MARK: Context fields (format 2, `RecordContext`; plain varints in format 1)

    /// A device index written by `RecordEncoder.device(_:)`.
    @inlinable public mutating func device() throws(RecordDecodeError) -> Int {
        let at = offset
        let v = try uvarint()
        guard !context.legacy else {
            guard v <= UInt64(Int.max) else { throw fail(at, .outOfRange(value: v, max: UInt64(Int.max))) }
            return Int(v)
        }
        if v == 0 {
            guard context.device >= 0 else {
                throw fail(at, .invalidValue(field: "device", value: "the same as before, but no record of the block named one"))
            }
            return context.device
        }
        guard v - 1 <= UInt64(Int32.max) else { throw fail(at, .outOfRange(value: v - 1, max: UInt64(Int32.max))) }
        context.device = Int(v - 1)
        return context.device
    }

    /// A connection id written by `RecordEncoder.connection(_:)`.
    @inlinable public mutating func connection() throws(RecordDecodeError) -> ConnectionID {
        let at = offset
        let v = try uvarint()
        guard !context.legacy else { return ConnectionID(v) }
        if v == 0 {
            guard context.connection != .max else {
                throw fail(at, .invalidValue(field: "connection", value: "the same as before, but no record of the block named one"))
            }
            return ConnectionID(context.connection)
        }
        context.connection = v - 1
        return ConnectionID(v - 1)
    }

    /// The string id of a messageUId written by `RecordEncoder.uid(_:)`.
    @inlinable public mutating func uidID() throws(RecordDecodeError) -> UInt32 {
        let at = offset
        let v = try uvarint()
        return try uidID(code: v, at: at)
    }

    @inlinable mutating func uidID(code v: UInt64, at: Int) throws(RecordDecodeError) -> UInt32 {
        let id: Int64
        if context.legacy {
            guard v <= UInt64(UInt32.max) else { throw fail(at, .badStringID(v)) }
            id = Int64(v)
        } else {
            id = Int64(context.uidBase) &- Varint.unzigzag(v)
        }
        guard id >= 0, id <= Int64(UInt32.max), block.strings[UInt32(id)] != nil else { throw fail(at, .badStringID(UInt64(bitPattern: id))) }
        if !context.legacy && UInt32(id) > context.uidBase { context.uidBase = UInt32(id) }
        return UInt32(id)
    }

    /// A messageUId written by `RecordEncoder.uid(_:)`.
    @inlinable public mutating func uid() throws(RecordDecodeError) -> String {
        let id = try uidID()
        return block.strings[id]!
    }

    /// An optional messageUId written by `RecordEncoder.optionalUID(_:)`.
    @inlinable public mutating func optionalUID() throws(RecordDecodeError) -> String? {
        let at = offset
        let v = try uvarint()
        if v == 0 { return nil }
        let id = try uidID(code: v - 1, at: at)
        return block.strings[id]!
    }

    /// Where the decoder stands: position and the context's scalars (not the content table,
    /// which only message fields touch), for `rewind(to:)`.
    @inlinable func mark() -> (position: Int, device: Int, connection: UInt64, uidBase: UInt32) {
        (position, context.device, context.connection, context.uidBase)
    }

    /// Goes back to `m` (a kind this reader turned out not to know: skipped by its length).
    @inlinable mutating func rewind(to m: (position: Int, device: Int, connection: UInt64, uidBase: UInt32)) {
        position = m.position
        context.device = m.device
        context.connection = m.connection
        context.uidBase = m.uidBase
    }

    /// Throws if bytes remain: call after the last field to catch schema mismatches.
    @inlinable public func expectEnd() throws(RecordDecodeError) {
        if remaining != 0 { throw fail(offset, .trailingBytes(remaining)) }
    }
}
