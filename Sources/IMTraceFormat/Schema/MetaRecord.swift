import IMWire
import IMWorldValues
import SimKernel

/// Records about the run and the trace itself rather than one event. Kinds 192–196.
public enum MetaRecord: Equatable, Sendable {
    /// Written as the first record of (almost) every block: the index of the next kernel event
    /// and the run's determinism digest so far. Lets a view number kernel events in a block read
    /// on its own (seek, salvage).
    case checkpoint(nextEvent: UInt64, digest: UInt64)
    /// One per device, at the start: index → ids.
    case device(index: Int, deviceId: String, userId: String, platform: Platform, userIndex: Int)
    /// An oracle verdict.
    indirect case violation(Violation)
    /// The run's ledger as compact JSON, in parts of at most `TraceRecorderOptions.ledgerPartBytes`.
    case ledger(part: Int, parts: Int, json: [UInt8])
    /// The last record: why the run stopped, kernel events dispatched, whether it ran to the
    /// end of the liveness phase, the final digest.
    case runEnd(stopReason: String, events: UInt64, complete: Bool, digest: UInt64)

    public var kind: UInt16 {
        switch self {
        case .checkpoint: 192
        case .device: 193
        case .violation: 194
        case .ledger: 195
        case .runEnd: 196
        }
    }

    func encode(into e: inout RecordEncoder) {
        switch self {
        case .checkpoint(let n, let d): e.uvarint(n); e.fixed64(d)
        case .device(let i, let id, let u, let p, let ui): e.uvarint(i); e.string(id); e.string(u); e.string(p.rawValue); e.uvarint(ui)
        case .violation(let v):
            e.string(v.oracle)
            e.uvarint(v.eventIndex)
            e.utf8(v.time)
            e.varint(v.timeNanoseconds)
            e.optionalString(v.device)
            e.optionalString(v.conversation)
            e.optionalString(v.messageUId)
            e.utf8(v.detail)
            e.uvarint(v.path.count)
            for p in v.path { e.utf8(p) }
            e.utf8(v.repro)
        case .ledger(let part, let parts, let json): e.uvarint(part); e.uvarint(parts); e.bytes(json)
        case .runEnd(let r, let n, let c, let d): e.utf8(r); e.uvarint(n); e.bool(c); e.fixed64(d)
        }
    }

    static func decode(kind: UInt16, _ d: inout RecordDecoder) throws(RecordDecodeError) -> MetaRecord? {
        switch kind {
        case 192: return .checkpoint(nextEvent: try d.uvarint(), digest: try d.fixed64())
        case 193:
            return .device(index: try d.uvarintInt(), deviceId: try d.string(), userId: try d.string(),
                           platform: try d.rawEnum(Platform.self, "platform"), userIndex: try d.uvarintInt())
        case 194:
            let oracle = try d.string()
            let index = try d.uvarint()
            let time = try d.utf8()
            let ns = try d.varint()
            let device = try d.optionalString()
            let conv = try d.optionalString()
            let uid = try d.optionalString()
            let detail = try d.utf8()
            let n = try d.count("path count")
            var path: [String] = []
            for _ in 0..<n { path.append(try d.utf8()) }
            let repro = try d.utf8()
            return .violation(Violation(oracle: oracle, eventIndex: index, time: time, timeNanoseconds: ns, device: device,
                                        conversation: conv, messageUId: uid, detail: detail, path: path, repro: repro))
        case 195: return .ledger(part: try d.uvarintInt(), parts: try d.uvarintInt(), json: Array(try d.bytes()))
        case 196: return .runEnd(stopReason: try d.utf8(), events: try d.uvarint(), complete: try d.bool(), digest: try d.fixed64())
        default: return nil
        }
    }
}
