/// A growable byte buffer over raw memory for the writer's hot path: appends are a capacity
/// check and a store (no uniqueness check, no generic `replaceSubrange` on reset).
///
/// A class, so the memory has one owner however the handle is copied. (A `~Copyable` struct
/// was tried first: Swift 6.3.1's optimizer crashed on it, and with an `@inlinable deinit`
/// workaround produced a release build that corrupted the heap. ASan builds were clean.)
@usableFromInline final class ByteBuffer {
    @exclusivity(unchecked) @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) @usableFromInline var count = 0
    @exclusivity(unchecked) @usableFromInline var capacity: Int

    @usableFromInline init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @usableFromInline var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    @inlinable @inline(__always) func removeAll() { count = 0 }

    @inlinable @inline(__always) func reserve(_ extra: Int) {
        if capacity - count < extra { grow(extra) }
    }

    @inlinable @inline(never) func grow(_ extra: Int) {
        let newCapacity = max(capacity * 2, count + extra)
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        p.initialize(from: base, count: count)
        base.deallocate()
        base = p
        capacity = newCapacity
    }

    @inlinable @inline(__always) func append(_ b: UInt8) {
        reserve(1)
        base[count] = b
        count += 1
    }

    @inlinable func append(_ raw: UnsafeRawBufferPointer) {
        guard let src = raw.baseAddress, raw.count > 0 else { return }
        reserve(raw.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: src, byteCount: raw.count)
        count += raw.count
    }

    @inlinable func append(_ a: [UInt8]) { a.withUnsafeBytes { append($0) } }
    @inlinable func append(_ a: ArraySlice<UInt8>) { a.withUnsafeBytes { append($0) } }

    @inlinable @inline(__always) func appendVarint(_ value: UInt64) {
        reserve(Varint.maxLength)
        var v = value
        var p = count
        while v >= 0x80 {
            base[p] = UInt8(truncatingIfNeeded: v) | 0x80
            v >>= 7
            p += 1
        }
        base[p] = UInt8(truncatingIfNeeded: v)
        count = p + 1
    }

    @inlinable func appendLittleEndian(_ v: UInt64) {
        reserve(8)
        UnsafeMutableRawPointer(base + count).storeBytes(of: v.littleEndian, as: UInt64.self)
        count += 8
    }

    @inlinable func appendLittleEndian(_ v: UInt32) {
        reserve(4)
        UnsafeMutableRawPointer(base + count).storeBytes(of: v.littleEndian, as: UInt32.self)
        count += 4
    }

    /// The scaled time-delta code (see `TimeCode`).
    @inlinable func appendTimeCode(_ delta: Int64) {
        if delta == 0 { append(0); return }
        let (scaled, unit) = TimeCode.unitCode(delta)
        let zz = Varint.zigzag(scaled)
        if zz >> 62 != 0 {
            append(UInt8(TimeCode.escape))
            appendLittleEndian(UInt64(bitPattern: delta))
            return
        }
        appendVarint(zz << 2 | unit)
    }
}
