// Primitive fields (wire-protocol §1.3): all big-endian. String = u16 length + UTF-8, or CESU-8
// (surrogates as 3-byte sequences, what the official web clients write for non-BMP characters).
// The reader works on an unsafe buffer (no per-byte allocation, no bounds-check traps: every read
// is checked and answers a typed error instead); the writer stores through a pointer into storage
// sized beforehand.

/// Cursor over a frame's payload. `origin` is the offset of `bytes[0]` in the frame (or stream), so
/// errors name the absolute byte.
struct ByteReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int
    let origin: Int
    /// Liberal decoding (as the official decoders): trailing bytes become a note, not an error.
    let lenient: Bool
    var notes: [WireNote] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>, origin: Int, lenient: Bool = false) {
        self.bytes = bytes
        self.index = 0
        self.origin = origin
        self.lenient = lenient
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
        guard let s = FastUTF8.string(slice) ?? CESU8.decode(slice) else {
            throw .badUTF8(field: "\(field)", offset: origin + start + CESU8.firstInvalid(slice))
        }
        index = start + n
        return s
    }

    /// Everything left (the protobuf body).
    mutating func rest() -> [UInt8] {
        defer { index = bytes.count }
        return remaining == 0 ? [] : Array(UnsafeBufferPointer(rebasing: bytes[index...]))
    }

    /// The end of a fixed-layout frame: extra bytes are an error, or (lenient) a note.
    mutating func expectEnd() throws(WireError) {
        guard remaining != 0 else { return }
        guard lenient else { throw .trailingBytes(count: remaining, offset: offset) }
        notes.append(.trailingBytesIgnored(count: remaining, offset: offset))
        index = bytes.count
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

/// Writes fields through a pointer into storage sized beforehand (`FrameCodec.payloadSize`): no
/// uniqueness or capacity check per byte, as `Array.append` makes.
struct ByteWriter {
    private(set) var p: UnsafeMutablePointer<UInt8>

    init(_ p: UnsafeMutablePointer<UInt8>) { self.p = p }

    @inline(__always) mutating func u8(_ v: UInt8) {
        p.initialize(to: v)
        p += 1
    }

    @inline(__always) mutating func u16(_ v: UInt16) {
        UnsafeMutableRawPointer(p).storeBytes(of: v.bigEndian, as: UInt16.self)
        p += 2
    }

    @inline(__always) mutating func u32(_ v: UInt32) {
        UnsafeMutableRawPointer(p).storeBytes(of: v.bigEndian, as: UInt32.self)
        p += 4
    }

    @inline(__always) mutating func i64(_ v: Int64) {
        UnsafeMutableRawPointer(p).storeBytes(of: UInt64(bitPattern: v).bigEndian, as: UInt64.self)
        p += 8
    }

    @inline(__always) mutating func bytes(_ b: UnsafeBufferPointer<UInt8>) {
        guard let base = b.baseAddress, b.count > 0 else { return }
        p.initialize(from: base, count: b.count)
        p += b.count
    }

    mutating func bytes(_ b: [UInt8]) {
        b.withUnsafeBufferPointer { bytes($0) }
    }

    /// u16 length + the string's bytes in `encoding`. The length was checked by `WireString.size`.
    mutating func string(_ s: String, _ encoding: WireStringEncoding) {
        let scan = encoding == .cesu8 && !WireString.isASCII(s, utf8Count: s.utf8.count)
        var s = s
        s.withUTF8 { utf8 in
            let extra = scan ? CESU8.extraBytes(utf8) : 0
            u16(UInt16(truncatingIfNeeded: utf8.count + extra))
            if extra == 0 { bytes(utf8) } else { p = CESU8.write(utf8, to: p) }
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends bytes written elsewhere (through a `ByteWriter`); an empty array without room
    /// becomes a copy of exactly these bytes. (`Array(unsafeUninitializedCapacity:)` allocates
    /// through an unspecialised path of the standard library: ~560 instructions a call, measured.
    /// Stream framing writes into the array itself: `StreamFrameBytes`.)
    @inline(__always)
    mutating func append(written bytes: UnsafeBufferPointer<UInt8>) {
        if isEmpty, capacity < bytes.count {
            self = Array(bytes)
        } else {
            append(contentsOf: bytes)
        }
    }
}

enum WireString {
    /// True when `s` is ASCII (CESU-8 = UTF-8 then): every other scalar takes more UTF-8 bytes
    /// than UTF-16 units, and for an ASCII native string `utf16.count` is O(1) (the string knows
    /// it is ASCII) — no `withUTF8` closure and no scan for the usual header string.
    @inline(__always)
    static func isASCII(_ s: String, utf8Count: Int) -> Bool { s.utf16.count == utf8Count }

    /// Encoded size of a string field (2 + its length in `encoding`), or `.stringTooLong`.
    static func size(_ s: String, _ field: StaticString, _ encoding: WireStringEncoding = .utf8) throws(WireError) -> Int {
        var n = s.utf8.count
        if encoding == .cesu8, n > 0, !WireString.isASCII(s, utf8Count: n) {
            var s = s
            n += s.withUTF8 { CESU8.extraBytes($0) }
        }
        if n > Int(UInt16.max) { throw .stringTooLong(field: "\(field)", length: n) }
        return 2 + n
    }
}

/// How header strings (topic, targetId, userId, messageUId…) are written (wire-protocol §1.3).
/// Both are always accepted when decoding.
public enum WireStringEncoding: String, Sendable, Hashable, CaseIterable {
    /// What the official web clients write: a character outside the BMP as its two UTF-16
    /// surrogates, 3 bytes each ("a😀" → `61 eda0bd edb880`). Identical to UTF-8 for BMP text.
    case cesu8
    /// Standard UTF-8 (4-byte sequences).
    case utf8
}

/// CESU-8 / Java's "modified UTF-8" (wire-protocol §1.3): decoding (surrogate pairs, and `C0 80`
/// for U+0000) and encoding (surrogate pairs; U+0000 stays `00`).
enum CESU8 {
    /// Bytes CESU-8 adds over UTF-8: 2 per 4-byte sequence (each becomes 6 bytes).
    static func extraBytes(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        // Header strings are almost always ASCII: one 8-byte OR per word answers 0 for them.
        if FastUTF8.isASCII(utf8) { return 0 }
        var k = 0
        for b in utf8 where b >= 0xF0 { k += 1 }
        return 2 * k
    }

    /// Writes `utf8` with every 4-byte sequence rewritten as two 3-byte surrogates
    /// (`utf8.count + extraBytes(utf8)` bytes); returns the end.
    static func write(_ utf8: UnsafeBufferPointer<UInt8>, to out: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var o = out
        var i = 0
        while i < utf8.count {
            let b = utf8[i]
            guard b >= 0xF0, i + 3 < utf8.count else {
                o.initialize(to: b)
                o += 1
                i += 1
                continue
            }
            let scalar = UInt32(b & 0x07) << 18 | UInt32(utf8[i + 1] & 0x3F) << 12
                | UInt32(utf8[i + 2] & 0x3F) << 6 | UInt32(utf8[i + 3] & 0x3F)
            let v = scalar - 0x10000
            o = writeThree(0xD800 | (v >> 10), to: o)
            o = writeThree(0xDC00 | (v & 0x3FF), to: o)
            i += 4
        }
        return o
    }

    private static func writeThree(_ u: UInt32, to o: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        o[0] = UInt8(0xE0 | (u >> 12))
        o[1] = UInt8(0x80 | ((u >> 6) & 0x3F))
        o[2] = UInt8(0x80 | (u & 0x3F))
        return o + 3
    }

    /// Decodes text that is valid UTF-8 except for CESU-8 surrogate pairs and `C0 80`; nil
    /// when anything else is wrong (a lone surrogate included).
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var scalars = String.UnicodeScalarView()
        var i = 0
        while i < bytes.count {
            guard let (scalar, length) = scalar(bytes, at: i) else { return nil }
            scalars.append(scalar)
            i += length
        }
        return String(scalars)
    }

    /// Offset of the first byte neither UTF-8 nor CESU-8 can read.
    static func firstInvalid(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var i = 0
        while i < bytes.count {
            guard let (_, length) = scalar(bytes, at: i) else { return i }
            i += length
        }
        return i
    }

    /// One scalar at `i`: a UTF-8 sequence, a CESU-8 surrogate pair (6 bytes) or `C0 80`.
    private static func scalar(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> (Unicode.Scalar, Int)? {
        func cont(_ k: Int) -> UInt32? {
            guard k < b.count, b[k] & 0xC0 == 0x80 else { return nil }
            return UInt32(b[k] & 0x3F)
        }
        let b0 = b[i]
        switch b0 {
        case 0x00...0x7F:
            return (Unicode.Scalar(b0), 1)
        case 0xC0:
            return b.count > i + 1 && b[i + 1] == 0x80 ? (Unicode.Scalar(0), 2) : nil
        case 0xC2...0xDF:
            guard let c1 = cont(i + 1) else { return nil }
            return Unicode.Scalar(UInt32(b0 & 0x1F) << 6 | c1).map { ($0, 2) }
        case 0xE0...0xEF:
            guard let c1 = cont(i + 1), let c2 = cont(i + 2) else { return nil }
            let u = UInt32(b0 & 0x0F) << 12 | c1 << 6 | c2
            if u < 0x800 { return nil }                      // overlong
            if (0xD800...0xDBFF).contains(u) {              // high surrogate: a low one must follow
                guard i + 5 < b.count, b[i + 3] == 0xED, let d1 = cont(i + 4), let d2 = cont(i + 5) else { return nil }
                let low = 0xD000 | d1 << 6 | d2
                guard (0xDC00...0xDFFF).contains(low) else { return nil }
                return Unicode.Scalar(0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00)).map { ($0, 6) }
            }
            return Unicode.Scalar(u).map { ($0, 3) }        // nil for a lone low surrogate
        case 0xF0...0xF4:
            guard let c1 = cont(i + 1), let c2 = cont(i + 2), let c3 = cont(i + 3) else { return nil }
            let u = UInt32(b0 & 0x07) << 18 | c1 << 12 | c2 << 6 | c3
            guard u >= 0x10000 else { return nil }
            return Unicode.Scalar(u).map { ($0, 4) }
        default:
            return nil
        }
    }
}
