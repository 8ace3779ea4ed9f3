import Foundation

/// The `imsim` executable built next to the test bundle (`swift build --build-tests` builds
/// every product): the one locator and runner of the tests that run the CLI.
public enum ImsimBinary {
    public struct NotFound: Error, CustomStringConvertible {
        public var tried: [String]
        public var description: String { "imsim executable not found (tried \(tried)); run `swift build` first" }
    }

    /// What a run printed and how it exited.
    public struct Result: Sendable {
        public var status: Int32
        public var out: String
        public var err: String
    }

    public struct Failed: Error, CustomStringConvertible {
        public var args: [String]
        public var result: Result
        public var description: String { "imsim \(args.joined(separator: " ")) exited \(result.status): \(result.err.prefix(2000))" }
    }

    public static func locate() throws -> URL {
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        var tried: [String] = []
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("imsim")
            tried.append(candidate.path)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        throw NotFound(tried: tried)
    }

    /// Runs `exe` (default: the located `imsim`) with `args`; both outputs read to the end.
    public static func run(_ args: [String], exe: URL? = nil) throws -> Result {
        let p = Process()
        p.executableURL = try exe ?? locate()
        p.arguments = args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, out: String(decoding: o, as: UTF8.self),
                      err: String(decoding: e, as: UTF8.self))
    }

    /// `run`, throwing `Failed` unless it exits 0; returns standard output.
    public static func output(_ args: [String], exe: URL? = nil) throws -> String {
        let r = try run(args, exe: exe)
        guard r.status == 0 else { throw Failed(args: args, result: r) }
        return r.out
    }
}

/// A fresh, private directory (`mkdtemp`: unique even when tests run in parallel), removed by
/// the caller.
public func temporaryDirectory(_ prefix: String = "imsim-tests") throws -> URL {
    var template = Array((FileManager.default.temporaryDirectory.path + "/\(prefix)-XXXXXX").utf8CString)
    guard let p = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
    return URL(fileURLWithPath: String(cString: p), isDirectory: true)
}
