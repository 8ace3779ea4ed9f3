import Foundation
import Testing
@testable import MutantsCore

/// A small program with every operator; its output depends on each mutated place. Declarations
/// only, inside `enum P`, so that every mutant alone can live in the same test binary as `P<id>`.
let program = """
    enum P {
        static var trace: [Int] = []
        static func record(_ x: Int, _ y: Int) { trace.append(x * 1000 + y) }
        static func classify(_ a: Int, _ b: Int) -> Int {
            var total = 0
            if a < b { total += 10 }
            if a == b && b >= 2 { total += 100 }
            total = total + a - b
            record(a, b)
            return a > 4 ? total : -total
        }
        static func run(_ pairs: [(Int, Int)]) -> String {
            trace = []
            var out: [Int] = []
            for (a, b) in pairs { out.append(classify(a, b)) }
            return "\\(out) \\(trace)"
        }
    }

    """

let pairs = "[(1, 2), (3, 3), (5, 1), (2, 2), (0, 7), (9, 9)]"

func tempDir(_ name: String) throws -> URL {
    // A directory of its own per call: tests run in parallel, and a shared name let one test's
    // fixture be removed under another's copy.
    let d = FileManager.default.temporaryDirectory.appendingPathComponent("imsim-mutants-tests-\(name)-\(getpid())-\(UUID().uuidString)")
    try? FileManager.default.removeItem(at: d)
    try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
    return d
}

struct CompileError: Error { var log: String }

/// Compiles the files into an executable, runs it once per environment, returns the outputs.
func compileAndRun(_ files: [String: String], dir: URL, environments: [[String: String]]) throws -> [String] {
    var paths: [String] = []
    for (name, text) in files.sorted(by: { $0.key < $1.key }) {
        let p = dir.appendingPathComponent(name)
        try text.write(to: p, atomically: true, encoding: .utf8)
        paths.append(p.path)
    }
    let exe = dir.appendingPathComponent("prog").path
    let c = Process()
    c.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    c.arguments = ["swiftc", "-Onone", "-swift-version", "5", "-module-name", "Prog", "-o", exe] + paths
    let err = Pipe()
    c.standardError = err
    try c.run()
    let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    c.waitUntilExit()
    guard c.terminationStatus == 0 else { throw CompileError(log: errText) }
    return try environments.map { env in
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.environment = env
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return out
    }
}

@Suite("Mutant schemata", .serialized)
struct SchemataTests {
    @Test("The schematised program compiles; unset and 0 behave as the original; each id behaves as its mutant alone")
    func schemataMatchEachMutantAlone() throws {
        let pts = MutationFinder().points(in: program)
        #expect(Set(pts.map(\.op)) == Set(MutationOperator.allCases))
        let numbered = pts.enumerated().map { (id: $0.offset + 1, point: $0.element) }
        let schema = Schematizer.apply(source: program, mutants: numbered)
        #expect(!program.contains(Schematizer.selectorName))

        // One binary: the schemata, run under each selector value.
        let envs: [[String: String]] = [[:]] + ([0] + numbered.map(\.id)).map { ["IMSIM_MUTANT": String($0)] }
        let got = try compileAndRun(["main.swift": schema.text + "print(P.run(\(pairs)))\n",
                                     "selector.swift": Schematizer.selectorSource],
                                    dir: try tempDir("schema"), environments: envs)
        // Another: the original and every mutant written out alone (as P<id>).
        var alone = program
        var driver = "print(P.run(\(pairs)))\n"
        for (id, p) in numbered {
            alone += p.applied(to: program).replacingOccurrences(of: "enum P {", with: "enum P\(id) {")
            driver += "print(P\(id).run(\(pairs)))\n"
        }
        let lines = try compileAndRun(["main.swift": alone + driver], dir: try tempDir("alone"), environments: [[:]])[0]
            .split(separator: "\n").map { String($0) + "\n" }
        try #require(lines.count == numbered.count + 1)
        let original = lines[0]
        #expect(got[0] == original)
        #expect(got[1] == original)
        var observed = 0
        for (i, (id, p)) in numbered.enumerated() {
            #expect(got[i + 2] == lines[i + 1], "mutant \(id) \(p.op) \(p.before) → \(p.after)")
            if lines[i + 1] != original { observed += 1 }
        }
        // The selector really selects: most mutants change this program's output.
        #expect(observed >= numbered.count / 2)
    }

