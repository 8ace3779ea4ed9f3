import SimKernel

/// Writes one record's body. A writer hands it to the closure of `TraceWriter.append`; its
/// buffers are reused for every record, so encoding allocates nothing in steady state.
///
/// The body is a plain sequence of fields with no tags: the record's kind says what follows, and
/// `RecordDecoder` reads the same fields in the same order. Use it only inside the closure it is
/// passed to (writes after the closure returns land in a scratch buffer and are lost).
public struct RecordEncoder {
    /// Shared by every copy of the encoder, so a copy can never diverge from what the writer commits.
    @usableFromInline let state: EncoderState
    /// The record's time: `time(_:)` fields are written relative to it.
    @usableFromInline var recordTime = SimTime.zero

    /// `state.body`'s storage (kept alive by `state`): a plain pointer, so a field write is a
    /// capacity check and a store, with no reference counting.
    @usableFromInline let out: UnsafeMutablePointer<ByteStorage>

    init(state: EncoderState) {
        self.state = state
        out = state.body.storage
    }

    @inlinable var bytes: ByteBuffer { state.body }

    /// Bytes written to this body so far.
    @inlinable public var count: Int { bytes.count - state.bodyStart }

    /// Unsigned LEB128 varint (1 byte below 128, at most 10).
    @inlinable @inline(__always) public mutating func uvarint(_ v: UInt64) { out.pointee.appendVarint(v) }
    @inlinable @inline(__always) public mutating func uvarint(_ v: UInt32) { out.pointee.appendVarint(UInt64(v)) }
    @inlinable @inline(__always) public mutating func uvarint(_ v: Int) {
        precondition(v >= 0, "uvarint of a negative Int; use varint")
        out.pointee.appendVarint(UInt64(v))
    }

    /// Signed varint, zigzag-encoded (small magnitudes of either sign are short).
    @inlinable @inline(__always) public mutating func varint(_ v: Int64) { out.pointee.appendVarint(Varint.zigzag(v)) }

    /// 8 bytes little-endian (hashes, digests: values a varint would make longer).
    @inlinable public mutating func fixed64(_ v: UInt64) { out.pointee.appendLittleEndian(v) }
    /// 4 bytes little-endian.
    @inlinable public mutating func fixed32(_ v: UInt32) { out.pointee.appendLittleEndian(v) }

    /// One byte, 0 or 1.
    @inlinable public mutating func bool(_ v: Bool) { out.pointee.append(v ? 1 : 0) }

    /// Length-prefixed bytes.
    @inlinable public mutating func bytes(_ b: UnsafeRawBufferPointer) {
        out.pointee.appendVarint(UInt64(b.count))
        out.pointee.append(b)
    }
    @inlinable public mutating func bytes(_ b: [UInt8]) {
        out.pointee.appendVarint(UInt64(b.count))
        out.pointee.append(b)
    }
    @inlinable public mutating func bytes(_ b: ArraySlice<UInt8>) {
        out.pointee.appendVarint(UInt64(b.count))
        out.pointee.append(b)
    }

    /// Bytes as-is, without length (a pre-encoded blob whose length the schema knows, or the
    /// rest of the body). Read back with `RecordDecoder.raw(count:)` / `rest()`.
    @inlinable public mutating func raw(_ b: [UInt8]) { out.pointee.append(b) }
    @inlinable public mutating func raw(_ b: UnsafeRawBufferPointer) { out.pointee.append(b) }

    /// Length-prefixed UTF-8, *not* interned: for one-off text such as message content kept
    /// with `--keep-content`. Use `string(_:)` for anything that repeats.
    @inlinable public mutating func utf8(_ s: String) {
        var s = s
        s.withUTF8 { u in
            out.pointee.appendVarint(UInt64(u.count))
            out.pointee.append(UnsafeRawBufferPointer(u))
        }
    }

    /// An interned string: the trace-wide id as a varint. The first use in each block also puts
    /// a definition in the block (before this record), so every block decodes on its own.
    /// Costs one dictionary lookup; pre-intern hot strings with `TraceWriter.intern(_:)`.
    @inlinable public mutating func string(_ s: String) {
        let id = state.interner.internID(s)
        state.use(id)
        out.pointee.appendVarint(UInt64(id))
    }

    /// A string interned beforehand with the same writer's `intern(_:)`: no hashing.
    @inlinable public mutating func string(_ s: InternedString) {
        precondition(state.interner.owns(s), "InternedString \(s.id) \"\(s.text)\" was interned by another TraceWriter")
        state.use(s.id)
        out.pointee.appendVarint(UInt64(s.id))
    }

    /// A duration in the compact scaled code (1 byte for whole ms or s up to 15 units).
    @inlinable public mutating func duration(_ d: SimDuration) { out.pointee.appendTimeCode(d.nanoseconds) }

    /// An absolute time, written relative to the record's own time (so a deadline 30 s after the
    /// event costs one byte).
    @inlinable public mutating func time(_ t: SimTime) { out.pointee.appendTimeCode(t.nanoseconds &- recordTime.nanoseconds) }

    // MARK: Context fields (format 2, `RecordContext`)

    /// A device index: `0` when it is the device the block's records named last, else index + 1
    /// (most records of a kernel event name its device: one byte of low entropy instead of two
    /// random ones).
    @inlinable @inline(__always) public mutating func device(_ d: Int) {
        if state.context.legacy {
            uvarint(d)
        } else if d == state.context.device {
            out.pointee.append(0)
        } else {
            precondition(d >= 0, "device index \(d) is negative")
            state.context.device = d
            out.pointee.appendVarint(UInt64(d) &+ 1)
        }
    }

