import IMClient
import IMServer
import IMWire
import IMWorldValues
import SimKernel

/// One decoded trace record: what the recorder writes and the views read. Every case maps to one
/// record kind (`kind`); Docs/trace-format.md ("Record schema") lists the kinds and their bodies.
public enum TraceEvent: Equatable, Sendable {
    /// A dispatched kernel event.
    case kernel(KernelRecord)
    /// A world-level fact.
    case world(WorldNoteRecord)
    /// An input to device `device`'s client core.
    case clientInput(device: Int, ClientInputRecord)
    /// An effect of device `device`'s client core (connection, bytes, timers).
    case clientEffect(device: Int, ClientEffectRecord)
    /// A callback to device `device`'s app.
    case callback(device: Int, CallbackRecord)
    /// A fact device `device`'s client core reported.
    case clientNote(device: Int, ClientNoteRecord)
    case serverInput(ServerInputRecord)
    case serverEffect(ServerEffectRecord)
    case serverEvent(ServerEventRecord)
    case meta(MetaRecord)
    /// A record of a kind this build does not know (a newer writer): skipped by its length.
    case unknown(kind: UInt16, body: [UInt8])

    public var kind: UInt16 {
        switch self {
        case .kernel(let r): r.kind
        case .world(let r): r.kind
        case .clientInput(_, let r): r.kind
        case .clientEffect(_, let r): r.kind
        case .callback(_, let r): r.kind
        case .clientNote(_, let r): r.kind
        case .serverInput(let r): r.kind
        case .serverEffect(let r): r.kind
        case .serverEvent(let r): r.kind
        case .meta(let r): r.kind
        case .unknown(let k, _): k
        }
    }

    /// Kind and level in one switch (the recorder's hot path).
    @inlinable var head: (kind: UInt16, level: TraceLevel) {
        switch self {
        case .kernel(let r): (r.kind, .events)
        case .world(let r): (r.kind, .events)
        case .meta(let r): (r.kind, .events)
        case .unknown(let k, _): (k, .events)
        case .callback(_, let r): (r.kind, .outcomes)
        case .clientNote(_, let r): (r.kind, .outcomes)
        case .serverEvent(let r): (r.kind, .outcomes)
        case .clientInput(_, let r):
            (r.kind, r.isAPICall || r.inputKind == .wallClock ? .outcomes : .full)
        case .serverInput(let r): (r.kind, r.isAPICall ? .outcomes : .full)
        case .clientEffect(_, let r): (r.kind, .full)
        case .serverEffect(let r): (r.kind, .full)
        }
    }

    /// The least `--trace-level` that records this event.
    public var level: TraceLevel {
        switch self {
        case .kernel, .world, .meta, .unknown: .events
        case .callback, .clientNote, .serverEvent: .outcomes
        case .clientInput(_, let r): r.isAPICall || r.inputKind == .wallClock ? .outcomes : .full
        case .serverInput(let r): r.isAPICall ? .outcomes : .full
        case .clientEffect, .serverEffect: .full
        }
    }

    /// Writes the body (the kind and time go in the record head).
    public func encode(into e: inout RecordEncoder, epochMs epoch: Int64) {
        switch self {
        case .kernel(let r): r.encode(into: &e)
        case .world(let r): r.encode(into: &e)
        case .clientInput(let d, let r): e.device(d); r.encode(into: &e, epoch: epoch)
        case .clientEffect(let d, let r): Self.encode(device: d, r, into: &e)
        case .callback(let d, let r): Self.encode(device: d, r, into: &e, epoch: epoch)
        case .clientNote(let d, let r): Self.encode(device: d, r, into: &e, epoch: epoch)
        case .serverInput(let r): r.encode(into: &e)
        case .serverEffect(let r): r.encode(into: &e)
        case .serverEvent(let r): r.encode(into: &e, epoch: epoch)
        case .meta(let r): r.encode(into: &e)
        case .unknown(_, let body): e.raw(body)
        }
    }

