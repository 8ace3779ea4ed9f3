import IMWorld
import SimKernel

/// `imsim trace diff A B`: the first record where two traces differ (compared decoded, so
/// traces written with different block sizes or zstd levels compare equal; checkpoints and the
/// header's build string are ignored), with context on both sides, then the ledger diff.
public struct TraceDiff: Sendable {
    public struct Divergence: Sendable {
        /// Record indexes of the first differing record on each side (nil: that trace ended).
        public var recordA: UInt64?
        public var recordB: UInt64?
        /// Kernel event and time of the first differing record (of A, else B).
        public var eventIndex: UInt64?
        public var time: SimTime?
        /// Identical records before the divergence (show lines).
        public var context: [String]
        /// From the divergence on, up to `context + 1` records of each side.
        public var a: [String]
        public var b: [String]
    }

    /// Run identity that differs (seed, scenario, its digest, keep-content): counts as different.
    public var headerDifferences: [String] = []
    /// Start options that differ (how the run was invoked): reported, not counted.
    public var optionDifferences: [String] = []
    public var divergence: Divergence?
    /// Records compared equal (before the divergence, or all of them).
    public var recordsCompared: UInt64 = 0
    /// Kernel events among them.
    public var eventsCompared: UInt64 = 0
    public var digestA: UInt64?
    public var digestB: UInt64?
    public var ledgerDifferences: [String] = []
    /// Why the ledgers were not compared (one trace has none), if so.
    public var ledgerNote: String?

    public var isIdentical: Bool {
        headerDifferences.isEmpty && divergence == nil && ledgerDifferences.isEmpty && digestA == digestB && ledgerNote == nil
    }

    /// Compares two traces. `openA`/`openB` open a fresh reader (the ledgers are read separately).
    public static func compare(_ openA: () throws(TraceError) -> TraceEventReader,
                               _ openB: () throws(TraceError) -> TraceEventReader,
                               context: Int = 5) throws(TraceError) -> TraceDiff {
        var diff = TraceDiff()
        let a = try openA(), b = try openB()
        (diff.headerDifferences, diff.optionDifferences) = headerDifferences(a.header, b.header)
        diff.digestA = a.reader.footer?.finalDigest
        diff.digestB = b.reader.footer?.finalDigest

        func nextEvent(_ r: TraceEventReader) throws(TraceError) -> TraceEntry? {
            while let e = try r.next() {
                if case .meta(.checkpoint) = e.event { continue }
                return e
            }
            return nil
        }
        var ring: [String] = []
        while true {
            let ea = try nextEvent(a), eb = try nextEvent(b)
            if ea == nil && eb == nil { break }
            if let ea, let eb, ea.time == eb.time, ea.event == eb.event {
                diff.recordsCompared += 1
                if case .kernel = ea.event { diff.eventsCompared += 1 }
                if context > 0 {
                    if ring.count == context { ring.removeFirst() }
                    ring.append("    " + TraceShow.line(ea, names: a.names, epochMs: a.epochMs))
                }
                continue
            }
            var d = Divergence(recordA: ea?.index, recordB: eb?.index, eventIndex: ea?.eventIndex ?? eb?.eventIndex,
                               time: ea?.time ?? eb?.time, context: ring, a: [], b: [])
            func tail(_ first: TraceEntry?, _ r: TraceEventReader, _ mark: String) throws(TraceError) -> [String] {
                guard var e = first else { return ["\(mark)  (end of trace)"] }
                var lines = ["\(mark)>  " + TraceShow.line(e, names: r.names, epochMs: r.epochMs)]
                while lines.count <= context {
                    guard let n = try nextEvent(r) else { lines.append("\(mark)  (end of trace)"); break }
                    e = n
                    lines.append("\(mark)   " + TraceShow.line(e, names: r.names, epochMs: r.epochMs))
                }
                return lines
            }
            d.a = try tail(ea, a, "A")
            d.b = try tail(eb, b, "B")
            diff.divergence = d
            break
        }

        // Ledgers: what users saw differently.
        let la: TraceLedgerView.Found?, lb: TraceLedgerView.Found?
        do { la = try TraceLedgerView.read(try openA().reader) } catch { la = nil; diff.ledgerNote = "A: \(error)" }
        do { lb = try TraceLedgerView.read(try openB().reader) } catch {
            lb = nil
            diff.ledgerNote = (diff.ledgerNote.map { $0 + "; " } ?? "") + "B: \(error)"
        }
        if let la, let lb {
            diff.ledgerDifferences = la.ledger.diff(against: lb.ledger)
            // Seeds and scenario names are header facts, already compared there.
            diff.ledgerNote = nil
        } else if la == nil && lb == nil, diff.divergence == nil {
            // Neither has a ledger (e.g. both killed at the same point): nothing to compare.
            diff.ledgerNote = nil
        }
        return diff
    }

