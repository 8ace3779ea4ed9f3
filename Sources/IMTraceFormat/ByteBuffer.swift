import IMWire

/// A growable byte buffer over raw memory for the writer's hot path: appends are a capacity
/// check and a store (no uniqueness check, no generic `replaceSubrange` on reset).
///
/// A class, so the memory has one owner however the handle is copied. (A `~Copyable` struct
/// was tried first: Swift 6.3.1's optimizer crashed on it, and with an `@inlinable deinit`
/// workaround produced a release build that corrupted the heap. ASan builds were clean.) Its
/// state lives in a separately allocated `ByteStorage`, so a `RecordEncoder` can write through
/// a plain pointer with no reference counting at all.
@usableFromInline final class ByteBuffer {
    @usableFromInline let storage: UnsafeMutablePointer<ByteStorage>

    @usableFromInline init(capacity: Int) {
        storage = .allocate(capacity: 1)
        let c = max(capacity, 16)
        storage.initialize(to: ByteStorage(base: .allocate(capacity: c), count: 0, capacity: c))
    }

    deinit {
        storage.pointee.base.deallocate()
        storage.deallocate()
    }

    @inlinable var base: UnsafeMutablePointer<UInt8> { storage.pointee.base }
    @inlinable var count: Int {
        get { storage.pointee.count }
        set { storage.pointee.count = newValue }
    }

    @usableFromInline var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    @inlinable @inline(__always) func removeAll() { storage.pointee.count = 0 }
    @inlinable @inline(__always) func reserve(_ extra: Int) { storage.pointee.reserve(extra) }
    @inlinable @inline(__always) func append(_ b: UInt8) { storage.pointee.append(b) }
    @inlinable func append(_ raw: UnsafeRawBufferPointer) { storage.pointee.append(raw) }
    @inlinable func append(_ a: [UInt8]) { a.withUnsafeBytes { append($0) } }
    @inlinable func append(_ a: ArraySlice<UInt8>) { a.withUnsafeBytes { append($0) } }
    @inlinable @inline(__always) func appendVarint(_ value: UInt64) { storage.pointee.appendVarint(value) }
    @inlinable func appendLittleEndian(_ v: UInt64) { storage.pointee.appendLittleEndian(v) }
    @inlinable func appendLittleEndian(_ v: UInt32) { storage.pointee.appendLittleEndian(v) }
    @inlinable @inline(__always) func appendTimeCode(_ delta: Int64) { storage.pointee.appendTimeCode(delta) }
    @inlinable @inline(__always) func appendHeadTimeCode(_ delta: Int64) { storage.pointee.appendHeadTimeCode(delta) }
}

/// The state of a `ByteBuffer`: a trivial value, written in place through a pointer.
@usableFromInline struct ByteStorage {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var count: Int
    @usableFromInline var capacity: Int

    @usableFromInline init(base: UnsafeMutablePointer<UInt8>, count: Int, capacity: Int) {
        self.base = base
        self.count = count
        self.capacity = capacity
    }

    @inlinable @inline(__always) mutating func reserve(_ extra: Int) {
        if capacity &- count < extra { grow(extra) }
    }

    @inlinable @inline(never) mutating func grow(_ extra: Int) {
        let newCapacity = max(capacity * 2, count + extra)
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        p.initialize(from: base, count: count)
        base.deallocate()
        base = p
        capacity = newCapacity
    }

    @inlinable @inline(__always) mutating func append(_ b: UInt8) {
        reserve(1)
        base[count] = b
        count &+= 1
    }

    @inlinable mutating func append(_ raw: UnsafeRawBufferPointer) {
        guard let src = raw.baseAddress, raw.count > 0 else { return }
        reserve(raw.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: src, byteCount: raw.count)
        count &+= raw.count
    }

    @inlinable mutating func append(_ a: [UInt8]) { a.withUnsafeBytes { append($0) } }
    @inlinable mutating func append(_ a: ArraySlice<UInt8>) { a.withUnsafeBytes { append($0) } }

    /// IMWire's LEB128 writer, in place: one capacity check, then one or two stores inline
    /// for most fields (kinds, flags, device and string ids).
    @inlinable @inline(__always) mutating func appendVarint(_ value: UInt64) {
        reserve(LEB128.maxLength)
        count &+= LEB128.write(value, to: UnsafeMutableRawPointer(base + count))
    }

    @inlinable mutating func appendLittleEndian(_ v: UInt64) {
        reserve(8)
        UnsafeMutableRawPointer(base + count).storeBytes(of: v.littleEndian, as: UInt64.self)
        count &+= 8
    }

    @inlinable mutating func appendLittleEndian(_ v: UInt32) {
        reserve(4)
        UnsafeMutableRawPointer(base + count).storeBytes(of: v.littleEndian, as: UInt32.self)
        count &+= 4
    }

    /// The scaled time-delta code (see `TimeCode`). A zero delta (every record after the first
    /// of an event) is one byte, inline.
    @inlinable @inline(__always) mutating func appendTimeCode(_ delta: Int64) {
        if delta == 0 { append(0); return }
        appendNonzeroTimeCode(delta)
    }

    /// A record head's time code in format 2 (`TimeCode.readHead`).
    @inlinable @inline(__always) mutating func appendHeadTimeCode(_ delta: Int64) {
        if delta == 0 { append(0); return }
        appendNonzeroHeadTimeCode(delta)
    }

    @inlinable @inline(never) mutating func appendNonzeroHeadTimeCode(_ delta: Int64) {
        if delta > 0 && delta % 1_000 != 0 && delta < (1 << 62) {
            appendVarint(UInt64(delta) << 1 | 1)
            return
        }
        let (scaled, unit) = TimeCode.unitCode(delta)
        let zz = Varint.zigzag(scaled)
        if zz >> 61 != 0 {
            appendVarint(TimeCode.escape << 1)
            appendLittleEndian(UInt64(bitPattern: delta))
            return
        }
        appendVarint((zz << 2 | unit) << 1)
    }

    @inlinable @inline(never) mutating func appendNonzeroTimeCode(_ delta: Int64) {
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
