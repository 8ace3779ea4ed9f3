import SimKernel

/// Parsing of a block's uncompressed payload: a sequence of records and meta records.
///
/// Record: `head uvarint` (kind + 1) · `time code` (delta to the previous record of the block; the
/// first record's delta is from 0) · `body length uvarint` · body.
/// Meta record: `0x00` · `type uvarint` · `length uvarint` · payload; type 1 = string definition
/// (`id uvarint` · UTF-8 bytes to the end of the payload).
enum BlockPayload {
    struct Failure: Error {
        var at: Int
        var reason: String
    }

    /// One step through the payload.
    enum Item {
        case record(kind: UInt16, time: Int64, body: Range<Int>)
        case meta(type: UInt64, payload: Range<Int>)
    }

    /// `headCodes`: format 2 record-head time codes (`TimeCode.readHead`).
    static func next(_ raw: UnsafeRawBufferPointer, _ p: inout Int, previousTime: Int64, headCodes: Bool) throws(Failure) -> Item {
        let at = p
        func varint(_ what: String) throws(Failure) -> UInt64 {
            let start = p
            do { return try Varint.read(raw, &p) } catch {
                throw Failure(at: start, reason: "\(error == .truncated ? "truncated" : "overlong") varint in \(what)")
            }
        }
        let head = try varint("record head")
        if head == 0 {
            let type = try varint("meta record type")
            let lenAt = p
            let len = try varint("meta record length")
            guard len <= UInt64(raw.count - p) else {
                throw Failure(at: lenAt, reason: "meta record length \(len) runs past the payload (\(raw.count - p) left)")
            }
            let start = p
            p += Int(len)
            return .meta(type: type, payload: start..<p)
        }
        guard head - 1 <= UInt64(UInt16.max) else { throw Failure(at: at, reason: "record kind \(head - 1) exceeds 65535") }
        let timeAt = p
        let delta: Int64
        do { delta = headCodes ? try TimeCode.readHead(raw, &p) : try TimeCode.read(raw, &p) } catch {
            throw Failure(at: timeAt, reason: "\(error == .truncated ? "truncated" : "overlong") time code")
        }
        let lenAt = p
        let len = try varint("body length")
        guard len <= UInt64(raw.count - p) else {
            throw Failure(at: lenAt, reason: "body length \(len) runs past the payload (\(raw.count - p) left)")
        }
        let start = p
        p += Int(len)
        return .record(kind: UInt16(head - 1), time: previousTime &+ delta, body: start..<p)
    }

    /// Walks the whole payload once: checks the framing, the record count and the first/last
    /// times against the block header, and collects the string definitions.
    static func validate(_ raw: UnsafeRawBufferPointer, block: TraceBlockInfo, knownStrings: [UInt32: String],
                         acceptUnknownMeta: Bool, headCodes: Bool) throws(Failure) -> [UInt32: String] {
        var p = 0
        var records = 0
        var previous: Int64 = 0
        var table: [UInt32: String] = [:]
        while p < raw.count {
            let at = p
            switch try next(raw, &p, previousTime: previous, headCodes: headCodes) {
            case let .record(_, time, _):
                if records == 0 && time != block.firstTime.nanoseconds {
                    throw Failure(at: at, reason: "first record at \(time) ns, block header says \(block.firstTime.nanoseconds)")
                }
                previous = time
                records += 1
                if records > block.recordCount {
                    throw Failure(at: at, reason: "more records than the block header's \(block.recordCount)")
                }
            case let .meta(type, payload):
                guard type == TraceFormat.metaStringDefinition else {
                    if acceptUnknownMeta { continue }
                    throw Failure(at: at, reason: "unknown meta record type \(type)")
                }
                let sub = UnsafeRawBufferPointer(rebasing: raw[payload])
                var q = 0
                let id: UInt64
                do { id = try Varint.read(sub, &q) } catch { throw Failure(at: payload.lowerBound, reason: "bad string id varint") }
                guard id <= UInt64(UInt32.max) else { throw Failure(at: payload.lowerBound, reason: "string id \(id) too large") }
                guard let text = String(validating: UnsafeRawBufferPointer(rebasing: sub[q...]), as: UTF8.self) else {
                    throw Failure(at: payload.lowerBound + q, reason: "string \(id) is not valid UTF-8")
                }
                if let old = table[UInt32(id)] ?? knownStrings[UInt32(id)], old != text {
                    throw Failure(at: at, reason: "string id \(id) redefined (\"\(old)\" then \"\(text)\")")
                }
                table[UInt32(id)] = text
            }
        }
        guard records == block.recordCount else {
            throw Failure(at: p, reason: "\(records) records, block header says \(block.recordCount)")
        }
        guard previous == block.lastTime.nanoseconds else {
            throw Failure(at: p, reason: "last record at \(previous) ns, block header says \(block.lastTime.nanoseconds)")
        }
        return table
    }
}
