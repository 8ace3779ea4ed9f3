import Foundation

/// Where a view writes text: standard output, or a file that appears only when complete
/// (written to `PATH.partial`, renamed over `PATH` by `commit`; an error or `abandon` removes it).
public final class TextOutput {
    public let path: String?
    private let handle: FileHandle
    private let temporary: String?
    private var buffer: [UInt8] = []
    private var closed = false
    /// Bytes written so far.
    public private(set) var byteCount = 0

    /// Standard output.
    public init() {
        path = nil
        temporary = nil
        handle = FileHandle.standardOutput
        buffer.reserveCapacity(1 << 16)
    }

    /// A file at `path`, written through `path.partial`.
    public init(path: String) throws(TraceViewError) {
        self.path = path
        let tmp = path + ".partial"
        temporary = tmp
        guard FileManager.default.createFile(atPath: tmp, contents: nil), let h = FileHandle(forWritingAtPath: tmp) else {
            throw .io(path: tmp, message: "cannot create")
        }
        handle = h
        buffer.reserveCapacity(1 << 20)
    }

    deinit { if !closed { abandon() } }

    public func write(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        byteCount += s.utf8.count
        if buffer.count >= 1 << 20 { try? flush() }
    }

    /// Binary output (pcapng, protobuf exports).
    public func write(bytes b: [UInt8]) {
        buffer.append(contentsOf: b)
        byteCount += b.count
        if buffer.count >= 1 << 20 { try? flush() }
    }

    public func writeLine(_ s: String) {
        write(s)
        write("\n")
    }

    private func flush() throws(TraceViewError) {
        guard !buffer.isEmpty else { return }
        do { try handle.write(contentsOf: buffer) } catch {
            throw .io(path: temporary ?? "<stdout>", message: "\(error)")
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes; for a file, closes it and renames it into place.
    public func commit() throws(TraceViewError) {
        guard !closed else { return }
        try flush()
        closed = true
        guard let path, let temporary else { return }
        do {
            try handle.close()
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            try FileManager.default.moveItem(atPath: temporary, toPath: path)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw .io(path: path, message: "\(error)")
        }
    }

    /// Drops a file output (the temporary is removed; `path` is left untouched).
    public func abandon() {
        guard !closed else { return }
        closed = true
        if let temporary {
            try? handle.close()
            try? FileManager.default.removeItem(atPath: temporary)
        }
    }
}

/// Errors of the trace views (beyond the container's `TraceError`).
public enum TraceViewError: Error, Equatable, Sendable, CustomStringConvertible {
    case io(path: String, message: String)
    /// The trace holds no ledger record (a killed run, or recorded without one).
    case noLedger(reason: String)
    /// The ledger records are incomplete or do not parse.
    case badLedger(String)
    case trace(TraceError)
    case usage(String)

    public var description: String {
        switch self {
        case let .io(path, message): "\(path): \(message)"
        case let .noLedger(reason): "the trace has no ledger: \(reason)"
        case let .badLedger(why): "the trace's ledger is unreadable: \(why)"
        case let .trace(e): e.description
        case let .usage(s): s
        }
    }
}
