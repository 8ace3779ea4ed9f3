/// One loaded block: its uncompressed payload and the interned strings it defines. Records and
/// decoders hold a reference, so a record stays decodable after the reader has moved on.
///
/// `@unchecked Sendable`: the reader refills a `TraceBlock` only while it holds the sole
/// reference (`isKnownUniquelyReferenced`); once a record shares it, it is never mutated again.
public final class TraceBlock: @unchecked Sendable {
    /// The block's index entry.
    public internal(set) var info: TraceBlockInfo
    @exclusivity(unchecked) @usableFromInline var bytes: [UInt8] = []
    @exclusivity(unchecked) @usableFromInline var strings: [UInt32: String] = [:]

    init(info: TraceBlockInfo) { self.info = info }

    /// Interned strings defined in this block.
    public var stringCount: Int { strings.count }
    /// The string with trace-wide id `id`, if this block defines it.
    @inlinable public func string(_ id: UInt32) -> String? { strings[id] }
}
