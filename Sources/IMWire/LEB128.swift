// The unsigned LEB128 writer for byte arrays (7 bits a byte, least significant group first, 0x80 =
// more): protobuf varints (FastProto, the page envelope, Perfetto export). The trace's raw-storage
// ByteBuffer (IMTraceFormat) still has its own copy — issue 29's last repeat, not yet folded.
extension Array where Element == UInt8 {
    /// Appends `value` as an unsigned LEB128 varint (1 byte below 128, at most 10).
    @inlinable @inline(__always) public mutating func appendVarint(_ value: UInt64) {
        if value < 0x80 { append(UInt8(truncatingIfNeeded: value)); return }
        appendLongVarint(value)
    }

    @inlinable @inline(never) public mutating func appendLongVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        append(UInt8(truncatingIfNeeded: v))
    }
}
