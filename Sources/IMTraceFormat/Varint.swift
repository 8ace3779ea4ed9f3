import IMWire

/// LEB128 varints, zigzag, and the scaled time-delta code used by records.
public enum Varint {
    /// The most bytes an unsigned 64-bit varint takes.
    public static let maxLength = LEB128.maxLength

    /// Zigzag maps small signed values to small unsigned ones: 0→0, -1→1, 1→2, -2→3 …
    @inlinable public static func zigzag(_ v: Int64) -> UInt64 {
        UInt64(bitPattern: (v << 1) ^ (v >> 63))
    }

    @inlinable public static func unzigzag(_ u: UInt64) -> Int64 {
        Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    /// Bytes `v` takes as an unsigned varint.
    @inlinable public static func length(_ v: UInt64) -> Int {
        // 1 + floor((bits - 1) / 7) with bits ≥ 1.
        let bits = 64 - (v | 1).leadingZeroBitCount
        return (bits + 6) / 7
    }

    /// Why decoding a varint failed.
    public enum Failure: Error, Equatable, Sendable {
        /// The input ended before the last byte (one without the 0x80 continuation bit).
        case truncated
        /// More than 10 bytes, or a 10th byte carrying bits beyond 64.
        case overlong
    }

    /// Reads an unsigned varint at `offset` of `bytes`, advancing `offset` past it.
    @inlinable @inline(__always)
    public static func read(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) throws(Failure) -> UInt64 {
        let p = offset
        if p < bytes.count {
            let b = bytes[p]
            if b < 0x80 { offset = p + 1; return UInt64(b) }  // the common one-byte case, inlined
        }
        return try readLong(bytes, &offset)
    }

    @inlinable @inline(never)
    static func readLong(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) throws(Failure) -> UInt64 {
        var p = offset
        let end = bytes.count
        guard p < end else { throw .truncated }
        var b = bytes[p]
        var result = UInt64(b & 0x7F)
        var shift: UInt64 = 7
        while true {
            p += 1
            guard p < end else { throw .truncated }
            b = bytes[p]
            if shift == 63 {
                // 10th byte: only its lowest bit fits in 64 bits, and it must end the varint.
                guard b <= 1 else { throw .overlong }
                result |= UInt64(b) << 63
                offset = p + 1
                return result
            }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { offset = p + 1; return result }
            shift += 7
        }
    }
}

/// The compact code for a signed nanosecond delta (record times, durations, body times).
///
/// `code = zigzag(delta / unit) << 2 | u` where `unit` is the largest of 1 ns (u = 0), 1 µs (1),
/// 1 ms (2), 1 s (3) that divides `delta` exactly. A delta of 0 is code 0. So 1 ms costs one
/// byte instead of three, 1 s one byte instead of five, while nanosecond-exact deltas still
/// round-trip. Code 3 (zigzag 0 in seconds) is never produced by that rule and is the escape:
/// it is followed by the raw delta as 8 little-endian bytes, for deltas whose scaled zigzag
/// does not fit in 62 bits (|delta| ≥ 2^61 ns ≈ 73 years of nanoseconds).
public enum TimeCode {
    public static let escape: UInt64 = 3

    @inlinable static func unitCode(_ delta: Int64) -> (scaled: Int64, unit: UInt64) {
        if delta % 1_000 != 0 { return (delta, 0) }
        if delta % 1_000_000 != 0 { return (delta / 1_000, 1) }
        if delta % 1_000_000_000 != 0 { return (delta / 1_000_000, 2) }
        return (delta / 1_000_000_000, 3)
    }

    @inlinable static func multiplier(_ unit: UInt64) -> Int64 {
        switch unit {
        case 0: 1
        case 1: 1_000
        case 2: 1_000_000
        default: 1_000_000_000
        }
    }

    /// Appends the code for `delta` to `out`.
    @inlinable public static func append(_ delta: Int64, to out: inout [UInt8]) {
        if delta == 0 { out.append(0); return }
        let (scaled, unit) = unitCode(delta)
        let zz = Varint.zigzag(scaled)
        if zz >> 62 != 0 {
            out.append(UInt8(escape))
            out.appendLittleEndian(UInt64(bitPattern: delta))
            return
        }
        out.appendVarint(zz << 2 | unit)
    }

    /// Reads a format 2 record head's time code: an odd code is a positive delta that is not a
    /// whole µs, in ns (`delta << 1 | 1`: one flag bit where the plain code spends a sign and two
    /// unit bits — kernel events land on random nanoseconds); an even code is the plain code
    /// shifted left by one (so 0 is still "same time", and the escape is `6` + 8 bytes).
    @inlinable public static func readHead(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) throws(Varint.Failure) -> Int64 {
        let code = try Varint.read(bytes, &offset)
        if code & 1 == 1 { return Int64(bitPattern: code >> 1) }
        return try plain(code >> 1, bytes, &offset)
    }

    /// Reads a code written by `append`; wrapping arithmetic, so even a non-canonical code
    /// cannot trap.
    @inlinable public static func read(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) throws(Varint.Failure) -> Int64 {
        try plain(try Varint.read(bytes, &offset), bytes, &offset)
    }

    /// A plain code (already read): the escape's 8 bytes follow it, else value and unit.
    @inlinable static func plain(_ code: UInt64, _ bytes: UnsafeRawBufferPointer, _ offset: inout Int) throws(Varint.Failure) -> Int64 {
        if code == escape {
            guard bytes.count - offset >= 8 else { throw .truncated }
            let raw = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
            return Int64(bitPattern: raw)
        }
        return Varint.unzigzag(code >> 2) &* multiplier(code & 3)
    }
}

extension Array where Element == UInt8 {
    // appendVarint: IMWire's one LEB128 writer (LEB128.swift).

    @inlinable mutating func appendLittleEndian(_ v: UInt64) {
        Swift.withUnsafeBytes(of: v.littleEndian) { append(contentsOf: $0) }
    }

    @inlinable mutating func appendLittleEndian(_ v: UInt32) {
        Swift.withUnsafeBytes(of: v.littleEndian) { append(contentsOf: $0) }
    }

    @inlinable mutating func appendLittleEndian(_ v: UInt16) {
        Swift.withUnsafeBytes(of: v.littleEndian) { append(contentsOf: $0) }
    }

    /// Varint length, then the UTF-8 bytes.
    mutating func appendLengthPrefixed(_ s: String) {
        var s = s
        s.withUTF8 { u in
            appendVarint(UInt64(u.count))
            append(contentsOf: u)
        }
    }
}

extension UnsafeRawBufferPointer {
    @inlinable func u16(_ at: Int) -> UInt16 { UInt16(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt16.self)) }
    @inlinable func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
    @inlinable func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    @inlinable func i64(_ at: Int) -> Int64 { Int64(bitPattern: u64(at)) }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that keeps a typed error (the standard library's version rethrows `any Error`).
    @inlinable func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let r: Result<R, E> = withUnsafeBytes { raw in Result { () throws(E) -> R in try body(raw) } }
        return try r.get()
    }
}