    @Test("A compiler error inside a mutant's text is blamed on that mutant")
    func blame() throws {
        let src = "func f(a: Int, b: Int) -> Bool { return a < b }\n"
        let pts = MutationFinder().points(in: src).enumerated().map { (id: $0.offset + 1, point: $0.element) }
        let schema = Schematizer.apply(source: src, mutants: pts)
        let boundary = try #require(pts.first { $0.point.op == .boundary })
        let span = try #require(schema.spans.first { $0.id == boundary.id })
        let col = span.branch.lowerBound + 1
        let log = "/x/pkg/Sources/IMServer/A.swift:1:\(col): error: cannot convert value\n"
        let keys = Dictionary(uniqueKeysWithValues: pts.map { ($0.id, "key\($0.id)") })
        let (blamed, unexplained) = Generator.blame(log: log, copyRoot: URL(fileURLWithPath: "/x/pkg"),
                                                    spans: ["Sources/IMServer/A.swift": schema.spans],
                                                    texts: ["Sources/IMServer/A.swift": schema.text], keys: keys)
        #expect(blamed == ["key\(boundary.id)"])
        #expect(unexplained.isEmpty)
    }
}

@Suite("Generation over a package")
struct GeneratorTests {
    func fixture() throws -> URL {
        let root = try tempDir("pkg")
        let files = [
            "Sources/IMServer/B.swift": "func b(x: Int) -> Bool { x < 3 }\n",
            "Sources/IMServer/A.swift": "func a(x: Int) { if x == 1 { g() } }\n",
            "Sources/IMClient/Sub/Z.swift": "func z(x: Int) -> Int { x + 1 }\n",
            "Sources/IMStore/StoreBenchmark.swift": "func s(x: Int) -> Int { x + 1 }\n",
            "Sources/IMWire/W.swift": "func w(x: Int) -> Int { x + 1 }\n",
            "Package.swift": "// swift-tools-version: 6.1\n",
        ]
        for (path, text) in files {
            let u = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: u.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: u, atomically: true, encoding: .utf8)
        }
        return root
    }

    @Test("Sorted files, only the three cores, no benchmark files")
    func files() throws {
        let g = Generator(root: try fixture())
        #expect(try g.files() == ["Sources/IMClient/Sub/Z.swift", "Sources/IMServer/A.swift", "Sources/IMServer/B.swift"])
    }

    @Test("Generation is deterministic: the same ids and keys on every run")
    func deterministic() throws {
        let g = Generator(root: try fixture())
        let a = try g.mutants().manifest.mutants
        let b = try g.mutants().manifest.mutants
        #expect(a == b)
        #expect(a.map(\.id) == Array(1...a.count))
        #expect(a.first?.file == "Sources/IMClient/Sub/Z.swift")
        #expect(a.map(\.file) == a.map(\.file).sorted())
        #expect(Set(a.map(\.key)).count == a.count)
        #expect(a.contains { $0.key == "Sources/IMServer/B.swift:1:26:boundary" })
    }

    @Test("Dropped keys leave the others' keys unchanged; the copy holds the selector only in the cores")
    func dropAndCopy() throws {
        let root = try fixture()
        let g = Generator(root: root)
        let all = try g.mutants().manifest.mutants
        let drop = all[1].key
        let (m, files) = try g.mutants(drop: [drop])
        #expect(m.mutants.map(\.key) == all.map(\.key).filter { $0 != drop })
        let out = root.appendingPathComponent(".build-mutants/pkg")
        try g.writeCopy(to: out, files: files)
        let b = try String(contentsOf: out.appendingPathComponent("Sources/IMServer/B.swift"), encoding: .utf8)
        #expect(b.contains("__imsimMutant =="))
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("Sources/IMServer/\(Generator.selectorFile)").path))
        let w = try String(contentsOf: out.appendingPathComponent("Sources/IMWire/W.swift"), encoding: .utf8)
        #expect(w == "func w(x: Int) -> Int { x + 1 }\n")
        // The original tree is untouched.
        #expect(try String(contentsOf: root.appendingPathComponent("Sources/IMServer/B.swift"), encoding: .utf8)
                == "func b(x: Int) -> Bool { x < 3 }\n")
    }

    @Test("No selector in the real package's normal sources")
    func noSelectorInSources() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let e = try #require(FileManager.default.enumerator(atPath: root.appendingPathComponent("Sources").path))
        var checked = 0
        for case let rel as String in e where rel.hasSuffix(".swift") {
            let text = try String(contentsOf: root.appendingPathComponent("Sources/\(rel)"), encoding: .utf8)
            #expect(!text.contains(Schematizer.selectorName) && !text.contains("IMSIM_MUTANT"), "\(rel)")
            checked += 1
        }
        #expect(checked > 50)
    }

    @Test("The real cores yield mutants of every operator, none in bug-switch lines")
    func realCores() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let m = try Generator(root: root).mutants().manifest.mutants
        #expect(m.count > 500)
        #expect(Set(m.map(\.op)) == Set(MutationOperator.allCases))
        #expect(Set(m.map(\.module)) == ["IMClient", "IMServer", "IMStore"])
        #expect(!m.contains { $0.before.contains("bugs.") || $0.after.contains("bugs.") })
    }
}
