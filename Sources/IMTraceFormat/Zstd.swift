import IMZstd

// The trace's blocks are one-shot zstd frames through the one wrapper (IMZstd): one context per
// writer or reader, no checksum (each block has its CRC32C), content size in the frame header.

extension ZstdCompressor {
    /// The block compressor of a trace writer at `level`.
    static func traceBlocks(level: Int32) throws(TraceError) -> ZstdCompressor {
        do { return try ZstdCompressor(level: level, checksum: false, contentSize: true) } catch {
            throw .invalidOptions(error.message)
        }
    }
}
