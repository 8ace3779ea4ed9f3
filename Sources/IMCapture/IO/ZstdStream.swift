import CZstd

/// zstd streaming compression (`ZSTD_compressStream2`), single-threaded (`nbWorkers = 0`) with a
/// content checksum, so a damaged capture is detected when its frame ends.
package final class ZstdStreamCompressor {
    private let cctx: OpaquePointer
    private var out = [UInt8](repeating: 0, count: ZSTD_CStreamOutSize())

    package init(level: Int32) throws(CaptureError) {
        guard level >= 1, level <= ZSTD_maxCLevel() else {
            throw CaptureError(.io, line: 0, "zstd level \(level) outside 1…\(ZSTD_maxCLevel())")
        }
        guard let c = ZSTD_createCCtx() else { throw CaptureError(.zstd, line: 0, "ZSTD_createCCtx failed") }
        cctx = c
        for (p, v) in [(ZSTD_c_compressionLevel, level), (ZSTD_c_nbWorkers, 0), (ZSTD_c_checksumFlag, 1)] {
            let r = ZSTD_CCtx_setParameter(cctx, p, v)
            if ZSTD_isError(r) != 0 {
                ZSTD_freeCCtx(cctx)
                throw CaptureError(.zstd, line: 0, "zstd parameter: \(zstdErrorName(r))")
            }
        }
    }

    deinit { ZSTD_freeCCtx(cctx) }

    /// Compresses `input`; with `end` the frame is closed. Returns the compressed bytes produced.
    package func compress(_ input: [UInt8], end: Bool) throws(CaptureError) -> [UInt8] {
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
        if let f = failure { throw CaptureError(.zstd, line: 0, "compression failed: \(zstdErrorName(f))") }
        return result
    }
}

/// A `ByteSource` that decompresses a zstd stream read from another source, chunk by chunk.
/// Memory is bounded: one input chunk, one output chunk and a window of at most 2^24 bytes
/// (a frame that asks for more is refused).
final class ZstdDecompressingSource: ByteSource {
    private let dctx: OpaquePointer
    private let inner: ByteSource
    private var input: [UInt8] = []
    private var inputPos = 0
    private var innerEnded = false
    /// The last `ZSTD_decompressStream` result: 0 means "a frame just ended".
    private var lastResult = 0
    private var sawAnyInput = false
    private var output = [UInt8](repeating: 0, count: ZSTD_DStreamOutSize())
    /// Line being read when an error happens (set by the line reader, for messages).
    var currentLine = 0

    init(_ inner: ByteSource, prefix: [UInt8]) throws(CaptureError) {
        guard let d = ZSTD_createDCtx() else { throw CaptureError(.zstd, line: 0, "ZSTD_createDCtx failed") }
        dctx = d
        self.inner = inner
        input = prefix
        sawAnyInput = !prefix.isEmpty
        let r = ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, 24)
        if ZSTD_isError(r) != 0 {
            ZSTD_freeDCtx(dctx)
            throw CaptureError(.zstd, line: 0, "zstd parameter: \(zstdErrorName(r))")
        }
    }

    deinit { ZSTD_freeDCtx(dctx) }

    func read(into buffer: inout [UInt8], max: Int) throws(CaptureError) -> Int {
        while true {
            if inputPos == input.count && !innerEnded {
                input.removeAll(keepingCapacity: true)
                inputPos = 0
                if try inner.read(into: &input, max: ZSTD_DStreamInSize()) == 0 {
                    innerEnded = true
                } else {
                    sawAnyInput = true
                }
            }
            let exhausted = inputPos == input.count && innerEnded
            // All input consumed at a frame boundary: the stream is complete.
            if exhausted && (lastResult == 0 || !sawAnyInput) { return 0 }
            var produced = 0
            var failure: Int?
            let cap = Swift.min(output.count, max)
            input.withUnsafeBytes { src in
                var inBuf = ZSTD_inBuffer(src: src.baseAddress, size: src.count, pos: inputPos)
                output.withUnsafeMutableBytes { dst in
                    var outBuf = ZSTD_outBuffer(dst: dst.baseAddress, size: cap, pos: 0)
                    let r = ZSTD_decompressStream(dctx, &outBuf, &inBuf)
                    if ZSTD_isError(r) != 0 { failure = r; return }
                    lastResult = r
                    produced = outBuf.pos
                }
                inputPos = inBuf.pos
            }
            if let f = failure {
                throw CaptureError(.zstd, line: currentLine, "corrupt zstd stream: \(zstdErrorName(f))")
            }
            if produced > 0 {
                buffer.append(contentsOf: output[0..<produced])
                return produced
            }
            // Nothing more comes out, no input is left, and the frame is not finished.
            if exhausted {
                throw CaptureError(.zstd, line: currentLine, "truncated zstd stream (the last frame is incomplete)")
            }
        }
    }
}

/// The zstd frame magic number, little-endian on disk.
package let zstdMagic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]

func zstdErrorName(_ code: Int) -> String { String(cString: ZSTD_getErrorName(code)) }
