import Foundation

/// Finds every mutant of the cores, numbers them, and writes the schematised copy of the package.
public struct Generator {
    public static let modules = ["IMClient", "IMServer", "IMStore"]
    /// Debug, benchmark and oracle-support files: not production behaviour.
    public static let excludedFiles: Set<String> = [
        "Sources/IMStore/IMStore+Invariants.swift",
        "Sources/IMStore/StoreBenchmark.swift",
        "Sources/IMServer/ServerBenchmark.swift",
        "Sources/IMClient/ClientBenchmark.swift",
    ]
    /// What the copy needs to build `imsim` (the test targets must exist for the manifest).
    public static let copied = ["Package.swift", "Package.resolved", "Sources", "Tests", "Tools/imsim", "Tools/Benchmarks"]
    public static let selectorFile = "__IMSimMutantSelector.swift"

    public let root: URL
    public init(root: URL) { self.root = root.standardizedFileURL }

    /// The mutated files, relative to the root, in sorted order.
    public func files() throws -> [String] {
        var result: [String] = []
        let fm = FileManager.default
        for module in Self.modules {
            let dir = root.appendingPathComponent("Sources/\(module)")
            guard let e = fm.enumerator(atPath: dir.path) else { continue }
            for case let rel as String in e where rel.hasSuffix(".swift") {
                let path = "Sources/\(module)/\(rel)"
                if !Self.excludedFiles.contains(path) { result.append(path) }
            }
        }
        return result.sorted()
    }

    public struct FileMutants {
        public var file: String
        public var source: String
        public var points: [(id: Int, point: MutationPoint)]
    }

    /// Every mutant (minus `drop` keys), ids 1…N in sorted file order then source order.
    public func mutants(drop: Set<String> = []) throws -> (manifest: MutantManifest, files: [FileMutants]) {
        let finder = MutationFinder()
        var all: [Mutant] = []
        var perFile: [FileMutants] = []
        let files = try files()
        var next = 1
        for file in files {
            let source = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            var seen: [String: Int] = [:]
            var pts: [(id: Int, point: MutationPoint)] = []
            for p in finder.points(in: source) {
                var key = "\(file):\(p.line):\(p.column):\(p.op.rawValue)\(p.variant)"
                seen[key, default: 0] += 1
                if let n = seen[key], n > 1 { key += "#\(n)" }
                if drop.contains(key) { continue }
                let module = file.split(separator: "/")[1]
                all.append(Mutant(id: next, key: key, module: String(module), file: file, line: p.line, column: p.column, function: p.function,
                                  op: p.op, before: p.before, after: p.after))
                pts.append((next, p))
                next += 1
            }
            perFile.append(FileMutants(file: file, source: source, points: pts))
        }
        return (MutantManifest(root: root.path, files: files, mutants: all, droppedUncompilable: drop.sorted()), perFile)
    }

