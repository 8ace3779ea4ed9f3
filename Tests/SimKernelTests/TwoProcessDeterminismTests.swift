import Foundation
import Testing

/// The test that catches `Hasher` seeding leaks: Swift seeds its hasher per process, so any
/// Dictionary/Set iteration order that leaks into the simulation shows up only across processes.
@Suite struct TwoProcessDeterminismTests {
    @Test func kernelDigestIsIdenticalInTwoProcesses() throws {
        let imsim = try ImsimBinary.locate()
        let args = ["bench", "kernel", "--quick", "--events", "200000", "--nodes", "300", "--seed", "77", "--json", "--repetitions", "1"]
        let a = try ImsimBinary.run(imsim, args)
        let b = try ImsimBinary.run(imsim, args)
        let da = try digest(a), db = try digest(b)
        #expect(da == db)
        #expect(da.count == 16)
        let c = try ImsimBinary.run(imsim, ["bench", "kernel", "--quick", "--events", "200000", "--nodes", "300", "--seed", "78", "--json"])
        #expect(try digest(c) != da)
    }

    private func digest(_ json: String) throws -> String {
        struct R: Decodable { var digest: String }
        return try JSONDecoder().decode(R.self, from: Data(json.utf8)).digest
    }
}

/// Finds the `imsim` executable built next to the test bundle (swift test builds every product).
enum ImsimBinary {
    struct NotFound: Error, CustomStringConvertible {
        var tried: [String]
        var description: String { "imsim executable not found (tried \(tried)); run `swift build` first" }
    }

    static func locate() throws -> URL {
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

    static func run(_ exe: URL, _ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = exe
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw NSError(domain: "imsim", code: Int(p.terminationStatus), userInfo: [NSLocalizedDescriptionKey: "imsim \(args) exited \(p.terminationStatus)"])
        }
        return String(decoding: data, as: UTF8.self)
    }
}
