/// One damaged region found while salvaging: what was skipped and why.
public struct TraceDamage: Hashable, Sendable, CustomStringConvertible {
    /// File offset where the damage starts.
    public var offset: Int
    /// Bytes skipped, when known.
    public var length: Int?
    /// Block number, when known (from an intact block header or the footer's index).
    public var block: Int?
    /// Record indices lost with it, when known.
    public var records: Range<UInt64>?
    public var error: TraceError

    public init(offset: Int, length: Int? = nil, block: Int? = nil, records: Range<UInt64>? = nil, error: TraceError) {
        self.offset = offset
        self.length = length
        self.block = block
        self.records = records
        self.error = error
    }

    public var description: String {
        var s = "offset \(offset)"
        if let length { s += " (\(length) bytes)" }
        if let block { s += ", block \(block)" }
        if let records { s += ", records \(records.lowerBound)..<\(records.upperBound)" }
        return s + ": \(error)"
    }
}

/// Whether the trace's footer could be used.
public enum TraceFooterStatus: Hashable, Sendable, CustomStringConvertible {
    /// Footer and trailer intact: the trace was finished.
    case present
    /// No trailer: the writer never finished (killed run), or the trailer's magic is damaged.
    case missing
    /// Trailer or footer present but damaged; the block index was rebuilt by scanning.
    case damaged(TraceError)

    public var description: String {
        switch self {
        case .present: "present"
        case .missing: "missing (the writer did not finish)"
        case .damaged(let e): "damaged: \(e)"
        }
    }
}

/// Result of reading every block of a trace (`TraceReader.verify()`).
public struct TraceSalvageReport: Sendable {
    public var footerStatus: TraceFooterStatus
    /// Blocks in the index (footer) or found by the salvage scan.
    public var blocksListed: Int
    /// Blocks that decoded and passed every check.
    public var blocksIntact: Int
    /// Records in the intact blocks.
    public var recordsRecovered: UInt64
    /// Records known to be lost: damaged blocks (including a torn last block whose header
    /// survived) and gaps in the numbering between listed blocks. Records after that in an
    /// unfinished trace are not counted (unknowable).
    public var recordsLost: UInt64
    /// Every damaged region, in file order.
    public var damage: [TraceDamage]

    /// True when the trace is finished and every block is intact.
    public var isIntact: Bool { damage.isEmpty && footerStatus == .present }
}
