import SimKernel

/// `imsim trace show`: one line per record, aligned columns.
///
/// ```
///   record  event      time (s)  actor               kind                    details
///     4711   1203     41.250123  alice-phone         cb.received             messageId=12 uid=BK00-…
/// ```
/// `event` is the kernel event the record belongs to (the one being handled when it was written).
public enum TraceShow {
    public static let widths = (record: 8, event: 7, time: 13, actor: 18, kind: 24)

    public static var columnHeader: String {
        TraceText.padLeft("record", widths.record) + " " + TraceText.padLeft("event", widths.event) + " "
            + TraceText.padLeft("time (s)", widths.time) + "  " + TraceText.pad("actor", widths.actor) + "  "
            + TraceText.pad("kind", widths.kind) + "  details"
    }

    public static func line(_ entry: TraceEntry, names: TraceNames, epochMs: Int64) -> String {
        let ev = entry.eventIndex.map { String($0) } ?? "-"
        return TraceText.padLeft(String(entry.index), widths.record) + " " + TraceText.padLeft(ev, widths.event) + " "
            + TraceText.padLeft(TraceText.seconds(entry.time.nanoseconds), widths.time) + "  "
            + TraceText.pad(entry.event.actor.name(names), widths.actor) + "  " + TraceText.pad(entry.event.kindName, widths.kind)
            + "  " + entry.event.fields(names).text(epochMs: epochMs)
    }

    /// Streams the lines of `reader` that pass `filter` (at most `limit`) to `emit`. Returns
    /// the number of lines emitted and whether the limit cut the output.
    @discardableResult
    public static func run(_ reader: TraceEventReader, filter: inout TraceFilterState, limit: Int?,
                           emit: (String) -> Void) throws(TraceError) -> (lines: Int, truncated: Bool) {
        var n = 0
        while let e = try reader.next() {
            if let to = filter.filter.to, e.time > to { break }  // records are in time order
            guard try filter.matches(e, reader.names) else { continue }
            if let limit, n >= limit { return (n, true) }
            emit(line(e, names: reader.names, epochMs: reader.epochMs))
            n += 1
        }
        return (n, false)
    }
}
