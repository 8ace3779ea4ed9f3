#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSONL file written line by line (events of `imsim serve --events`, callbacks of `imsim
/// client`). Written to `PATH.partial` and renamed to `PATH` by `close()`, so a reader never sees
/// a file that claims to be complete but is not. Loop-confined (not `Sendable`).
final class LineLog {
    let path: String
    private var file: UnsafeMutablePointer<FILE>?

    init(path: String) throws {
        self.path = path
        guard let f = fopen(path + ".partial", "w") else {
            throw RuntimeError.io(path: path + ".partial", message: String(cString: strerror(errno)))
        }
        file = f
    }

    func write(_ line: String) {
        guard let file else { return }
        fputs(line, file)
        fputc(10, file)
    }

    func close() {
        guard let f = file else { return }
        file = nil
        fclose(f)
        rename(path + ".partial", path)
    }

    deinit { close() }
}

/// Errors of the runtime, each naming the place it concerns.
public enum RuntimeError: Error, CustomStringConvertible, Equatable {
    case io(path: String, message: String)
    case badAddress(String)
    case script(path: String, step: Int?, field: String?, message: String)
    case store(path: String, message: String)

    public var description: String {
        switch self {
        case .io(let p, let m): "\(p): \(m)"
        case .badAddress(let a): "bad address \"\(a)\" (expected HOST:PORT, e.g. 127.0.0.1:7000)"
        case .script(let p, let step, let field, let m):
            "\(p)" + (step.map { ": step \($0)" } ?? "") + (field.map { ", field \"\($0)\"" } ?? "") + ": \(m)"
        case .store(let p, let m): "store \(p): \(m)"
        }
    }
}