    // Device-scoped bodies: the device index, then the record's fields. The recorder's typed
    // paths (which skip building a `TraceEvent`) write through these same functions.
    static func encode(device d: Int, _ r: ClientEffectRecord, into e: inout RecordEncoder) {
        e.device(d); r.encode(into: &e)
    }
    static func encode(device d: Int, _ r: CallbackRecord, into e: inout RecordEncoder, epoch: Int64) {
        e.device(d); r.encode(into: &e, epoch: epoch)
    }
    static func encode(device d: Int, _ r: ClientNoteRecord, into e: inout RecordEncoder, epoch: Int64) {
        e.device(d); r.encode(into: &e, epoch: epoch)
    }

    /// Decodes a record's body, checking that it holds exactly the kind's fields. Unknown kinds
    /// decode to `.unknown` (the versioning policy: old readers skip new kinds).
    ///
    /// Format 2 bodies depend on the records before them in the block (`RecordContext`): this
    /// form starts from a fresh context, which suits a block's first record and meta records;
    /// `TraceEventReader` carries the context through a block.
    public static func decode(_ r: TraceRecord, epochMs epoch: Int64) throws(TraceError) -> TraceEvent {
        var context = RecordContext(legacy: r.block.legacy)
        return try decode(r, epochMs: epoch, context: &context)
    }

    /// Decodes a record's body from `context`, the block's state after the records before it,
    /// and leaves there the state after it.
    public static func decode(_ r: TraceRecord, epochMs epoch: Int64, context: inout RecordContext) throws(TraceError) -> TraceEvent {
        try r.decode(context: &context) { (d) throws(RecordDecodeError) -> TraceEvent in
            let e = try decodeBody(kind: r.kind, &d, epoch: epoch)
            try d.expectEnd()
            return e
        }
    }

    static func decodeBody(kind k: UInt16, _ d: inout RecordDecoder, epoch: Int64) throws(RecordDecodeError) -> TraceEvent {
        // A family's kinds are the stable codes declared next to its core type (`WorldEventKind`,
        // `ClientInput.TraceKind`, …); device-scoped bodies start with the device index.
        if let kind = WorldEventKind(rawValue: k) { return .kernel(try KernelRecord.decode(kind: kind, &d)) }
        if let kind = ClientInput.TraceKind(rawValue: k) {
            let dev = try d.device()
            return .clientInput(device: dev, try ClientInputRecord.decode(kind: kind, &d, epoch: epoch))
        }
        if let kind = ClientEffect.TraceKind(rawValue: k) {
            let dev = try d.device()
            return .clientEffect(device: dev, try ClientEffectRecord.decode(kind: kind, &d))
        }
        if let kind = AppCallback.TraceKind(rawValue: k) {
            let dev = try d.device()
            return .callback(device: dev, try CallbackRecord.decode(kind: kind, &d, epoch: epoch))
        }
        if let kind = ClientNote.TraceKind(rawValue: k) {
            let dev = try d.device()
            return .clientNote(device: dev, try ClientNoteRecord.decode(kind: kind, &d, epoch: epoch))
        }
        if let kind = ServerInput.TraceKind(rawValue: k) { return .serverInput(try ServerInputRecord.decode(kind: kind, &d)) }
        if let kind = ServerEffect.TraceKind(rawValue: k) { return .serverEffect(try ServerEffectRecord.decode(kind: kind, &d)) }
        if let kind = ServerEvent.TraceKind(rawValue: k) { return .serverEvent(try ServerEventRecord.decode(kind: kind, &d, epoch: epoch)) }
        if let kind = WorldNoteKind(rawValue: k) { return .world(try WorldNoteRecord.decode(kind: kind, &d)) }
        let start = d.mark()
        if let r = try MetaRecord.decode(kind: k, &d) { return .meta(r) }
        d.rewind(to: start)
        return .unknown(kind: k, body: Array(d.rest()))
    }
}

/// How much a recorder writes (`imsim run --trace-level N`). Each level includes the ones below.
public enum TraceLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Kernel events, world notes, oracle verdicts, the ledger: enough to find the first
    /// divergence of two runs and to see faults.
    case events = 1
    /// + app callbacks, client notes, server events, API calls (user actions), device clocks:
    /// what users saw and why; message flows.
    case outcomes = 2
    /// + every core input and effect: bytes in and out with their frames, timers set, cancelled
    /// and fired, connections opened and closed. The default.
    case full = 3

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String {
        switch self {
        case .events: "1 (events)"
        case .outcomes: "2 (outcomes)"
        case .full: "3 (full)"
        }
    }
}
