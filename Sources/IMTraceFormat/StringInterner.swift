import IMWire

/// A string interned by a `TraceWriter`: a trace-wide small id plus the text. Writing it costs
/// the id's varint; the writer re-emits the definition once per block that uses it.
public struct InternedString: Hashable, Sendable {
    public let id: UInt32
    public let text: String

    @usableFromInline init(id: UInt32, text: String) {
        self.id = id
        self.text = text
    }
}

/// The writer's string table. Ids are dense, in first-use order. Lookup is an open-addressing
/// table of ids keyed by a 64-bit hash of the UTF-8 bytes: the recorder interns ~1 string per
/// record, and `Dictionary<String, _>` spent most of that on `Hasher` (SipHash, seeded per
/// process) — here the hash is a fixed multiply-xor over 8-byte words, and the table is never
/// iterated, so nothing depends on its layout. `definedIn[id]` is the generation of the last
/// block that carries the string's definition; the current block's generation says whether a
/// definition must be emitted.
@usableFromInline struct StringInterner {
    @usableFromInline var strings: [String] = []
    /// Hash of `strings[id]`: a probe compares strings only when the hashes match.
    @usableFromInline var hashes: [UInt64] = []
    /// Power-of-two table of `id + 1` (0 = empty slot), at most half full.
    @usableFromInline var slots: [UInt32] = Array(repeating: 0, count: 256)
    @usableFromInline var definedIn: [UInt32] = []
    @usableFromInline var generation: UInt32 = 1
    /// `definedIn` stamp of a string the file header defines for every block (never emitted).
    @usableFromInline static let everyBlock = UInt32.max
    /// Identity cache in front of the table (see `internID`): most strings a recorder writes are the
    /// same few thousand `String` values again and again (ids, topics, the uids of messages in
    /// flight), so their 16 bytes of representation find the id without hashing the text.
    @usableFromInline var cacheKeys = [CacheKey](repeating: CacheKey.empty, count: StringInterner.cacheSize)
    /// The strings whose representation is in `cacheKeys`, kept alive so that no other string
    /// can take over their storage (and so their representation) while cached.
    @usableFromInline var cachePins = [String](repeating: "", count: StringInterner.cacheSize)

    @usableFromInline static let cacheSize = 2048

    @usableFromInline struct CacheKey: Sendable {
        @usableFromInline var word0: UInt64
        @usableFromInline var word1: UInt64
        @usableFromInline var id: UInt32
        /// No `String` has this representation (its count would not fit in memory).
        @usableFromInline static let empty = CacheKey(word0: .max, word1: .max, id: 0)
        @usableFromInline init(word0: UInt64, word1: UInt64, id: UInt32) {
            self.word0 = word0
            self.word1 = word1
            self.id = id
        }
    }

    @inlinable mutating func intern(_ s: String) -> InternedString {
        let id = internID(s)
        return InternedString(id: id, text: strings[Int(id)])
    }

    /// The id of `s`, interning it if new.
    ///
    /// First the identity cache: a `String` is 16 bytes — a small string's are its UTF-8 bytes
    /// themselves, a large one's its count, flags and the address of its immutable storage. So
    /// two strings with the same 16 bytes have the same text while the first is alive (the cache
    /// pins it). Equal texts with different storage just miss and take the hashed path.
    @inlinable mutating func internID(_ s: String) -> UInt32 {
        guard MemoryLayout<String>.size == 16 else { return internByText(s) }
        let words = unsafeBitCast(s, to: (UInt64, UInt64).self)
        let mixed = (words.0 &* 0x9E37_79B9_7F4A_7C15 ^ words.1) &* 0xC2B2_AE3D_27D4_EB4F
        let slot = Int(truncatingIfNeeded: mixed >> 53) & (Self.cacheSize - 1)
        let key = cacheKeys[slot]
        if key.word0 == words.0 && key.word1 == words.1 { return key.id }
        let id = internByText(s)
        cacheKeys[slot] = CacheKey(word0: words.0, word1: words.1, id: id)
        cachePins[slot] = s
        return id
    }

