import CCRC32C

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the CPU's CRC-32C instruction where
/// there is one (x86-64 SSE4.2, AArch64 CRC), else software slicing-by-8.
///
/// Why CRC-32C and not xxHash64: a trace block is checked for *accidental* damage (torn writes,
/// bit rot, truncation), the job CRC-32C does in iSCSI, ext4, Btrfs and the LevelDB/RocksDB log
/// format. It detects every burst of up to 32 bits and every error of up to 3 bits in blocks far
/// larger than ours (Hamming distance 4 up to ~2^31 bits), which a hash gives only
/// probabilistically; 32 bits per 56-byte block header or ~100 KiB payload is cheap. Slicing-by-8
/// costs ~4 instructions per byte (~10% of what zstd level 3 spends on the same bytes); the
/// instruction, ~0.4.
public enum CRC32C {
    /// CRC-32C of `bytes` (initial value and final xor as in RFC 3720: `checksum("123456789") == 0xE3069283`).
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, bytes)
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { update(0, $0) }
    }

    public static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { update(0, $0) }
    }

    /// Whether `update` uses the CPU instruction.
    public static let hardware = imsim_crc32c_hardware() != 0

    /// Continues a checksum: `update(update(0, a), b) == checksum(a + b)`.
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard hardware, let base = bytes.baseAddress else { return software(crc, bytes) }
        return ~imsim_crc32c_hw_update(~crc, base, bytes.count)
    }

    /// Slicing-by-8 (the fallback; the tests hold the instruction to it).
    public static func software(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        Tables.shared.withUnsafeBufferPointer { t in
            var c = ~crc
            var p = 0
            let n = bytes.count
            // 8 bytes per step (unaligned little-endian loads), then the tail byte by byte.
            while n - p >= 8 {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: p, as: UInt64.self)) ^ UInt64(c)
                c = t[7 * 256 + Int(word & 0xFF)]
                    ^ t[6 * 256 + Int((word >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((word >> 16) & 0xFF)]
                    ^ t[4 * 256 + Int((word >> 24) & 0xFF)]
                    ^ t[3 * 256 + Int((word >> 32) & 0xFF)]
                    ^ t[2 * 256 + Int((word >> 40) & 0xFF)]
                    ^ t[1 * 256 + Int((word >> 48) & 0xFF)]
                    ^ t[Int(word >> 56)]
                p += 8
            }
            while p < n {
                c = t[Int((c ^ UInt32(bytes[p])) & 0xFF)] ^ (c >> 8)
                p += 1
            }
            return ~c
        }
    }

    /// Bit-at-a-time reference, used by the tests to check the sliced tables.
    public static func reference(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ polynomial : c >> 1 }
        }
        return ~c
    }

    public static let polynomial: UInt32 = 0x82F6_3B78

    /// 8 × 256 entries: table k maps a byte to its CRC contribution k bytes further on.
    /// An immutable lazily-initialised global (thread-safe), never mutated after creation.
    @usableFromInline enum Tables {
        @usableFromInline static let shared: [UInt32] = {
            var t = [UInt32](repeating: 0, count: 8 * 256)
            for i in 0..<256 {
                var c = UInt32(i)
                for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ polynomial : c >> 1 }
                t[i] = c
            }
            for k in 1..<8 {
                for i in 0..<256 {
                    let prev = t[(k - 1) * 256 + i]
                    t[k * 256 + i] = t[Int(prev & 0xFF)] ^ (prev >> 8)
                }
            }
            return t
        }()
    }
}
