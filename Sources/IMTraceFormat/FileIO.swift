#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a reader gets bytes: a file read with `pread` (the reader never holds more than one
/// block), or bytes in memory (tests, fuzzing).
final class TraceSource {
    enum Storage {
        case file(fd: Int32)
        case memory([UInt8])
    }
    let storage: Storage
    let path: String
    let size: Int

    init(bytes: [UInt8]) {
        storage = .memory(bytes)
        path = "<memory>"
        size = bytes.count
    }

    init(path: String) throws(TraceError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: path, operation: "open", errno: errno) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            close(fd)
            throw .io(path: path, operation: "fstat", errno: e)
        }
        storage = .file(fd: fd)
        self.path = path
        size = Int(st.st_size)
    }

    deinit {
        if case .file(let fd) = storage { close(fd) }
    }

    /// Reads up to `count` bytes at `offset` (fewer only at the end of the file).
    func read(at offset: Int, count: Int) throws(TraceError) -> [UInt8] {
        var out: [UInt8] = []
        try read(at: offset, count: count, into: &out)
        return out
    }

    /// Reads into a reusable buffer (resized to the bytes actually read).
    func read(at offset: Int, count: Int, into out: inout [UInt8]) throws(TraceError) {
        let n = max(0, min(count, size - offset))
        switch storage {
        case .memory(let bytes):
            out.removeAll(keepingCapacity: true)
            out.append(contentsOf: bytes[offset..<(offset + n)])
        case .file(let fd):
            if out.count != n {
                out.removeAll(keepingCapacity: true)
                out.append(contentsOf: repeatElement(0, count: n))
            }
            var done = 0
            var failure: Int32 = 0
            out.withUnsafeMutableBytes { buf in
                while done < n {
                    let r = pread(fd, buf.baseAddress! + done, n - done, off_t(offset + done))
                    if r < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        return
                    }
                    if r == 0 { break }  // the file shrank under us
                    done += r
                }
            }
            if failure != 0 { throw .io(path: path, operation: "read", errno: failure) }
            if done < n { out.removeLast(n - done) }
        }
    }
}

/// Where a writer puts bytes: appended to a file (one `write` per block, so a killed process
/// leaves every block it finished), or to memory.
final class TraceSink {
    enum Storage {
        case file(fd: Int32)
        case memory
    }
    let storage: Storage
    let path: String
    let syncEachWrite: Bool
    private(set) var memory: [UInt8] = []
    private(set) var offset = 0

    /// Memory that refuses (ENOSPC, like a full disk) any write that would take it past
    /// `limit` bytes: tests of write failures.
    let memoryLimit: Int

    init(memory: (), limit: Int = .max) {
        storage = .memory
        path = "<memory>"
        syncEachWrite = false
        memoryLimit = limit
    }

    init(path: String, sync: Bool) throws(TraceError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(path: path, operation: "open", errno: errno) }
        storage = .file(fd: fd)
        self.path = path
        syncEachWrite = sync
        memoryLimit = .max
    }

    deinit { close() }

    func close() {
        if case .file(let fd) = storage, fd >= 0 {
            _ = closeFD(fd)
        }
    }

    private var closed = false
    private func closeFD(_ fd: Int32) -> Int32 {
        if closed { return 0 }
        closed = true
        #if canImport(Glibc)
        return Glibc.close(fd)
        #elseif canImport(Musl)
        return Musl.close(fd)
        #else
        return Darwin.close(fd)
        #endif
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(TraceError) {
        switch storage {
        case .memory:
            guard bytes.count <= memoryLimit - memory.count else { throw .io(path: path, operation: "write", errno: ENOSPC) }
            memory.append(contentsOf: bytes)
        case .file(let fd):
            var done = 0
            while done < bytes.count {
                let r = Self.posixWrite(fd, bytes.baseAddress! + done, bytes.count - done)
                if r < 0 {
                    if errno == EINTR { continue }
                    throw .io(path: path, operation: "write", errno: errno)
                }
                done += r
            }
            if syncEachWrite { try sync() }
        }
        offset += bytes.count
    }

    func write(_ bytes: [UInt8]) throws(TraceError) {
        try bytes.withBytes { (b) throws(TraceError) in try write(b) }
    }

    /// Replaces everything written so far by `bytes` (a file header rewritten before any block).
    func rewrite(_ bytes: [UInt8]) throws(TraceError) {
        switch storage {
        case .memory:
            memory.removeAll(keepingCapacity: true)
        case .file(let fd):
            guard ftruncate(fd, 0) == 0 else { throw .io(path: path, operation: "ftruncate", errno: errno) }
            guard lseek(fd, 0, SEEK_SET) == 0 else { throw .io(path: path, operation: "lseek", errno: errno) }
        }
        offset = 0
        try write(bytes)
    }

    func sync() throws(TraceError) {
        if case .file(let fd) = storage, fsync(fd) != 0 {
            throw .io(path: path, operation: "fsync", errno: errno)
        }
    }

    /// Closes the file, reporting a failed close (which can carry a deferred write error).
    func finishClose() throws(TraceError) {
        if case .file(let fd) = storage, !closed, closeFD(fd) != 0 {
            throw .io(path: path, operation: "close", errno: errno)
        }
    }

    private static func posixWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, p, n)
        #elseif canImport(Musl)
        Musl.write(fd, p, n)
        #else
        Darwin.write(fd, p, n)
        #endif
    }
}
