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

/// The writer's string table. Ids are dense, in first-use order (deterministic: the table is a
/// `Dictionary` only for lookup, never iterated). `definedIn[id]` is the generation of the last
/// block that carries the string's definition; the current block's generation says whether a
/// definition must be emitted.
@usableFromInline struct StringInterner {
    @usableFromInline var ids: [String: UInt32] = [:]
    @usableFromInline var strings: [String] = []
    @usableFromInline var definedIn: [UInt32] = []
    @usableFromInline var generation: UInt32 = 1

    @inlinable mutating func intern(_ s: String) -> InternedString {
        if let id = ids[s] { return InternedString(id: id, text: strings[Int(id)]) }
        let id = UInt32(strings.count)
        ids[s] = id
        strings.append(s)
        definedIn.append(0)
        return InternedString(id: id, text: s)
    }

    @inlinable func owns(_ s: InternedString) -> Bool {
        Int(s.id) < strings.count && strings[Int(s.id)] == s.text
    }

    /// Starts a new block: every string must be defined again before its first use there.
    mutating func nextBlock() {
        generation &+= 1
        if generation == 0 {
            // After 2^32 blocks the stamps wrap: clear them so no stale stamp matches.
            for i in definedIn.indices { definedIn[i] = 0 }
            generation = 1
        }
    }

    /// Bytes the definitions of `used` not yet in this block would take.
    func pendingDefinitionBytes(_ used: [UInt32]) -> Int {
        var n = 0
        for id in used where definedIn[Int(id)] != generation {
            let len = strings[Int(id)].utf8.count + Varint.length(UInt64(id))
            n += 2 + Varint.length(UInt64(len)) + len
        }
        return n
    }

    /// Appends a string-definition meta record for each id of `used` not yet defined in this block.
    /// Meta record: `0x00 · type (1 = string definition) · length · id varint · UTF-8 bytes`.
    mutating func emitDefinitions(_ used: [UInt32], into out: ByteBuffer) {
        for id in used where definedIn[Int(id)] != generation {
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
