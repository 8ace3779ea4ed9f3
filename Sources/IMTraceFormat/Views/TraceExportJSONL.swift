import IMWire

/// `imsim trace export --format jsonl`: one JSON object per record, for jq.
///
/// `{"record":4711,"event":1203,"ns":41250123000,"time":"41.250123","kind":"cb.received",
///   "actor":"alice-phone", …the kind's fields…}` — `event` is null before the first kernel event.
public enum TraceExportJSONL {
    public static func line(_ entry: TraceEntry, names: TraceNames) -> String {
        var out = "{\"record\":\(entry.index),\"event\":"
        out += entry.eventIndex.map { String($0) } ?? "null"
        out += ",\"ns\":\(entry.time.nanoseconds),\"time\":\"\(TraceText.seconds(entry.time.nanoseconds))\",\"kind\":"
        JSONText.string(entry.event.kindName, into: &out)
        out += ",\"actor\":"
        JSONText.string(entry.event.actor.name(names), into: &out)
        entry.event.fields(names).jsonMembers(into: &out, leadingComma: true)
        out += "}"
        return out
    }

    /// Writes every record that passes `filter`; returns how many.
    @discardableResult
    public static func run(_ reader: TraceEventReader, filter: inout TraceFilterState, to out: TextOutput) throws(TraceError) -> Int {
        var n = 0
        while let e = try reader.next() {
            if let to = filter.filter.to, e.time > to { break }
            guard try filter.matches(e, reader.names) else { continue }
            out.writeLine(line(e, names: reader.names))
            n += 1
        }
        return n
    }
}
