import SimKernel

/// One decoded record with its place in the run.
public struct TraceEntry: Sendable {
    /// Trace-wide record index.
    public let index: UInt64
    public let time: SimTime
    public let event: TraceEvent
    /// The kernel event this record belongs to: its own index for a kernel-event record, else
    /// the event being handled when it was written. nil before the first event, or when a
    /// salvaged trace lost the blocks that would tell.
    public let eventIndex: UInt64?
}

/// Reads a trace as decoded events, learning device names and connection owners as it goes.
public final class TraceEventReader {
    public let reader: TraceReader
    public var header: TraceHeader { reader.header }
    /// Server epoch ms at simulated time zero (header option `epochMs`; 0 if absent).
    public let epochMs: Int64
    public private(set) var names = TraceNames()
    /// Index the next kernel-event record will have (nil: unknown after a gap).
    private var nextEvent: UInt64? = 0
    private var currentEvent: UInt64?
    private var lastRecord: UInt64?
    /// The record schema's block state after the last decoded record (format 2 bodies depend on it).
    private var context = RecordContext()
    /// The block `context` belongs to (its number) and the index of the next record it expects.
    private var contextBlock = -1
    private var contextNext: UInt64 = 0

    public convenience init(path: String, salvage: Bool = false) throws(TraceError) {
        self.init(reader: try TraceReader(path: path, mode: salvage ? .salvage : .strict))
    }

    public convenience init(bytes: [UInt8], salvage: Bool = false) throws(TraceError) {
        self.init(reader: try TraceReader(bytes: bytes, mode: salvage ? .salvage : .strict))
    }

    public init(reader: TraceReader) {
        self.reader = reader
        epochMs = reader.header.option("epochMs").flatMap { Int64($0) } ?? 0
    }

    /// The next record, decoded; nil at the end.
    public func next() throws(TraceError) -> TraceEntry? {
        guard let r = try reader.next() else { return nil }
        if r.index != (lastRecord.map { $0 + 1 } ?? 0) {
            nextEvent = nil  // records were lost (salvage): numbering resumes at the next checkpoint
            currentEvent = nil
        }
        lastRecord = r.index
        if r.block.info.number != contextBlock || r.index != contextNext { catchUp(to: r) }
        contextNext = r.index + 1  // also after a record that fails to decode: the next one goes on from here
        let e = try TraceEvent.decode(r, epochMs: epochMs, context: &context)
        names.learn(e)
        switch e {
        case .meta(.checkpoint(let n, _)):
            nextEvent = n
            if n > 0 { currentEvent = n - 1 }
        case .kernel:
            currentEvent = nextEvent
            nextEvent = nextEvent.map { $0 + 1 }
        default:
            break
        }
        return TraceEntry(index: r.index, time: r.time, event: e, eventIndex: currentEvent)
    }

    /// Sets `context` to the state before `r` in its block: fresh at the block's first record,
    /// else (after a seek into the block) by decoding the block's records before `r`.
    /// An earlier record that does not decode was reported when it was read; here it is skipped.
    private func catchUp(to r: TraceRecord) {
        context = RecordContext(legacy: r.block.legacy)
        contextBlock = r.block.info.number
        contextNext = r.block.info.firstRecordIndex
        guard r.index != contextNext else { return }
        for earlier in r.block.records(before: r.index) {
            _ = try? TraceEvent.decode(earlier, epochMs: epochMs, context: &context)
        }
        contextNext = r.index
    }
}
