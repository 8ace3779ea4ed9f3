/// Splits a byte source into lines with bounded memory: a line longer than `maxLineLength` is an
/// error as soon as the limit is passed (the rest of it is never buffered). `\n` ends a line; a
/// `\r` before it is dropped. The last line may lack its newline.
final class LineReader {
    let maxLineLength: Int
    private let source: ByteSource
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false
    /// 1-based number of the line last returned.
    private(set) var lineNumber = 0
    /// Total bytes handed out (for progress).
    private(set) var bytesRead = 0
    /// The line last returned had no newline: the file ended in it (a writer killed mid-line
    /// leaves one; a complete file may too).
    private(set) var lastLineUnterminated = false
    /// The source ended inside a compressed frame (a writer killed mid-frame).
    private(set) var sourceTruncated = false
    private let chunk = 64 * 1024

    init(source: ByteSource, maxLineLength: Int) {
        self.source = source
        self.maxLineLength = maxLineLength
    }

    /// The next line without its terminator, or nil at the end.
    func next() throws(CaptureError) -> [UInt8]? {
        (source as? ZstdDecompressingSource)?.currentLine = lineNumber + 1
        var scanFrom = start
        while true {
            if let nl = buffer[scanFrom...].firstIndex(of: 0x0A) {
                var end = nl
                if end > start && buffer[end - 1] == 0x0D { end -= 1 }
                if end - start > maxLineLength { throw tooLong() }
                let line = Array(buffer[start..<end])
                bytesRead += nl + 1 - start
                start = nl + 1
                lineNumber += 1
                return line
            }
            if buffer.count - start > maxLineLength { throw tooLong() }
            if ended {
                guard start < buffer.count else { return nil }
                var line = Array(buffer[start...])
                if line.last == 0x0D { line.removeLast() }
                lastLineUnterminated = true
                bytesRead += buffer.count - start
                start = buffer.count
                lineNumber += 1
                return line
            }
            // Compact, then read more.
            if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            scanFrom = buffer.count
            do {
                if try source.read(into: &buffer, max: chunk) == 0 { ended = true }
            } catch where error.kind == .zstd && error.message.hasPrefix("truncated") {
                // Keep the complete lines decompressed so far; the torn rest is the caller's to report.
                ended = true
                sourceTruncated = true
            }
        }
    }

    private func tooLong() -> CaptureError {
        CaptureError(.lineTooLong, line: lineNumber + 1,
                     "line longer than \(maxLineLength) bytes (raise the limit with --max-line-length if this is a real record)")
    }
}
