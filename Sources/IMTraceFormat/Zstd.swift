import CZstd

/// One zstd compression context, reused for every block of a writer (one-shot `ZSTD_compress2`
/// per block, single-threaded: `nbWorkers = 0`, content size recorded in the frame header).
final class ZstdCompressor {
    private let cctx: OpaquePointer
    let level: Int32

    init(level: Int32) throws(TraceError) {
        guard level >= ZSTD_minCLevel(), level <= ZSTD_maxCLevel() else {
            throw .invalidOptions("compression level \(level) outside \(ZSTD_minCLevel())...\(ZSTD_maxCLevel())")
        }
        guard let c = ZSTD_createCCtx() else { throw .invalidOptions("ZSTD_createCCtx failed") }
        cctx = c
        self.level = level
        for (param, value) in [(ZSTD_c_compressionLevel, level), (ZSTD_c_nbWorkers, 0),
                               (ZSTD_c_checksumFlag, 0), (ZSTD_c_contentSizeFlag, 1)] {
            let r = ZSTD_CCtx_setParameter(cctx, param, value)
            if ZSTD_isError(r) != 0 {
                ZSTD_freeCCtx(cctx)
                throw .invalidOptions("zstd parameter: \(Self.errorName(r))")
            }
        }
    }

    deinit { ZSTD_freeCCtx(cctx) }

    static func bound(_ n: Int) -> Int { ZSTD_compressBound(n) }

    /// Compresses `src` into `dst` (capacity at least `bound(src.count)`); returns the frame size.
    func compress(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) -> Result<Int, ZstdFailure> {
        let r = ZSTD_compress2(cctx, dst.baseAddress, dst.count, src.baseAddress, src.count)
        if ZSTD_isError(r) != 0 { return .failure(ZstdFailure(message: Self.errorName(r))) }
        return .success(r)
    }

    static func errorName(_ code: Int) -> String { String(cString: ZSTD_getErrorName(code)) }
}

/// One zstd decompression context, reused for every block a reader loads.
final class ZstdDecompressor {
    private let dctx: OpaquePointer

    init() {
        guard let d = ZSTD_createDCtx() else { fatalError("ZSTD_createDCtx failed (out of memory)") }
        dctx = d
    }

    deinit { ZSTD_freeDCtx(dctx) }

    /// Decompresses exactly one frame that must occupy all of `src` and decode to exactly
    /// `dst.count` bytes. Returns an error message otherwise.
    func decompress(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) -> String? {
        let frameSize = ZSTD_findFrameCompressedSize(src.baseAddress, src.count)
        if ZSTD_isError(frameSize) != 0 { return ZstdCompressor.errorName(frameSize) }
        if frameSize != src.count { return "frame is \(frameSize) bytes, block says \(src.count)" }
        let declared = ZSTD_getFrameContentSize(src.baseAddress, src.count)
        if declared != UInt64(dst.count) {
            return declared >= UInt64.max - 1 ? "frame has no content size"
                : "frame content size \(declared), block says \(dst.count)"
        }
        // An empty destination has no base address; zstd wants a non-null pointer.
        var dummy: UInt8 = 0
        let r = withUnsafeMutablePointer(to: &dummy) { d in
            ZSTD_decompressDCtx(dctx, dst.baseAddress ?? UnsafeMutableRawPointer(d), dst.count, src.baseAddress, src.count)
        }
        if ZSTD_isError(r) != 0 { return ZstdCompressor.errorName(r) }
        if r != dst.count { return "decoded \(r) bytes, block says \(dst.count)" }
        return nil
    }
}

struct ZstdFailure: Error {
    var message: String
}
