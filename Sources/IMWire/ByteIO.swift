// Primitive fields (wire-protocol §1.3): all big-endian. String = u16 length + UTF-8.
// The reader works on an unsafe buffer (no per-byte allocation, no bounds-check traps: every read
// is checked and answers a typed error instead); the writer appends to a [UInt8].

/// Cursor over a frame's payload. `origin` is the offset of `bytes[0]` in the frame (or stream), so
/// errors name the absolute byte.
struct ByteReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int
    let origin: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>, origin: Int) {
        self.bytes = bytes
        self.index = 0
        self.origin = origin
    }

    var remaining: Int { bytes.count - index }
    var offset: Int { origin + index }

    func need(_ n: Int, _ field: StaticString) throws(WireError) {
        if remaining < n {
            throw .truncated(field: "\(field)", needed: n, had: remaining, offset: offset)
        }
    }

    mutating func u8(_ field: StaticString) throws(WireError) -> UInt8 {
        try need(1, field)
        defer { index += 1 }
        return bytes[index]
    }

    mutating func u16(_ field: StaticString) throws(WireError) -> UInt16 {
        try need(2, field)
        defer { index += 2 }
        return UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    mutating func u32(_ field: StaticString) throws(WireError) -> UInt32 {
        try need(4, field)
        var v: UInt32 = 0
        for k in 0..<4 { v = v << 8 | UInt32(bytes[index + k]) }
        index += 4
        return v
    }

    mutating func i64(_ field: StaticString) throws(WireError) -> Int64 {
        try need(8, field)
        var v: UInt64 = 0
        for k in 0..<8 { v = v << 8 | UInt64(bytes[index + k]) }
        index += 8
        return Int64(bitPattern: v)
    }

    mutating func string(_ field: StaticString) throws(WireError) -> String {
        try need(2, field)
        let n = Int(bytes[index]) << 8 | Int(bytes[index + 1])
        let start = index + 2
        guard bytes.count - start >= n else {
            throw .truncated(field: "\(field)", needed: n + 2, had: remaining, offset: offset)
        }
        if n == 0 {
            index = start
            return ""
        }
        let slice = UnsafeBufferPointer(rebasing: bytes[start..<start + n])
        guard let s = FastUTF8.string(slice) else {
            throw .badUTF8(field: "\(field)", offset: origin + start + Self.firstInvalidUTF8(slice))
        }
        index = start + n
        return s
    }

    /// Everything left (the protobuf body).
    mutating func rest() -> [UInt8] {
        defer { index = bytes.count }
        return remaining == 0 ? [] : Array(UnsafeBufferPointer(rebasing: bytes[index...]))
    }

    func expectEnd() throws(WireError) {
        if remaining != 0 { throw .trailingBytes(count: remaining, offset: offset) }
    }

    /// Index of the first byte where UTF-8 decoding fails (for the error offset).
    static func firstInvalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var it = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var consumed = 0
        while true {
            switch parser.parseScalar(from: &it) {
            case .valid(let s): consumed += s.count
            case .emptyInput: return consumed
            case .error: return consumed
            }
        }
    }
}

extension Array where Element == UInt8 {
    mutating func appendU16(_ v: UInt16) {
        append(UInt8(truncatingIfNeeded: v >> 8))
        append(UInt8(truncatingIfNeeded: v))
    }

    mutating func appendU32(_ v: UInt32) {
        append(UInt8(truncatingIfNeeded: v >> 24))
        append(UInt8(truncatingIfNeeded: v >> 16))
        append(UInt8(truncatingIfNeeded: v >> 8))
        append(UInt8(truncatingIfNeeded: v))
    }

    mutating func appendI64(_ v: Int64) {
        let u = UInt64(bitPattern: v)
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: u >> UInt64(shift))) }
    }

    /// u16 length + UTF-8 bytes. The length was checked by `WireString.size`.
    mutating func appendString(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            appendU16(UInt16(truncatingIfNeeded: utf8.count))
            append(contentsOf: utf8)
        }
    }
}

enum WireString {
    /// Encoded size of a string field (2 + UTF-8 length), or `.stringTooLong`.
    static func size(_ s: String, _ field: StaticString) throws(WireError) -> Int {
        let n = s.utf8.count
        if n > Int(UInt16.max) { throw .stringTooLong(field: "\(field)", length: n) }
        return 2 + n
    }
}
