/// Decodes a byte stream read chunk by chunk, handing each frame on as soon as it decodes, so a
/// large capture of frames is never held whole (`imsim decode FILE`; issue 23: 51 MB of frames
/// took 3 GB). At most one chunk's frames are alive at a time.
public enum StreamDecodeLoop {
    public struct Stats: Sendable, Hashable {
        public var bytes = 0
        public var chunks = 0
        public var frames = 0
        /// The most frames decoded from one chunk and held before they were handed on.
        public var peakFramesHeld = 0
        public init() {}
    }

    /// Reads `read` until it returns an empty chunk, then finishes the decoder (a torn last frame
    /// is an error). `emit` gets each frame with its stream offset and encoded size.
    public static func run(_ decoder: inout StreamDecoder, read: () throws -> [UInt8],
                           emit: (_ frame: Frame, _ offset: Int, _ size: Int) throws -> Void) throws -> Stats {
        var stats = Stats()
        var offset = 0
        while true {
            let chunk = try read()
            if chunk.isEmpty { break }
            stats.bytes += chunk.count
            stats.chunks += 1
            let frames = try decoder.feed(chunk)
            stats.peakFramesHeld = max(stats.peakFramesHeld, frames.count)
            for f in frames {
                let size = (try? StreamFraming.encode(f, direction: decoder.direction).count) ?? 0
                try emit(f, offset, size)
                offset += size
                stats.frames += 1
            }
        }
        try decoder.finish()
        return stats
    }
}