    static func headerDifferences(_ a: TraceHeader, _ b: TraceHeader) -> (identity: [String], options: [String]) {
        var out: [String] = []
        var opts: [String] = []
        if a.seed != b.seed { out.append("seed \(a.seed) vs \(b.seed)") }
        if a.scenarioName != b.scenarioName { out.append("scenario \(a.scenarioName) vs \(b.scenarioName)") }
        if a.scenarioDigest != b.scenarioDigest {
            out.append("scenario digest \(TraceText.hex(a.scenarioDigest)) vs \(TraceText.hex(b.scenarioDigest))")
        }
        if a.keepContent != b.keepContent { out.append("keep-content \(a.keepContent) vs \(b.keepContent)") }
        let keys = Set(a.options.map(\.key)).union(b.options.map(\.key)).sorted()
        for k in keys where a.option(k) != b.option(k) {
            opts.append("\(k): \(a.option(k) ?? "(none)") vs \(b.option(k) ?? "(none)")")
        }
        return (out, opts)
    }

    /// The report `imsim trace diff` prints.
    public func text(labelA: String, labelB: String) -> String {
        var lines: [String] = []
        lines.append("A: \(labelA)")
        lines.append("B: \(labelB)")
        if !headerDifferences.isEmpty {
            lines.append("headers differ:")
            for h in headerDifferences { lines.append("  \(h)") }
        }
        if !optionDifferences.isEmpty {
            lines.append("start options differ (not compared):")
            for h in optionDifferences { lines.append("  \(h)") }
        }
        if let d = divergence {
            var where_ = "first difference"
            if let ra = d.recordA { where_ += " at record \(ra) of A" }
            if let rb = d.recordB { where_ += d.recordA == nil ? " at record \(rb) of B" : (rb == d.recordA ? "" : " (\(rb) of B)") }
            if let ev = d.eventIndex { where_ += ", event \(ev)" }
            if let t = d.time { where_ += ", t=\(TraceText.seconds(t.nanoseconds, digits: 9))s" }
            lines.append(where_ + " (after \(recordsCompared) identical records, \(eventsCompared) events):")
            lines.append("    " + TraceShow.columnHeader)
            lines += d.context
            lines += d.a
            lines += d.b
        } else {
            lines.append("records: identical (\(recordsCompared) records, \(eventsCompared) events)")
        }
        switch (digestA, digestB) {
        case let (x?, y?) where x == y: lines.append("final digest: \(TraceText.hex(x)) (both)")
        case let (x, y): lines.append("final digest: \(x.map(TraceText.hex) ?? "unknown") vs \(y.map(TraceText.hex) ?? "unknown")")
        }
        if let note = ledgerNote {
            lines.append("ledger: not compared: \(note)")
        } else if ledgerDifferences.isEmpty {
            lines.append("ledger: identical (what every user saw is the same)")
        } else {
            lines.append("ledger: \(ledgerDifferences.count) difference(s) in what users saw:")
            for l in ledgerDifferences { lines.append("  \(l)") }
        }
        return lines.joined(separator: "\n")
    }
}
