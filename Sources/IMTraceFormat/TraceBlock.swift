import SimKernel

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
    /// The block is from a format 1 file: its records have no context fields (`RecordContext.legacy`).
    public internal(set) var legacy = false

    init(info: TraceBlockInfo) { self.info = info }

    /// Interned strings defined in this block.
    public var stringCount: Int { strings.count }
    /// The string with trace-wide id `id`, if this block defines it.
    @inlinable public func string(_ id: UInt32) -> String? { strings[id] }
}

extension TraceBlock {
    /// The block's records with trace-wide index below `index`, in order (its payload was
    /// validated when it was loaded).
    func records(before index: UInt64) -> [TraceRecord] {
        var out: [TraceRecord] = []
        var p = 0
        var time: Int64 = 0
        var i = info.firstRecordIndex
        bytes.withUnsafeBytes { raw in
            while p < raw.count && i < index {
                guard let item = try? BlockPayload.next(raw, &p, previousTime: time, headCodes: !legacy) else { return }
                if case let .record(kind, t, body) = item {
                    out.append(TraceRecord(index: i, kind: kind, time: SimTime(nanoseconds: t), block: self, bodyRange: body))
                    time = t
                    i += 1
                }
            }
        }
        return out
    }
}
