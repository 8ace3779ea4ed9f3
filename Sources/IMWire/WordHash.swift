/// A cheap hash for dictionary keys that are one machine word (connection ids, timer names).
///
/// `Dictionary` and `Set` place a key by `_rawHashValue(seed:)`; its default runs SipHash-1-3
/// through `Hasher` (~190 instructions a lookup, 2–3 % of a mixed-1k hour across the server's
/// connection table and the world's timer tables). Keys that are one word need no
/// flooding-resistant hash: the simulator is the only source of its keys. Nothing may depend on
/// the order this gives either (DESIGN.md: iteration order never decides anything).
public enum WordHash {
    /// SplitMix64's finalizer over `word` mixed with the table's seed: every input bit reaches
    /// the low bits a table's bucket mask keeps.
    @inlinable @inline(__always)
    public static func mix(_ word: UInt64, seed: Int) -> Int {
        var z = word ^ UInt64(bitPattern: Int64(seed)) ^ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(bitPattern: UInt(truncatingIfNeeded: z ^ (z >> 31)))
    }
}
