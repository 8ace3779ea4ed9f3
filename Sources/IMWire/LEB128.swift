// The one unsigned LEB128 writer (7 bits a byte, least significant group first, 0x80 = more):
// protobuf varints (FastProto, the page envelope, Perfetto export) append to byte arrays through
// it, and the trace's raw-storage ByteBuffer (IMTraceFormat) writes through it in place.
public enum LEB128 {
    /// The most bytes an unsigned 64-bit varint takes.
    public static let maxLength = 10

    /// Writes `value` at `p`, which must have `maxLength` writable bytes; returns the bytes
    /// written. One and two bytes (most fields) inline; longer values take the loop.
    @inlinable @inline(__always)
    public static func write(_ value: UInt64, to p: UnsafeMutableRawPointer) -> Int {
        if value < 0x80 {
            p.storeBytes(of: UInt8(truncatingIfNeeded: value), as: UInt8.self)
            return 1
        }
        if value < 0x4000 {
            p.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, as: UInt8.self)
            p.storeBytes(of: UInt8(truncatingIfNeeded: value >> 7), toByteOffset: 1, as: UInt8.self)
            return 2
        }
        return writeLong(value, to: p)
    }

    @inlinable @inline(never)
    public static func writeLong(_ value: UInt64, to p: UnsafeMutableRawPointer) -> Int {
        var v = value
        var n = 0
        while v >= 0x80 {
            p.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: n, as: UInt8.self)
            v >>= 7
            n &+= 1
        }
        p.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: n, as: UInt8.self)
        return n &+ 1
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` as an unsigned LEB128 varint (1 byte below 128, at most 10).
    @inlinable @inline(__always) public mutating func appendVarint(_ value: UInt64) {
        if value < 0x80 { append(UInt8(truncatingIfNeeded: value)); return }
        appendLongVarint(value)
    }

    @inlinable @inline(never) public mutating func appendLongVarint(_ value: UInt64) {
        var scratch: (UInt64, UInt64) = (0, 0)  // 16 bytes ≥ LEB128.maxLength
        Swift.withUnsafeMutableBytes(of: &scratch) { raw in
            let n = LEB128.write(value, to: raw.baseAddress!)
            append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[..<n]))
        }
    }
}
