import IMServer
import IMWire
import SimKernel

/// `imsim trace export --format mermaid`: a Mermaid `sequenceDiagram` of a time window, for
/// docs and bug reports. Participants are the devices that appear plus the server; frames are
/// arrows (device → server solid, server → device dashed) labelled with time, frame type,
/// topic and msgId; what users saw, drops, faults and violations are notes. At most
/// `maxLines` diagram lines; beyond that a note says how many events were left out.
public enum TraceExportMermaid {
    public static let defaultMaxLines = 300

    /// One diagram line, or nil for records the diagram leaves out.
    static func statement(_ e: TraceEntry, names: TraceNames, epochMs: Int64) -> (line: String, devices: [Int])? {
        let t = TraceText.seconds(e.time.nanoseconds, digits: 3) + "s"
        func p(_ d: Int) -> String { "d\(d)" }
        switch e.event {
        case .clientEffect(let d, .send(let b, let frames)):
            return ("\(p(d))->>S: \(t) " + clean(frames.map(\.description).joined(separator: ", ")) + " (\(b.count)B)", [d])
        case .serverEffect(.send(let c, let b, let frames)):
            guard let d = names.deviceOf(connection: c) else { return nil }
            return ("S-->>\(p(d)): \(t) " + clean(frames.map(\.description).joined(separator: ", ")) + " (\(b.count)B)", [d])
        case .callback(let d, .received(let m, let left, let off, _)):
            return ("Note over \(p(d)): \(t) received \(clean(m.conversation.description)) \(m.messageUId ?? "-")"
                    + (off ? " offline" : "") + (left > 0 ? " left=\(left)" : ""), [d])
        case .callback(let d, .sendResult(let id, let uid, _, let err)):
            return ("Note over \(p(d)): \(t) sendResult msg \(id) " + (err.map { "error \($0)" } ?? "ok \(uid ?? "-")"), [d])
        case .callback(let d, .connectionStatus(let s)):
            return ("Note over \(p(d)): \(t) \(s)", [d])
        case .clientNote(let d, .skipped(let uid, _, let why)):
            return ("Note over \(p(d)): \(t) skipped \(uid ?? "-"): \(clean(why))", [d])
        case .serverEvent(.messageAccepted(let m)):
            return ("Note over S: \(t) accepted \(m.messageUId) \(clean(m.conversation.description))", [])
        case .serverEvent(.dropped(let u, _, let user, let why)):
            return ("Note over S: \(t) dropped \(u ?? "-") for \(user ?? "everyone"): \(why.rawValue)", [])
        case .serverEvent(.kicked(_, _, let victim, let by)):
            return ("Note over S: \(t) kicked \(clean(victim)) (by \(clean(by)))", [])
        case .kernel(.faultStart(let f, let d)):
            if let d { return ("Note over \(p(d)): \(t) fault \(f.rawValue)", [d]) }
            return ("Note over S: \(t) fault \(f.rawValue)", [])
        case .world(.lifecycle(let d, let c)):
            return ("Note over \(p(d)): \(t) app \(c.rawValue)", [d])
        case .meta(.violation(let v)):
            return ("Note over S: \(t) VIOLATION \(v.oracle): \(clean(String(v.detail.prefix(120))))", [])
        default:
            return nil
        }
    }

    /// Mermaid treats `;` and `#` specially in messages, and a line break ends a statement.
    static func clean(_ s: String) -> String {
        var out = ""
        for ch in s {
            switch ch {
            case "#": out += "no."
            case ";": out += ","
            case "\n", "\r": out += " "
            default: out.append(ch)
            }
        }
        return out
    }

    /// Writes the diagram; returns (statements written, statements left out).
    @discardableResult
    public static func run(_ reader: TraceEventReader, filter: inout TraceFilterState, maxLines: Int = defaultMaxLines,
                           to out: TextOutput) throws(TraceError) -> (written: Int, omitted: Int) {
        var lines: [String] = []
        var participants: [Int] = []
        var seen: Set<Int> = []
        var omitted = 0
        var firstTime: SimTime?, lastTime: SimTime?
        while let e = try reader.next() {
            if let to = filter.filter.to, e.time > to { break }
            guard try filter.matches(e, reader.names), let s = statement(e, names: reader.names, epochMs: reader.epochMs) else { continue }
            if lines.count >= maxLines { omitted += 1; continue }
            for d in s.devices where seen.insert(d).inserted { participants.append(d) }
            lines.append(s.line)
            if firstTime == nil { firstTime = e.time }
            lastTime = e.time
        }
        out.writeLine("sequenceDiagram")
        let h = reader.header
        out.writeLine("    %% \(clean(h.scenarioName)) seed \(h.seed)"
                      + (firstTime.map { " · \(TraceText.seconds($0.nanoseconds, digits: 3))s" } ?? "")
                      + (lastTime.map { " … \(TraceText.seconds($0.nanoseconds, digits: 3))s" } ?? ""))
        out.writeLine("    participant S as server")
        for d in participants { out.writeLine("    participant d\(d) as \(clean(reader.names.device(d)))") }
        for l in lines { out.writeLine("    " + l) }
        if omitted > 0 {
            out.writeLine("    Note over S: … truncated: \(omitted) more events (narrow with --from/--to or raise --max-lines)")
        }
        return (lines.count, omitted)
    }
}
