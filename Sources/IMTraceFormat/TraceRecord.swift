import SimKernel

/// One record read from a trace: kind, time, and an undecoded body.
///
/// The record points into its block (one reference, no copy); keeping a record alive keeps that
/// block alive, and the reader then decodes the next block into a fresh buffer.
public struct TraceRecord: Sendable {
    /// Trace-wide index, from 0, in writing order.
    public let index: UInt64
    /// The record kind given to `TraceWriter.append(kind:time:_:)`.
    public let kind: UInt16
    public let time: SimTime
    /// The block holding the record (payload and string table).
    public let block: TraceBlock
    /// Where the body lies in the block's payload.
    public let bodyRange: Range<Int>

    @inlinable init(index: UInt64, kind: UInt16, time: SimTime, block: TraceBlock, bodyRange: Range<Int>) {
        self.index = index
        self.kind = kind
        self.time = time
        self.block = block
        self.bodyRange = bodyRange
    }

    /// The body bytes.
    @inlinable public var body: ArraySlice<UInt8> { block.bytes[bodyRange] }

    /// A decoder positioned at the start of the body, with a fresh (format 2) context: for
    /// records whose fields use none (container tests, meta records).
    @inlinable public var decoder: RecordDecoder {
        RecordDecoder(block: block, body: bodyRange, recordTime: time, record: index, context: RecordContext())
    }

    /// Decodes the body with `decode`, converting its error to `TraceError.record`.
    @inlinable public func decode<T>(_ decode: (inout RecordDecoder) throws(RecordDecodeError) -> T) throws(TraceError) -> T {
        var d = decoder
        do { return try decode(&d) } catch { throw .record(error) }
    }

    /// Decodes the body with `decode` from `context` (the block's state after the records before
    /// this one), leaving in it the state after this record.
    @inlinable public func decode<T>(context: inout RecordContext,
                                     _ decode: (inout RecordDecoder) throws(RecordDecodeError) -> T) throws(TraceError) -> T {
        // Swapped in and out rather than copied: the content table stays uniquely referenced.
        var d = RecordDecoder(block: block, body: bodyRange, recordTime: time, record: index,
                              context: RecordContext(legacy: context.legacy))
        swap(&d.context, &context)
        defer { swap(&d.context, &context) }
        do { return try decode(&d) } catch { throw .record(error) }
    }
}
