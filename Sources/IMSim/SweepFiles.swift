import Foundation
import IMWorld
#if canImport(Glibc)
import Glibc
#endif

/// A sweep's I/O failure (disk full, unwritable or non-directory `--out`): one line for the user.
public struct SweepIOError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
    init(_ what: String, path: String, errno e: Int32) {
        description = "\(what) \(path): \(String(cString: strerror(e)))"
    }
}

/// Writes one shard's result file so that a kill at any moment loses at most the seed in flight:
/// lines are appended to `NAME.partial` with one write each, and the finished file (sorted, with
/// its summary) is written to a temporary name, fsynced and renamed into place. Opening a
/// directory that already holds this shard resumes it: seeds already recorded are not run again,
/// a torn last line is cut off; a different sweep there is started over.
public final class SweepResultWriter {
    /// write(2) or a test's stand-in (disk full). Returns bytes written, or -errno.
    public typealias WriteCall = (Int32, UnsafeRawBufferPointer) -> Int
    public static func posixWrite(_ fd: Int32, _ buf: UnsafeRawBufferPointer) -> Int {
        let n = Glibc.write(fd, buf.baseAddress, buf.count)
        return n < 0 ? -Int(errno) : n
    }

    public let directory: String
    public let header: SweepHeader
    public let finalPath: String
    public let partialPath: String
    /// Seeds already recorded (resumed, or written by this run).
    public private(set) var done: [UInt64: SweepSeedLine] = [:]
    /// The file was complete already: nothing to run.
    public private(set) var alreadyComplete = false
    /// Why an existing file was not resumed (printed by the CLI), if it was not.
    public private(set) var note: String?
    private var fd: Int32 = -1
    private var lockFD: Int32 = -1
    private let writeCall: WriteCall

    public init(directory: String, header: SweepHeader, write: @escaping WriteCall = SweepResultWriter.posixWrite) throws(SweepIOError) {
        self.directory = directory
        self.header = header
        self.writeCall = write
        finalPath = directory + "/" + SweepHeader.fileName(shard: header.shard, shards: header.shards)
        partialPath = finalPath + ".partial"
        try Self.makeDirectory(directory)
        // One writer per shard: a requeued array task must not interleave with a live one.
        lockFD = open(finalPath + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else { throw SweepIOError("cannot write", path: finalPath + ".lock", errno: errno) }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            close(lockFD)
            throw SweepIOError("shard \(header.shard)/\(header.shards) is being written by another process (lock \(finalPath).lock)")
        }
        if let bytes = Self.read(finalPath) {
            if let f = try? SweepResultFile.parse(bytes, partial: false), f.header == header {
                for l in f.lines { done[l.seed] = l }
                alreadyComplete = true
                return
            }
            note = "\(finalPath): holds another sweep or is damaged; starting over"
        }
        if let bytes = Self.read(partialPath) {
            if let f = try? SweepResultFile.parse(bytes, partial: true), f.header == header {
                for l in f.lines { done[l.seed] = l }
                fd = open(partialPath, O_WRONLY | O_CLOEXEC)
                guard fd >= 0 else { throw SweepIOError("cannot write", path: partialPath, errno: errno) }
                if f.tornTail { _ = ftruncate(fd, off_t(f.validLength)) }
                _ = lseek(fd, 0, SEEK_END)
                if f.tornTail { note = "\(partialPath): cut a torn last line (a killed run)" }
                return
            }
            note = "\(partialPath): holds another sweep or is damaged; starting over"
        }
        fd = open(partialPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SweepIOError("cannot write", path: partialPath, errno: errno) }
        try append(SweepResultFile.jsonLine(header) + "\n", to: fd, path: partialPath)
    }

    deinit {
        if fd >= 0 { close(fd) }
        if lockFD >= 0 { close(lockFD) }
    }

    /// Records one seed (one write of one whole line).
    public func record(_ line: SweepSeedLine) throws(SweepIOError) {
        guard done[line.seed] == nil else { return }
        try append(SweepResultFile.jsonLine(line) + "\n", to: fd, path: partialPath)
        done[line.seed] = line
    }

    /// Writes the finished file (lines sorted, summary) atomically and removes the partial one.
    @discardableResult
    public func finish() throws(SweepIOError) -> [UInt8] {
        let bytes = SweepResultFile.render(header: header, lines: Array(done.values))
        if alreadyComplete { release(); return bytes }
        try Self.writeAtomically(bytes, to: finalPath, write: writeCall)
        if fd >= 0 { close(fd); fd = -1 }
        unlink(partialPath)
        alreadyComplete = true
        release()
        return bytes
    }

    /// Lets another writer open this shard (done by finish; deinit does it too).
    public func release() {
        if lockFD >= 0 { close(lockFD); lockFD = -1 }
    }

    private func append(_ text: String, to fd: Int32, path: String) throws(SweepIOError) {
        try Self.writeAll(Array(text.utf8), fd: fd, path: path, write: writeCall)
    }