    /// A connection id: `0` when it is the connection the block's records named last, else id + 1.
    @inlinable @inline(__always) public mutating func connection(_ c: UInt64) {
        if state.context.legacy {
            out.pointee.appendVarint(c)
        } else if c == state.context.connection {
            out.pointee.append(0)
        } else {
            state.context.connection = c
            out.pointee.appendVarint(c &+ 1)
        }
    }

    /// A messageUId (interned): zigzag(newest uid id the block referenced − this id). Uids are
    /// interned in first-use order, so a message's records, which follow soon after its first,
    /// cost one byte instead of the id's three.
    @inlinable public mutating func uid(_ s: String) {
        let id = state.interner.internID(s)
        state.use(id)
        uidReference(id)
    }

    /// An optional messageUId: `0` for nil, else the `uid` code + 1.
    @inlinable public mutating func optionalUID(_ s: String?) {
        guard let s else { out.pointee.append(0); return }
        let id = state.interner.internID(s)
        state.use(id)
        if state.context.legacy { out.pointee.appendVarint(UInt64(id) &+ 1); return }
        let base = state.context.uidBase
        out.pointee.appendVarint(Varint.zigzag(Int64(base) &- Int64(id)) &+ 1)
        if id > base { state.context.uidBase = id }
    }

    @inlinable @inline(__always) mutating func uidReference(_ id: UInt32) {
        if state.context.legacy { out.pointee.appendVarint(UInt64(id)); return }
        let base = state.context.uidBase
        out.pointee.appendVarint(Varint.zigzag(Int64(base) &- Int64(id)))
        if id > base { state.context.uidBase = id }
    }

    /// The interned id of a messageUId, marked used by this record (its definition goes before
    /// the record), without writing it.
    @inlinable mutating func internUID(_ s: String) -> UInt32 {
        let id = state.interner.internID(s)
        state.use(id)
        return id
    }

    /// The content digest the block last wrote for the message with uid `id` (never in format 1).
    @inlinable func blockContent(ofUID id: UInt32) -> ContentDigest? {
        state.context.legacy ? nil : state.context.contents[id]
    }

    /// Notes the content digest written for the message with uid `id`.
    @inlinable mutating func noteContent(_ c: ContentDigest, ofUID id: UInt32) {
        if !state.context.legacy { state.context.contents[id] = c }
    }
}

/// The writer's encoding state: the buffer bodies are written into (the writer's block: a body
/// is encoded in place, after its record head), the string table, and the strings the current
/// record uses (their definitions go before the record).
@usableFromInline final class EncoderState {
    @usableFromInline let body: ByteBuffer
    /// Where the current record's body starts in `body`.
    @exclusivity(unchecked) @usableFromInline var bodyStart = 0
    @exclusivity(unchecked) @usableFromInline var usedStrings = IDList()
    /// Some string of the current record has no definition in this block yet (most records
    /// use only strings the block already defines: `commit` then skips the definitions).
    @exclusivity(unchecked) @usableFromInline var needsDefinitions = false
    @exclusivity(unchecked) @usableFromInline var interner = StringInterner()
    /// The record schema's block state (device, connection, uid base, contents by uid).
    @exclusivity(unchecked) @usableFromInline var context = RecordContext()

    init(body: ByteBuffer, formatMajor: UInt16) {
        self.body = body
        context = RecordContext(legacy: formatMajor == 1)
        // Room for a block's messages from the start (resets keep it): grown from empty, the
        // first block's rehashing was ~3% of a short run's recording.
        if formatMajor != 1 { context.contents.reserveCapacity(1024) }
    }

    deinit { usedStrings.deallocate() }

    @inline(__always) func begin(at start: Int) {
        bodyStart = start
        usedStrings.count = 0
        needsDefinitions = false
    }

    /// The current record writes string `id`.
    @inlinable @inline(__always) func use(_ id: UInt32) {
        usedStrings.append(id)
        let stamp = interner.definedIn[Int(id)]
        if stamp != interner.generation && stamp != StringInterner.everyBlock { needsDefinitions = true }
    }

    /// Appends the definitions this record needs to `out`.
    func emitDefinitions(into out: ByteBuffer) {
        if !usedStrings.isEmpty { interner.emitDefinitions(usedStrings.ids, into: out) }
    }

    func pendingDefinitionBytes() -> Int {
        usedStrings.isEmpty ? 0 : interner.pendingDefinitionBytes(usedStrings.ids)
    }
}

/// The string ids a record uses, emptied by resetting a count. A plain buffer: an `Array` write
/// checked its uniqueness (~25 instructions) on every string a record writes.
@usableFromInline struct IDList {
    @usableFromInline var base: UnsafeMutablePointer<UInt32>
    @usableFromInline var capacity: Int
    @usableFromInline var count = 0

    init(capacity: Int = 16) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    @inlinable var isEmpty: Bool { count == 0 }
    @inlinable var ids: UnsafeBufferPointer<UInt32> { UnsafeBufferPointer(start: base, count: count) }

    @inlinable @inline(__always) mutating func append(_ id: UInt32) {
        if count == capacity { grow() }
        base[count] = id
        count &+= 1
    }

    @inlinable @inline(never) mutating func grow() {
        let bigger = UnsafeMutablePointer<UInt32>.allocate(capacity: capacity * 2)
        bigger.initialize(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity *= 2
    }

    func deallocate() { base.deallocate() }
}