    /// The id of `s` by its text (hash table), interning it if new.
    @inlinable mutating func internByText(_ s: String) -> UInt32 {
        let h = Self.hash(s)
        let mask = slots.count &- 1
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let slot = slots[i]
            if slot == 0 { break }
            let id = Int(slot &- 1)
            if hashes[id] == h && strings[id] == s { return UInt32(id) }
            i = (i &+ 1) & mask
        }
        let id = UInt32(strings.count)
        strings.append(s)
        hashes.append(h)
        definedIn.append(0)
        slots[i] = id &+ 1
        if strings.count * 2 > slots.count { rehash() }
        return id
    }

    @usableFromInline mutating func rehash() {
        let size = slots.count * 2
        let mask = size - 1
        var table = [UInt32](repeating: 0, count: size)
        for id in hashes.indices {
            var i = Int(truncatingIfNeeded: hashes[id]) & mask
            while table[i] != 0 { i = (i + 1) & mask }
            table[i] = UInt32(id + 1)
        }
        slots = table
    }

    /// A fixed (unseeded) hash of the UTF-8 bytes, 8 bytes per step, finished with a
    /// murmur3-style avalanche so the low bits index the table well.
    @inlinable static func hash(_ s: String) -> UInt64 {
        if let h = s.utf8.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) { return h }
        var copy = s
        return copy.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    @inlinable static func hash(_ u: UnsafeRawBufferPointer) -> UInt64 {
        let k: UInt64 = 0x9E37_79B9_7F4A_7C15
        var h = UInt64(truncatingIfNeeded: u.count) &* k
        var p = 0
        let n = u.count
        while p &+ 8 <= n {
            let w = u.loadUnaligned(fromByteOffset: p, as: UInt64.self)
            h = (h ^ w) &* k
            h ^= h >> 29
            p &+= 8
        }
        if p < n {
            var w: UInt64 = 0
            var shift: UInt64 = 0
            while p < n {
                w |= UInt64(u[p]) << shift
                shift &+= 8
                p &+= 1
            }
            h = (h ^ w) &* k
        }
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        return h
    }

    @inlinable func owns(_ s: InternedString) -> Bool {
        Int(s.id) < strings.count && strings[Int(s.id)] == s.text
    }

    /// Interns `s` as a string the file header defines for every block; returns its id.
    mutating func predefine(_ s: String) -> UInt32 {
        let id = internID(s)
        definedIn[Int(id)] = Self.everyBlock
        return id
    }

    /// Starts a new block: every string must be defined again before its first use there.
    mutating func nextBlock() {
        generation &+= 1
        if generation == Self.everyBlock {
            // After 2^32 blocks the stamps wrap: clear them so no stale stamp matches.
            for i in definedIn.indices where definedIn[i] != Self.everyBlock { definedIn[i] = 0 }
            generation = 1
        }
    }

    /// Bytes the definitions of `used` not yet in this block would take.
    func pendingDefinitionBytes(_ used: UnsafeBufferPointer<UInt32>) -> Int {
        var n = 0
        for id in used where definedIn[Int(id)] != generation && definedIn[Int(id)] != Self.everyBlock {
            let len = strings[Int(id)].utf8.count + Varint.length(UInt64(id))
            n += 2 + Varint.length(UInt64(len)) + len
        }
        return n
    }

    /// Appends a string-definition meta record for each id of `used` not yet defined in this block.
    /// Meta record: `0x00 · type (1 = string definition) · length · id varint · UTF-8 bytes`.
    mutating func emitDefinitions(_ used: UnsafeBufferPointer<UInt32>, into out: ByteBuffer) {
        for id in used where definedIn[Int(id)] != generation && definedIn[Int(id)] != Self.everyBlock {
            definedIn[Int(id)] = generation
            var s = strings[Int(id)]
            s.withUTF8 { u in
                out.append(0)
                out.appendVarint(TraceFormat.metaStringDefinition)
                out.appendVarint(UInt64(Varint.length(UInt64(id)) + u.count))
                out.appendVarint(UInt64(id))
                out.append(UnsafeRawBufferPointer(u))
            }
        }
    }
}
