/// Hashes that are the same in every process (unlike `Hasher`, which Swift seeds per process).
public enum StableHash {
    /// FNV-1a 64 over bytes; used to name PRNG streams and intern strings.
    @inlinable public static func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
        if let r = bytes.withContiguousStorageIfAvailable({ fnv1a(continuing: basis, buffer: $0) }) { return r }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        return h
    }

    /// The FNV-1a offset basis: `fnv1a(continuing: basis, x)` is `fnv1a(x)`.
    @inlinable public static var basis: UInt64 { 0xcbf2_9ce4_8422_2325 }

    /// FNV-1a over a buffer (the byte loop without a generic iterator).
    @inlinable public static func fnv1a(continuing h: UInt64, buffer: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = h
        for b in buffer {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        return h
    }

    @inlinable public static func fnv1a(_ string: String) -> UInt64 { fnv1a(continuing: basis, string) }

    /// FNV-1a of the bytes hashed so far (`h`) followed by `string`'s UTF-8: hashing a joined
    /// string in parts gives its hash without building it (`fnv1a(a + b)` =
    /// `fnv1a(continuing: fnv1a(a), b)`).
    @inlinable public static func fnv1a(continuing h: UInt64, _ string: String) -> UInt64 {
        // Native strings are contiguous UTF-8: a plain buffer loop (the UTF8View iterator
        // costs ~2.5× as many instructions per byte).
        if let r = string.utf8.withContiguousStorageIfAvailable({ fnv1a(continuing: h, buffer: $0) }) { return r }
        var h = h
        for b in string.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        return h
    }

    /// `fnv1a(continuing:_:)` of one byte.
    @inlinable public static func fnv1a(continuing h: UInt64, byte: UInt8) -> UInt64 {
        (h ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    /// SplitMix64's finaliser: a strong 64-bit bijective mix.
    @inlinable public static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Order-sensitive combination of two 64-bit values (wyhash-style multiply-fold).
    @inlinable public static func combine(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let m = (a ^ 0xA076_1D64_78BD_642F).multipliedFullWidth(by: b ^ 0xE703_7ED1_A0B4_28DB)
        return m.high ^ m.low
    }
}

/// A running 64-bit digest folded over values in order. Two runs with the same digest dispatched
/// the same events (time, kind, node, payload) in the same order, with overwhelming probability.
public struct Digest64: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline var _value: UInt64
    @inlinable public var value: UInt64 { _value }

    @inlinable public init(_ value: UInt64 = 0x1B87_3593_CC9E_2D51) { _value = value }

    @inlinable public mutating func fold(_ x: UInt64) {
        _value = StableHash.combine(_value &+ 0x2545_F491_4F6C_DD1D, x)
    }
    @inlinable public mutating func fold(_ x: Int64) { fold(UInt64(bitPattern: x)) }
    @inlinable public mutating func fold(_ s: String) { fold(StableHash.fnv1a(s)) }
    @inlinable public mutating func fold(bytes: some Sequence<UInt8>) { fold(StableHash.fnv1a(bytes)) }

    /// 16 lowercase hex digits.
    public var description: String { Digest64.hex(value) }

    public static func hex(_ v: UInt64) -> String {
        // Digit by digit into the string's own storage (ledgers hex one hash per message).
        String(unsafeUninitializedCapacity: 16) { out in
            let digits: StaticString = "0123456789abcdef"
            var v = v
            for i in stride(from: 15, through: 0, by: -1) {
                out[i] = digits.utf8Start[Int(v & 15)]
                v >>= 4
            }
            return 16
        }
    }
}
