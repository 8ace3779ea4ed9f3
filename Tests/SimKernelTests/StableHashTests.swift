import SimKernel
import Testing

/// The buffer and in-parts FNV-1a paths hash exactly what the byte-by-byte definition hashes
/// (stream names and digests depend on it).
@Suite struct StableHashTests {
    static func reference(_ bytes: [UInt8]) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return h
    }

    static let strings = ["", "a", "workload/u0001/privateMessage", "émoji 🎉 and more than fifteen bytes",
                          String(repeating: "x", count: 300), "tab\tnul\u{0}"]

    @Test func stringAndBufferPathsAreTheDefinition() {
        for s in Self.strings {
            let ref = Self.reference(Array(s.utf8))
            #expect(StableHash.fnv1a(s) == ref)
            #expect(StableHash.fnv1a(Array(s.utf8)) == ref)
            #expect(StableHash.fnv1a(s.utf8) == ref)
            // A substring is hashed by its own bytes only.
            let sub = s.dropFirst()
            #expect(StableHash.fnv1a(String(sub)) == Self.reference(Array(sub.utf8)))
        }
    }

    @Test func hashingInPartsIsHashingTheJoinedString() {
        for a in Self.strings {
            for b in Self.strings {
                let joined = StableHash.fnv1a(a + ":" + b)
                var h = StableHash.fnv1a(continuing: StableHash.basis, a)
                h = StableHash.fnv1a(continuing: h, byte: UInt8(ascii: ":"))
                h = StableHash.fnv1a(continuing: h, b)
                #expect(h == joined)
            }
        }
    }
}
