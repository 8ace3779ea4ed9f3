import IMZstd
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a capture reader gets bytes, one chunk at a time (never the whole file).
protocol ByteSource: AnyObject {
    /// Appends up to `max` bytes to `buffer`; returns how many (0 = end of input).
    func read(into buffer: inout [UInt8], max: Int) throws(CaptureError) -> Int
}

/// Bytes in memory (tests, captures built in a process).
final class MemorySource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(into buffer: inout [UInt8], max: Int) throws(CaptureError) -> Int {
        let n = min(max, bytes.count - offset)
        buffer.append(contentsOf: bytes[offset..<(offset + n)])
        offset += n
        return n
    }
}

/// A file read sequentially with `read(2)`.
final class FileSource: ByteSource {
    private let fd: Int32
    let path: String
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    init(path: String) throws(CaptureError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CaptureError(.io, line: 0, "cannot open \(path): \(errnoText(errno))") }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw CaptureError(.io, line: 0, "\(path) is a directory")
        }
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    func read(into buffer: inout [UInt8], max: Int) throws(CaptureError) -> Int {
        let want = Swift.min(max, scratch.count)
        while true {
            let r = scratch.withUnsafeMutableBytes { sysRead(fd, $0.baseAddress, want) }
            if r < 0 {
                if errno == EINTR { continue }
                throw CaptureError(.io, line: 0, "cannot read \(path): \(errnoText(errno))")
            }
            buffer.append(contentsOf: scratch[0..<r])
            return r
        }
    }
}

/// Where a capture writer puts bytes.
public protocol CaptureSink: AnyObject {
    func write(_ bytes: [UInt8]) throws(CaptureError)
    /// Completes the output (a file sink renames its temporary file into place).
    func finish() throws(CaptureError)
    /// Gives up: a file sink removes its temporary file and leaves any existing file untouched.
    func abandon()
}

/// Collects the capture in memory (tests, or a runtime that uploads captures itself).
public final class CaptureMemorySink: CaptureSink {
    public private(set) var bytes: [UInt8] = []
    public private(set) var finished = false
    public init() {}
    public func write(_ b: [UInt8]) throws(CaptureError) { bytes += b }
    public func finish() throws(CaptureError) { finished = true }
    public func abandon() { bytes = [] }
}

/// Writes a capture file: everything goes to `PATH.partial`, which `finish()` renames to `PATH`
/// (so a crash never leaves a half-written capture under the final name). A path ending in
/// `.zst` is zstd-compressed (streaming, constant memory).
public final class CaptureFileSink: CaptureSink {
    public let path: String
    public let compressed: Bool
    private let tempPath: String
    private var fd: Int32
    private var zstd: ZstdCompressor?
    private var pending: [UInt8] = []
    private let flushThreshold = 64 * 1024

    /// - Parameters:
    ///   - compressed: nil = decide by the `.zst` extension.
    ///   - level: zstd level (1…19).
    public init(path: String, compressed: Bool? = nil, level: Int32 = 3) throws(CaptureError) {
        self.path = path
        self.compressed = compressed ?? path.hasSuffix(".zst")
        tempPath = path + ".partial"
        fd = open(tempPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CaptureError(.io, line: 0, "cannot create \(tempPath): \(errnoText(errno))") }
        if self.compressed {
            do { zstd = try ZstdCompressor.captureStream(level: level) } catch {
                close(fd)
                unlink(tempPath)
                throw error
            }
        }
    }

    deinit { if fd >= 0 { abandon() } }

    public func write(_ bytes: [UInt8]) throws(CaptureError) {
        pending += bytes
        if pending.count >= flushThreshold { try flush(end: false) }
    }

    private func flush(end: Bool) throws(CaptureError) {
        guard fd >= 0 else { throw CaptureError(.io, line: 0, "\(path): writer already closed") }
        let out: [UInt8]
        if let z = zstd { out = try z.captureCompress(pending, end: end) } else { out = pending }
        pending.removeAll(keepingCapacity: true)
        var done = 0
        while done < out.count {
            let r = out.withUnsafeBytes { sysWrite(fd, $0.baseAddress! + done, out.count - done) }
            if r < 0 {
                if errno == EINTR { continue }
                throw CaptureError(.io, line: 0, "cannot write \(tempPath): \(errnoText(errno))")
            }
            done += r
        }
    }

    public func finish() throws(CaptureError) {
        try flush(end: true)
        let r = close(fd)
        fd = -1
        guard r == 0 else { throw CaptureError(.io, line: 0, "cannot close \(tempPath): \(errnoText(errno))") }
        guard rename(tempPath, path) == 0 else {
            let e = errno
            unlink(tempPath)
            throw CaptureError(.io, line: 0, "cannot rename \(tempPath) to \(path): \(errnoText(e))")
        }
    }

    public func abandon() {
        if fd >= 0 { close(fd) }
        fd = -1
        unlink(tempPath)
    }
}

package func errnoText(_ e: Int32) -> String { String(cString: strerror(e)) }

private func sysRead(_ fd: Int32, _ p: UnsafeMutableRawPointer?, _ n: Int) -> Int {
    #if canImport(Glibc)
    Glibc.read(fd, p, n)
    #else
    Darwin.read(fd, p, n)
    #endif
}

private func sysWrite(_ fd: Int32, _ p: UnsafeRawPointer?, _ n: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, p, n)
    #else
    Darwin.write(fd, p, n)
    #endif
}
