import Foundation
import MutantsCore

// imsim-mutants: the mutant generator behind `imsim bench mutants` (Docs/mutants.md).
let usage = """
    usage: imsim-mutants list  [--root DIR] [--json]
           imsim-mutants schema --out FILE [--root DIR]
           imsim-mutants build [--root DIR] [--out DIR] [--max-rounds N] [--configuration release|debug]

    list   print every mutant of Sources/IMClient, IMServer and IMStore (id, file:line:column,
           operator, before → after); --json prints the manifest.
    schema print the schematised text of one file (ids numbered within the file).
    build  write the schematised copy to OUT/pkg (default OUT: ROOT/.build-mutants), build its
           imsim (release unless --configuration debug; scratch OUT/build), drop the mutants the compiler rejects
           (remembered in OUT/dropped.txt) and rebuild, then write OUT/mutants.json.
           Prints the binary's path last.
    """

func fail(_ msg: String, code: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("imsim-mutants: \(msg)\n".utf8))
    exit(code)
}

var args = Array(CommandLine.arguments.dropFirst())
guard let command = args.first else { print(usage); exit(0) }
args.removeFirst()
var root = FileManager.default.currentDirectoryPath
var outDir: String?
var json = false
var maxRounds = 12
var configuration = "release"
while !args.isEmpty {
    let a = args.removeFirst()
    func value() -> String {
        guard !args.isEmpty else { fail("\(a) needs a value") }
        return args.removeFirst()
    }
    switch a {
    case "--root": root = value()
    case "--out": outDir = value()
    case "--json": json = true
    case "--configuration":
        configuration = value()
        guard ["release", "debug"].contains(configuration) else { fail("--configuration: release or debug") }
    case "--max-rounds": guard let n = Int(value()), n > 0 else { fail("--max-rounds: a positive number") }; maxRounds = n
    case "-h", "--help": print(usage); exit(0)
    default: fail("unknown argument \(a)\n\(usage)")
    }
}
let rootURL = URL(fileURLWithPath: root)
guard FileManager.default.fileExists(atPath: rootURL.appendingPathComponent("Sources/IMServer").path) else {
    fail("\(root): not an IMSim package (no Sources/IMServer)")
}
let gen = Generator(root: rootURL)

func encode(_ m: MutantManifest) throws -> Data {
    let e = JSONEncoder()
    e.outputFormatting = [.prettyPrinted, .sortedKeys]
    return try e.encode(m)
}

switch command {
case "list":
    let (manifest, _) = try gen.mutants()
    if json {
        FileHandle.standardOutput.write(try encode(manifest))
        print()
    } else {
        for m in manifest.mutants {
            let flat = { (s: String) in s.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ") }
            print("\(m.id)\t\(m.file):\(m.line):\(m.column)\t\(m.op.rawValue)\t\(m.function)\t\(flat(m.before)) → \(flat(m.after))")
        }
        print("\(manifest.mutants.count) mutants in \(manifest.files.count) files")
    }

case "schema":
    // The schematised text of one file (ids numbered within the file): what the copy holds.
    guard let file = outDir else { fail("schema needs --out FILE (a path under the root)") }
    let source = try String(contentsOfFile: rootURL.appendingPathComponent(file).path, encoding: .utf8)
    let pts = MutationFinder().points(in: source).enumerated().map { (id: $0.offset + 1, point: $0.element) }
    print(Schematizer.apply(source: source, mutants: pts).text)

case "build":
    let out = URL(fileURLWithPath: outDir ?? rootURL.appendingPathComponent(".build-mutants").path)
    let pkg = out.appendingPathComponent("pkg")
    let dropFile = out.appendingPathComponent("dropped.txt")
    try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
    var drop = Set(((try? String(contentsOf: dropFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init))
    for round in 1...maxRounds {
        let (manifest, files) = try gen.mutants(drop: drop)
        let spans = try gen.writeCopy(to: pkg, files: files)
        FileHandle.standardError.write(Data("imsim-mutants: round \(round): \(manifest.mutants.count) mutants, building the schematised copy…\n".utf8))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["swift", "build", "-c", configuration, "--package-path", pkg.path,
                       "--scratch-path", out.appendingPathComponent("build").path, "--product", "imsim"]
        let logURL = out.appendingPathComponent("build.log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        p.standardOutput = log
        p.standardError = log
        try p.run()
        p.waitUntilExit()
        try log.close()
        if p.terminationStatus == 0 {
            try encode(manifest).write(to: out.appendingPathComponent("mutants.json"), options: .atomic)
            print(out.appendingPathComponent("build/\(configuration)/imsim").path)
            exit(0)
        }
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        var texts: [String: String] = [:]
        for f in files { texts[f.file] = try String(contentsOf: pkg.appendingPathComponent(f.file), encoding: .utf8) }
        let keys = Dictionary(uniqueKeysWithValues: manifest.mutants.map { ($0.id, $0.key) })
        let (blamed, unexplained) = Generator.blame(log: text, copyRoot: pkg, spans: spans, texts: texts, keys: keys)
        if blamed.isEmpty {
            fail("the schematised copy does not build and no mutant explains it (see \(logURL.path)):\n"
                 + (unexplained.isEmpty ? String(text.suffix(2000)) : unexplained.prefix(10).joined(separator: "\n")), code: 1)
        }
        FileHandle.standardError.write(Data("imsim-mutants: dropping \(blamed.count) mutant(s) the compiler rejects\n".utf8))
        drop.formUnion(blamed)
        try (drop.sorted().joined(separator: "\n") + "\n").write(to: dropFile, atomically: true, encoding: .utf8)
    }
    fail("still not building after \(maxRounds) rounds (see \(out.path)/build.log)", code: 1)

default:
    fail("unknown command \(command)\n\(usage)")
}
