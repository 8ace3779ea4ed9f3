import Testing
@testable import IMTrace
@testable import IMTraceFormat
import SimKernel

@Suite struct ChecksumTests {
    // Known answers: the CRC catalogue check value and RFC 3720 (iSCSI) appendix B.4.
    @Test func knownAnswers() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8]()) == 0)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).reversed().map { UInt8($0) }) == 0x113F_DB5C)
        // "a" and the classic pangram (zlib-ng / crc32c reference vectors).
        #expect(CRC32C.checksum(Array("a".utf8)) == 0xC1D0_4330)
        #expect(CRC32C.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x2262_0404)
    }

    @Test func referenceVectorsAgreeWithBitwiseReference() {
        #expect(CRC32C.reference(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.reference([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
    }

    /// Slicing-by-8 (every length and alignment mod 8) equals the bit-at-a-time definition.
    @Test func slicedEqualsReferenceForAllLengthsAndAlignments() {
        var rng = RandomStream(seed: 42)
        let data = (0..<600).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        for start in 0..<8 {
            for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 511, 592] where start + length <= data.count {
                let slice = data[start..<(start + length)]
                #expect(CRC32C.checksum(slice) == CRC32C.reference(slice), "start \(start) length \(length)")
            }
        }
    }

    /// The CPU instruction path (when this machine has one) and slicing-by-8 agree with the
    /// bit-at-a-time definition on every length and alignment, and continue each other.
    @Test func hardwareAndSoftwareAgree() {
        var rng = RandomStream(seed: 11)
        let data = (0..<4200).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        data.withUnsafeBytes { all in
            for start in 0..<9 {
                for length in [0, 1, 2, 3, 7, 8, 9, 16, 31, 33, 100, 1023, 4096] where start + length <= all.count {
                    let part = UnsafeRawBufferPointer(rebasing: all[start..<(start + length)])
                    let expected = CRC32C.reference(part)
                    #expect(CRC32C.software(0, part) == expected, "software start \(start) length \(length)")
                    #expect(CRC32C.checksum(part) == expected, "hardware=\(CRC32C.hardware) start \(start) length \(length)")
                }
            }
            let a = UnsafeRawBufferPointer(rebasing: all[0..<1001]), b = UnsafeRawBufferPointer(rebasing: all[1001...])
            #expect(CRC32C.update(CRC32C.software(0, a), b) == CRC32C.software(CRC32C.update(0, a), b))
            #expect(CRC32C.update(CRC32C.update(0, a), b) == CRC32C.reference(all))
        }
    }

    @Test func incrementalUpdateEqualsOneShot() {
        var rng = RandomStream(seed: 7)
        let data = (0..<1000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        for cut in [0, 1, 5, 8, 13, 500, 999, 1000] {
            let whole = CRC32C.checksum(data)
            let parts = data.withUnsafeBytes { raw in
                CRC32C.update(CRC32C.update(0, UnsafeRawBufferPointer(rebasing: raw[0..<cut])),
                              UnsafeRawBufferPointer(rebasing: raw[cut...]))
            }
            #expect(parts == whole, "cut \(cut)")
        }
    }

    @Test func detectsEverySingleBitFlip() {
        let data = Array("IMSim trace block payload: every single-bit error must be caught".utf8)
        let good = CRC32C.checksum(data)
        for i in data.indices {
            for bit in 0..<8 {
                var d = data
                d[i] ^= 1 << UInt8(bit)
                #expect(CRC32C.checksum(d) != good)
            }
        }
    }
}
