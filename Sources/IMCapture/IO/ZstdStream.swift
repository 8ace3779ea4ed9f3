import IMZstd

/// The capture's zstd stream (`.zst`): written with `IMZstd.ZstdCompressor.compressStream`
/// (content checksum on, so a damaged capture is detected when its frame ends) and read back by
/// `ZstdDecompressingSource`.
extension ZstdCompressor {
    /// The capture stream's compressor at `level` (1…max).
    static func captureStream(level: Int32) throws(CaptureError) -> ZstdCompressor {
        guard level >= 1, level <= ZstdCompressor.levels.upperBound else {
            throw CaptureError(.io, line: 0, "zstd level \(level) outside 1…\(ZstdCompressor.levels.upperBound)")
        }
        // contentSize: zstd's default, which the capture stream always had (same bytes).
        do { return try ZstdCompressor(level: level, checksum: true, contentSize: true) } catch {
            throw CaptureError(.zstd, line: 0, error.message)
        }
    }

    /// `compressStream` with the capture's error.
    func captureCompress(_ input: [UInt8], end: Bool) throws(CaptureError) -> [UInt8] {
        do { return try compressStream(input, end: end) } catch {
            throw CaptureError(.zstd, line: 0, "compression failed: \(error.message)")
        }
    }
}

/// A `ByteSource` that decompresses a zstd stream read from another source, chunk by chunk.
/// Memory is bounded: one input chunk, one output chunk and a window of at most 2^24 bytes
/// (a frame that asks for more is refused).
final class ZstdDecompressingSource: ByteSource {
    private let zstd: ZstdDecompressor
    private let inner: ByteSource
    private var input: [UInt8] = []
    private var inputPos = 0
    private var innerEnded = false
    /// The last `ZSTD_decompressStream` result: 0 means "a frame just ended".
    private var lastResult = 0
    private var sawAnyInput = false
    private var output = [UInt8](repeating: 0, count: ZstdDecompressor.streamOutSize)
    /// Line being read when an error happens (set by the line reader, for messages).
    var currentLine = 0

    init(_ inner: ByteSource, prefix: [UInt8]) throws(CaptureError) {
        do { zstd = try ZstdDecompressor(windowLogMax: 24) } catch { throw CaptureError(.zstd, line: 0, error.message) }
        self.inner = inner
        input = prefix
        sawAnyInput = !prefix.isEmpty
    }

    func read(into buffer: inout [UInt8], max: Int) throws(CaptureError) -> Int {
        while true {
            if inputPos == input.count && !innerEnded {
                input.removeAll(keepingCapacity: true)
                inputPos = 0
                if try inner.read(into: &input, max: ZstdDecompressor.streamInSize) == 0 {
                    innerEnded = true
                } else {
                    sawAnyInput = true
                }
            }
            let exhausted = inputPos == input.count && innerEnded
            // All input consumed at a frame boundary: the stream is complete.
            if exhausted && (lastResult == 0 || !sawAnyInput) { return 0 }
            let cap = Swift.min(output.count, max)
            var pos = inputPos
            let step = input.withUnsafeBytes { src in
                output.withUnsafeMutableBytes { dst in
                    zstd.decompressStream(src, pos: &pos, into: UnsafeMutableRawBufferPointer(rebasing: dst[0..<cap]))
                }
            }
            let produced: Int
            switch step {
            case .failure(let f): throw CaptureError(.zstd, line: currentLine, "corrupt zstd stream: \(f.message)")
            case .success(let s):
                inputPos = pos
                lastResult = s.hint
                produced = s.produced
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