    /// Writes the schematised copy under `out` (only files whose content changed, so rebuilds
    /// stay incremental) and returns the spans per file for error mapping.
    @discardableResult
    public func writeCopy(to out: URL, files: [FileMutants]) throws -> [String: [Schematizer.Span]] {
        let fm = FileManager.default
        try fm.createDirectory(at: out, withIntermediateDirectories: true)
        var wanted: [String: Data] = [:]
        for entry in Self.copied {
            let src = root.appendingPathComponent(entry)
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: src.path, isDirectory: &isDir) else { continue }
            if isDir.boolValue {
                guard let e = fm.enumerator(atPath: src.path) else { continue }
                for case let rel as String in e {
                    var d: ObjCBool = false
                    let p = src.appendingPathComponent(rel)
                    if fm.fileExists(atPath: p.path, isDirectory: &d), !d.boolValue {
                        wanted["\(entry)/\(rel)"] = try Data(contentsOf: p)
                    }
                }
            } else {
                wanted[entry] = try Data(contentsOf: src)
            }
        }
        var spans: [String: [Schematizer.Span]] = [:]
        for f in files {
            let o = Schematizer.apply(source: f.source, mutants: f.points)
            wanted[f.file] = Data(o.text.utf8)
            spans[f.file] = o.spans
        }
        for m in Self.modules { wanted["Sources/\(m)/\(Self.selectorFile)"] = Data(Schematizer.selectorSource.utf8) }
        for (rel, data) in wanted.sorted(by: { $0.key < $1.key }) {
            let dst = out.appendingPathComponent(rel)
            if let old = try? Data(contentsOf: dst), old == data { continue }
            try fm.createDirectory(at: dst.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: dst, options: .atomic)
        }
        // Files deleted from the source since the last copy.
        for entry in ["Sources", "Tests", "Tools"] {
            let dir = out.appendingPathComponent(entry)
            guard let e = fm.enumerator(atPath: dir.path) else { continue }
            for case let rel as String in e {
                let key = "\(entry)/\(rel)"
                var d: ObjCBool = false
                if fm.fileExists(atPath: dir.appendingPathComponent(rel).path, isDirectory: &d), !d.boolValue, wanted[key] == nil {
                    try? fm.removeItem(at: dir.appendingPathComponent(rel))
                }
            }
        }
        return spans
    }

    /// Compiler errors (`path:line:col: error:`) in the copy, mapped to the mutants that caused
    /// them: the innermost mutant whose own text holds the error, else every mutant of the
    /// innermost wrapper. Errors no mutant explains are returned apart (a generator bug).
    public static func blame(log: String, copyRoot: URL, spans: [String: [Schematizer.Span]],
                             texts: [String: String], keys: [Int: String]) -> (keys: Set<String>, unexplained: [String]) {
        var blamed: Set<String> = []
        var unexplained: [String] = []
        let prefix = copyRoot.standardizedFileURL.path + "/"
        for line in log.split(separator: "\n") where line.contains(": error: ") {
            let parts = line.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
            guard parts.count == 4, let ln = Int(parts[1]), let col = Int(parts[2]) else { continue }
            var path = String(parts[0])
            if path.hasPrefix(prefix) { path.removeFirst(prefix.count) }
            guard let fileSpans = spans[path], let text = texts[path] else { unexplained.append(String(line)); continue }
            let offset = utf8Offset(in: text, line: ln, column: col)
            let inBranch = fileSpans.filter { $0.branch.contains(offset) || $0.branch.upperBound == offset }
            if let best = inBranch.min(by: { $0.branch.count < $1.branch.count }) {
                if let k = keys[best.id] { blamed.insert(k) }
                continue
            }
            let inWrapper = fileSpans.filter { $0.wrapper.contains(offset) }
            if let best = inWrapper.min(by: { $0.wrapper.count < $1.wrapper.count }) {
                for s in fileSpans where s.wrapper == best.wrapper { if let k = keys[s.id] { blamed.insert(k) } }
                continue
            }
            // An error outside every mutant's text, caused by one nearby (type inference of a
            // closure or of a long expression fails as a whole, a switch loses its value): every
            // mutant within 6 lines before and 3 after.
            let lo = utf8Offset(in: text, line: max(1, ln - 6), column: 1)
            let hi = utf8Offset(in: text, line: ln + 4, column: 1)
            let near = fileSpans.filter { $0.wrapper.overlaps(lo..<max(lo, hi)) }
            if !near.isEmpty {
                for s in near { if let k = keys[s.id] { blamed.insert(k) } }
                continue
            }
            unexplained.append(String(line))
        }
        return (blamed, unexplained)
    }

    static func utf8Offset(in text: String, line: Int, column: Int) -> Int {
        var l = 1, off = 0
        for b in text.utf8 {
            if l == line { break }
            off += 1
            if b == UInt8(ascii: "\n") { l += 1 }
        }
        return off + column - 1
    }
}
