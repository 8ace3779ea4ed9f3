import ArgumentParser
import Foundation
import IMSim

/// Shared input/output helpers of `imsim decode` / `imsim encode`.
enum WireIO {
    enum Framing: String, ExpressibleByArgument, CaseIterable {
        case message
        case stream
    }

    enum ByteFormat: String, ExpressibleByArgument, CaseIterable {
        case hex
        case base64
        case decimal
        case binary
    }

    static func direction(_ s: String) throws -> WireDirection {
        guard let d = WireDirection(rawValue: s) else { throw ValidationError("--direction must be c2s or s2c") }
        return d
    }

    /// Parses text of one format into byte chunks: one chunk per non-empty line (message framing
    /// takes each line as one frame; stream framing concatenates them).
    static func chunks(_ text: String, format: ByteFormat) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        for (n, line) in text.split(whereSeparator: \.isNewline).enumerated() {
            let l = line.trimmingCharacters(in: .whitespaces)
            if l.isEmpty { continue }
            switch format {
            case .hex:
                switch Hex.decode(l) {
                case .success(let b): out.append(b)
                case .failure(let e): throw ValidationError("line \(n + 1): \(e)")
                }
            case .base64:
                guard let d = Data(base64Encoded: l) else { throw ValidationError("line \(n + 1): invalid base64") }
                out.append([UInt8](d))
            case .decimal:
                out.append(try decimalBytes(l, line: n + 1))
            case .binary:
                out.append(Array(l.utf8))
            }
        }
        return out
    }

    /// Decimal bytes separated by commas/blanks: 0–255, or signed -128…-1 (two's complement, the
    /// form of RongCloud's published vectors, e.g. `-26` = 0xE6).
    static func decimalBytes(_ l: String, line: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for (k, word) in l.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).enumerated() {
            guard let v = Int(word), (-128...255).contains(v) else {
                throw ValidationError("line \(line), item \(k + 1): \"\(word)\" is not a byte (0–255, or signed -128–-1)")
            }
            bytes.append(UInt8(truncatingIfNeeded: v))
        }
        return bytes
    }

    /// JSON Lines: split at LF only (a trailing CR dropped). JSON strings may hold U+2028, U+2029
    /// and U+0085 unescaped, which Swift's `isNewline` would split at. Returns (line number, text).
    static func jsonLines(_ text: String) -> [(Int, String)] {
        var out: [(Int, String)] = []
        for (n, raw) in text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            var bytes = raw
            if bytes.last == 0x0D { bytes = bytes.dropLast() }
            let line = String(decoding: bytes, as: UTF8.self)
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            out.append((n + 1, line))
        }
        return out
    }

    static func readFile(_ path: String, limit: Int = .max) throws -> [UInt8] {
        let reader = try ChunkReader(path: path)
        var out: [UInt8] = []
        while true {
            let c = try reader.next()
            if c.isEmpty { return out }
            out += c
            if out.count > limit { throw ValidationError("\(path): more than \(limit) bytes (one message-framed frame at most)") }
        }
    }

    /// Reads a file ('-' = stdin) in fixed-size chunks (bounded memory for large inputs).
    final class ChunkReader {
        let handle: FileHandle
        let path: String
        let size: Int

        init(path: String, chunkSize: Int = 64 << 10) throws {
            self.path = path
            size = chunkSize
            if path == "-" {
                handle = FileHandle.standardInput
            } else {
                guard let h = FileHandle(forReadingAtPath: path) else { throw ValidationError("cannot read \(path)") }
                handle = h
            }
        }

        /// The next chunk; empty at the end of the file.
        func next() throws -> [UInt8] {
            do {
                return [UInt8](try handle.read(upToCount: size) ?? Data())
            } catch {
                throw ValidationError("cannot read \(path): \(error.localizedDescription)")
            }
        }
    }

    static func readStdinText() -> String {
        String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }

    static func format(_ bytes: [UInt8], as f: ByteFormat) -> String {
        switch f {
        case .hex: Hex.encode(bytes)
        case .base64: Data(bytes).base64EncodedString()
        case .decimal: bytes.map(String.init).joined(separator: ", ")
        case .binary: ""
        }
    }

    /// Writes via a temporary file and a rename: never a half-written output.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let tmp = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())")
        try Data(bytes).write(to: tmp)
        if FileManager.default.fileExists(atPath: url.path) {
            _ = try FileManager.default.replaceItemAt(url, withItemAt: tmp)
        } else {
            try FileManager.default.moveItem(at: tmp, to: url)
        }
    }

    static func printNote(_ message: String) {
        FileHandle.standardError.write(Data("\(message)\n".utf8))
    }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    }
}
