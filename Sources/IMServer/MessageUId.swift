/// messageUId generation (Docs/server.md §4).
///
/// RongCloud's ids look like `BJ7S-VB6K-C0I9-8GLQ`. Ours keep that shape — `BK` + 14 symbols of
/// Crockford's base-32 alphabet in groups of 4 — and encode a 64-bit *sequence number*
/// `generation << 48 | counter`: the generation counts server restarts (it survives every crash),
/// the counter counts accepted messages (kept across a crash only with `persistAcrossCrash`). So
/// ids are deterministic, unique across crashes, fixed-width, and their string order is the
/// order in which the server accepted the messages — which is what "ties by messageUId" means.
enum MessageUId {
    /// Crockford's base-32 alphabet, in ascending ASCII order.
    static let alphabet: [UInt8] = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// The sequence number of the `counter`-th message of server generation `generation`.
    static func sequence(generation: UInt32, counter: UInt64) -> UInt64 {
        UInt64(generation & 0xFFFF) << 48 | (counter & 0xFFFF_FFFF_FFFF)
    }

    /// `BKxx-xxxx-xxxx-xxxx` for a sequence number.
    static func make(_ seq: UInt64) -> String {
        // 14 symbols × 5 bits = 70 bits, most significant first (the top 6 bits are always 0).
        var symbols = [UInt8](repeating: 0, count: 14)
        var v = seq
        for i in stride(from: 13, through: 0, by: -1) {
            symbols[i] = alphabet[Int(v & 31)]
            v >>= 5
        }
        var out: [UInt8] = [0x42, 0x4B] // "BK"
        out.reserveCapacity(19)
        for (i, s) in symbols.enumerated() {
            if i == 2 || i == 6 || i == 10 { out.append(0x2D) } // "-"
            out.append(s)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The sequence number of an id made by `make`, nil for anything else.
    static func parse(_ uid: String) -> UInt64? {
        let b = Array(uid.utf8)
        guard b.count == 19, b[0] == 0x42, b[1] == 0x4B, b[4] == 0x2D, b[9] == 0x2D, b[14] == 0x2D else { return nil }
        var v: UInt64 = 0
        for (i, c) in b.enumerated() where i >= 2 && i != 4 && i != 9 && i != 14 {
            guard let d = alphabet.firstIndex(of: c) else { return nil }
            if v >> 59 != 0 { return nil }
            v = v << 5 | UInt64(d)
        }
        return v
    }
}
