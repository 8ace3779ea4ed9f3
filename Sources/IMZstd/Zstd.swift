import CZstd

// The one zstd wrapper (issue 29): the trace's one-shot blocks and the capture's stream both go
// through these two contexts. Single-threaded (`nbWorkers = 0`): same input, level and library
// version give the same bytes.

/// What zstd said when it refused something (its error name, or why the frame does not fit).
public struct ZstdError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
    static func code(_ c: Int) -> ZstdError { ZstdError(String(cString: ZSTD_getErrorName(c))) }
}

/// The zstd frame magic number, little-endian on disk.
public let zstdMagic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]

/// One compression context, reused: one-shot frames (`compress(_:into:)`) or one streamed frame
/// (`compressStream(_:end:)`).
public final class ZstdCompressor {
    private let cctx: OpaquePointer
    public let level: Int32
    private var out: [UInt8] = []

    /// The levels zstd accepts.
    public static var levels: ClosedRange<Int32> { ZSTD_minCLevel()...ZSTD_maxCLevel() }

    /// - Parameters:
    ///   - checksum: a content checksum at the end of each frame (a damaged stream is detected).
    ///   - contentSize: the content size in the frame header (one-shot frames).
    public init(level: Int32, checksum: Bool, contentSize: Bool) throws(ZstdError) {
        guard Self.levels.contains(level) else {
            throw ZstdError("compression level \(level) outside \(Self.levels.lowerBound)...\(Self.levels.upperBound)")
        }
        guard let c = ZSTD_createCCtx() else { throw ZstdError("ZSTD_createCCtx failed") }
        cctx = c
        self.level = level
        for (param, value) in [(ZSTD_c_compressionLevel, level), (ZSTD_c_nbWorkers, 0),
                               (ZSTD_c_checksumFlag, checksum ? 1 : 0), (ZSTD_c_contentSizeFlag, contentSize ? 1 : 0)] {
            let r = ZSTD_CCtx_setParameter(cctx, param, value)
            if ZSTD_isError(r) != 0 {
                ZSTD_freeCCtx(cctx)
                throw ZstdError("zstd parameter: \(ZstdError.code(r).message)")
            }
        }
    }

    deinit { ZSTD_freeCCtx(cctx) }

    /// The largest frame `n` bytes can compress to.
    public static func bound(_ n: Int) -> Int { ZSTD_compressBound(n) }

    /// Compresses `src` into one frame in `dst` (capacity at least `bound(src.count)`); returns
    /// the frame size.
    public func compress(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) -> Result<Int, ZstdError> {
        let r = ZSTD_compress2(cctx, dst.baseAddress, dst.count, src.baseAddress, src.count)
        if ZSTD_isError(r) != 0 { return .failure(.code(r)) }
        return .success(r)
    }

    /// Streams `input` into the current frame; with `end` the frame is closed. Returns the
    /// compressed bytes produced.
    public func compressStream(_ input: [UInt8], end: Bool) throws(ZstdError) -> [UInt8] {
        if out.isEmpty { out = [UInt8](repeating: 0, count: ZSTD_CStreamOutSize()) }
        var result: [UInt8] = []
        var failure: Int?
        let outCap = out.count
        input.withUnsafeBytes { src in
            var inBuf = ZSTD_inBuffer(src: src.baseAddress, size: src.count, pos: 0)
            out.withUnsafeMutableBytes { dst in
                while true {
                    var outBuf = ZSTD_outBuffer(dst: dst.baseAddress, size: outCap, pos: 0)
                    let r = ZSTD_compressStream2(cctx, &outBuf, &inBuf, end ? ZSTD_e_end : ZSTD_e_continue)
                    if ZSTD_isError(r) != 0 { failure = r; return }
                    result.append(contentsOf: UnsafeRawBufferPointer(rebasing: dst[0..<outBuf.pos]))
                    // e_continue: done when all input is consumed; e_end: when r == 0 (frame flushed).
                    if end ? r == 0 : inBuf.pos == inBuf.size { return }
                }
            }
        }
        if let f = failure { throw .code(f) }
        return result
    }
}

/// One decompression context, reused: whole frames of a known size (`decompressFrame`) or a
/// stream (`decompressStream`).
public final class ZstdDecompressor {
    private let dctx: OpaquePointer

    /// The recommended input chunk and output buffer sizes of a stream.
    public static var streamInSize: Int { ZSTD_DStreamInSize() }
    public static var streamOutSize: Int { ZSTD_DStreamOutSize() }

    /// - Parameter windowLogMax: refuse frames whose window exceeds 2^windowLogMax bytes
    ///   (bounded memory for streams from outside); nil = zstd's default.
    public init(windowLogMax: Int32? = nil) throws(ZstdError) {
        guard let d = ZSTD_createDCtx() else { throw ZstdError("ZSTD_createDCtx failed") }
        dctx = d
        if let windowLogMax {
            let r = ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, windowLogMax)
            if ZSTD_isError(r) != 0 {
                ZSTD_freeDCtx(dctx)
                throw ZstdError("zstd parameter: \(ZstdError.code(r).message)")
            }
        }
    }

    deinit { ZSTD_freeDCtx(dctx) }

    /// Decompresses exactly one frame that must occupy all of `src` and decode to exactly
    /// `dst.count` bytes; nil, or what is wrong.
    public func decompressFrame(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) -> ZstdError? {
        let frameSize = ZSTD_findFrameCompressedSize(src.baseAddress, src.count)
        if ZSTD_isError(frameSize) != 0 { return .code(frameSize) }
        if frameSize != src.count { return ZstdError("frame is \(frameSize) bytes, block says \(src.count)") }
        let declared = ZSTD_getFrameContentSize(src.baseAddress, src.count)
        if declared != UInt64(dst.count) {
            return ZstdError(declared >= UInt64.max - 1 ? "frame has no content size"
                             : "frame content size \(declared), block says \(dst.count)")
        }
        // An empty destination has no base address; zstd wants a non-null pointer.
        var dummy: UInt8 = 0
        let r = withUnsafeMutablePointer(to: &dummy) { d in
            ZSTD_decompressDCtx(dctx, dst.baseAddress ?? UnsafeMutableRawPointer(d), dst.count, src.baseAddress, src.count)
        }
        if ZSTD_isError(r) != 0 { return .code(r) }
        if r != dst.count { return ZstdError("decoded \(r) bytes, block says \(dst.count)") }
        return nil
    }

    /// One step of a stream: reads from `src` starting at `pos` (advanced), writes into `dst`.
    /// Returns the bytes produced and zstd's hint (0 = a frame just ended).
    public func decompressStream(_ src: UnsafeRawBufferPointer, pos: inout Int,
                                 into dst: UnsafeMutableRawBufferPointer) -> Result<(produced: Int, hint: Int), ZstdError> {
        var inBuf = ZSTD_inBuffer(src: src.baseAddress, size: src.count, pos: pos)
        var outBuf = ZSTD_outBuffer(dst: dst.baseAddress, size: dst.count, pos: 0)
        let r = ZSTD_decompressStream(dctx, &outBuf, &inBuf)
        if ZSTD_isError(r) != 0 { return .failure(.code(r)) }
        pos = inBuf.pos
        return .success((outBuf.pos, r))
    }
}