    static func writeAll(_ bytes: [UInt8], fd: Int32, path: String, write: WriteCall) throws(SweepIOError) {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, UnsafeRawBufferPointer(rebasing: $0[off...])) }
            if n == -Int(EINTR) { continue }
            if n < 0 { throw SweepIOError("cannot write", path: path, errno: Int32(-n)) }
            if n == 0 { throw SweepIOError("cannot write", path: path, errno: ENOSPC) }
            off += n
        }
    }

    /// temp file, fsync, rename: a reader sees the old file or the whole new one.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, write: WriteCall = SweepResultWriter.posixWrite) throws(SweepIOError) {
        let tmp = path + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SweepIOError("cannot write", path: tmp, errno: errno) }
        do {
            try writeAll(bytes, fd: fd, path: tmp, write: write)
        } catch {
            close(fd)
            unlink(tmp)
            throw error
        }
        if fsync(fd) != 0 {
            let e = errno
            close(fd); unlink(tmp)
            throw SweepIOError("cannot write", path: tmp, errno: e)
        }
        close(fd)
        if rename(tmp, path) != 0 {
            let e = errno
            unlink(tmp)
            throw SweepIOError("cannot write", path: path, errno: e)
        }
    }

    /// mkdir -p, with a one-line error for a file in the way or no permission.
    public static func makeDirectory(_ path: String) throws(SweepIOError) {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            guard isDir.boolValue else { throw SweepIOError("--out \(path): not a directory") }
            guard access(path, W_OK | X_OK) == 0 else { throw SweepIOError("cannot write to", path: path, errno: errno) }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            // Name the part of the path that is in the way.
            var p = (path as NSString).deletingLastPathComponent
            while !p.isEmpty && p != "/" && !FileManager.default.fileExists(atPath: p) { p = (p as NSString).deletingLastPathComponent }
            var d: ObjCBool = false
            if !p.isEmpty, FileManager.default.fileExists(atPath: p, isDirectory: &d), !d.boolValue {
                throw SweepIOError("--out \(path): \(p) is not a directory")
            }
            throw SweepIOError("cannot create", path: path, errno: access(p.isEmpty ? "." : p, W_OK) == 0 ? EIO : EACCES)
        }
    }

    static func read(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { Array($0) }
    }

    /// Every result file of a directory (complete and partial), for merge and status.
    public static func resultFiles(in dir: String) throws(SweepIOError) -> [(name: String, bytes: [UInt8])] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) else { throw SweepIOError("\(dir): no such directory") }
        guard isDir.boolValue else { throw SweepIOError("\(dir): not a directory") }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else {
            throw SweepIOError("cannot read", path: dir, errno: EACCES)
        }
        var out: [(String, [UInt8])] = []
        for n in names.sorted() where (n.hasPrefix("shard-") || n == "results.jsonl" || n == "results.jsonl.partial")
            && (n.hasSuffix(".jsonl") || n.hasSuffix(".jsonl.partial")) {
            guard let b = read(dir + "/" + n) else { throw SweepIOError("cannot read", path: dir + "/" + n, errno: EACCES) }
            out.append((n, b))
        }
        return out
    }
}

/// The build a result was made by: version, configuration and the executable's GNU build id, so
/// results of different builds are never merged as one sweep.
public enum SweepBuild {
    public static let id: String = {
        "\(IMSimVersion.string)-\(IMSimVersion.buildConfiguration)" + (gnuBuildID().map { "-" + $0 } ?? "")
    }()

    /// The NT_GNU_BUILD_ID note of /proc/self/exe (first 8 bytes, hex), if there is one.
    static func gnuBuildID() -> String? {
        guard let h = FileHandle(forReadingAtPath: "/proc/self/exe") else { return nil }
        defer { try? h.close() }
        guard let head = try? h.read(upToCount: 64), head.count == 64, head.starts(with: [0x7F, 0x45, 0x4C, 0x46]), head[4] == 2 else {
            return nil
        }
        let b = Array(head)
        func u(_ bytes: [UInt8], _ o: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 | Int(bytes[o + $1]) << (8 * $1) } }
        let phoff = u(b, 32, 8), phentsize = u(b, 54, 2), phnum = u(b, 56, 2)
        guard phentsize >= 56, phnum < 64 else { return nil }
        try? h.seek(toOffset: UInt64(phoff))
        guard let ph = try? h.read(upToCount: phentsize * phnum), ph.count == phentsize * phnum else { return nil }
        let p = Array(ph)
        for i in 0..<phnum {
            let o = i * phentsize
            guard u(p, o, 4) == 4 else { continue }   // PT_NOTE
            let off = u(p, o + 8, 8), size = u(p, o + 32, 8)
            guard size < 65536 else { continue }
            try? h.seek(toOffset: UInt64(off))
            guard let nd = try? h.read(upToCount: size), nd.count == size else { continue }
            let n = Array(nd)
            var q = 0
            while q + 12 <= n.count {
                let namesz = u(n, q, 4), descsz = u(n, q + 4, 4), type = u(n, q + 8, 4)
                let nameOff = q + 12, descOff = nameOff + (namesz + 3) / 4 * 4
                guard descOff + descsz <= n.count else { break }
                if type == 3, namesz == 4, Array(n[nameOff..<nameOff + 3]) == [0x47, 0x4E, 0x55] {
                    return n[descOff..<descOff + min(8, descsz)].map { String(format: "%02x", $0) }.joined()
                }
                q = descOff + (descsz + 3) / 4 * 4
            }
        }
        return nil
    }
}
