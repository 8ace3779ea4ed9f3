/// Rebuilds the block list of a trace whose footer is missing or damaged, by walking block
/// headers from the end of the file header.
///
/// - A block header with a valid checksum is trusted: its length says where the next block
///   starts, even if its payload later turns out damaged.
/// - A damaged block header (bad magic or checksum) loses the length, so the scanner searches
///   forward byte by byte for the next "IMTB" whose 56-byte header checksums (a false match
///   needs a 2^-32 coincidence on top of the magic), and reports the bytes in between.
/// - A block that runs past the end of the file is the torn tail of a killed run.
/// - "IMTF" where a block should start is the footer; a valid one ends the scan.
struct BlockScanner {
    let source: TraceSource
    let start: Int
    let end: Int
    let minor: UInt16

    struct Result {
        var blocks: [TraceBlockInfo] = []
        var damage: [TraceDamage] = []
        var footer: TraceFooter?
    }

    func scan() throws(TraceError) -> Result {
        var r = Result()
        var pos = start
        var lastNumber = -1
        var nextIndex: UInt64 = 0
        var buf: [UInt8] = []
        while pos < end {
            let available = end - pos
            try source.read(at: pos, count: min(available, TraceFormat.blockHeaderSize), into: &buf)
            if buf.starts(with: TraceFormat.footerMagic) {
                switch try TraceFooter.parse(source: source, at: pos, length: nil, headerEnd: start, minor: minor) {
                case .success(let f):
                    r.footer = f
                    return r
                case .failure(let e):
                    let resume = try findHeader(after: pos)
                    r.damage.append(TraceDamage(offset: pos, length: (resume?.0 ?? end) - pos, error: e))
                    guard let (q, _) = resume else { return r }
                    pos = q
                    continue
                }
            }
            guard available >= TraceFormat.blockHeaderSize else {
                r.damage.append(TraceDamage(offset: pos, length: available,
                                            error: .truncatedBlock(block: nil, offset: pos, needed: TraceFormat.blockHeaderSize, available: available)))
                return r
            }
            let decoded = buf.withUnsafeBytes { BlockHeader.decode($0, offset: pos) }
            switch decoded {
            case .success(let b):
                guard b.number > lastNumber, b.firstRecordIndex >= nextIndex else {
                    // An intact header out of sequence: not part of this trace's block chain.
                    let resume = try findHeader(after: pos)
                    r.damage.append(TraceDamage(offset: pos, length: (resume?.0 ?? end) - pos, block: b.number,
                                                error: .badBlockHeader(block: b.number, offset: pos, reason: "block \(b.number) (records from \(b.firstRecordIndex)) out of sequence after block \(lastNumber)")))
                    guard let (q, _) = resume else { return r }
                    pos = q
                    continue
                }
                if b.endOffset > end {
                    r.damage.append(TraceDamage(offset: pos, length: available, block: b.number,
                                                records: b.firstRecordIndex..<b.endRecordIndex,
                                                error: .truncatedBlock(block: b.number, offset: pos, needed: b.endOffset - pos, available: available)))
                    return r
                }
                r.blocks.append(b)
                lastNumber = b.number
                nextIndex = b.endRecordIndex
                pos = b.endOffset
            case .failure(let f):
                let resume = try findHeader(after: pos)
                let length = (resume?.0 ?? end) - pos
                r.damage.append(TraceDamage(offset: pos, length: length, block: f.number,
                                            error: .badBlockHeader(block: f.number, offset: pos, reason: f.reason + ", skipped \(length) bytes")))
                guard let (q, _) = resume else { return r }
                pos = q
            }
        }
        return r
    }

    /// The next offset after `pos` holding an intact block header, searching in 1 MiB windows.
    func findHeader(after pos: Int) throws(TraceError) -> (Int, TraceBlockInfo)? {
        let h = TraceFormat.blockHeaderSize
        var windowStart = pos + 1
        var window: [UInt8] = []
        let m = TraceFormat.blockMagic
        while end - windowStart >= h {
            let count = min(1 << 20, end - windowStart)
            try source.read(at: windowStart, count: count, into: &window)
            let found: (Int, TraceBlockInfo)? = window.withUnsafeBytes { raw in
                var i = 0
                while i + h <= raw.count {
                    if raw[i] == m[0] && raw[i + 1] == m[1] && raw[i + 2] == m[2] && raw[i + 3] == m[3],
                       case .success(let b) = BlockHeader.decode(UnsafeRawBufferPointer(rebasing: raw[i..<(i + h)]), offset: windowStart + i) {
                        return (windowStart + i, b)
                    }
                    i += 1
                }
                return nil
            }
            if let found { return found }
            windowStart += count - (h - 1)
        }
        return nil
    }
}
