/// Mutant schemata: one source text carrying every mutant of a file behind the selector global
/// `__imsimMutant` (0 = none: the original code). A mutant's branch is built from the ORIGINAL text
/// of the expression, so the nested mutants it contains appear once, in the unmutated branch, and
/// the output grows linearly (only one mutant is active at a time).
public struct Schematizer {
    public static let selectorName = "__imsimMutant"

    /// Where, in the output, a mutant's own text and its whole wrapper lie (UTF-8 offsets), to map
    /// a compiler error back to the mutant that caused it.
    public struct Span: Sendable, Equatable {
        public var id: Int
        public var branch: Range<Int>
        public var wrapper: Range<Int>
    }

    public struct Output: Sendable {
        public var text: String
        public var spans: [Span]
    }

    struct Site {
        var start: Int
        var end: Int
        var statement: Bool
        var mutants: [(id: Int, point: MutationPoint)]
        var children: [Int] = []
    }

    public static func apply(source: String, mutants: [(id: Int, point: MutationPoint)]) -> Output {
        let bytes = Array(source.utf8)
        var insertions: [Int: [String]] = [:]
        var insertionIds: [Int: [Int]] = [:]
        var sites: [Site] = []
        var index: [String: Int] = [:]
        for m in mutants {
            switch m.point.kind {
            case .insertBefore(let code):
                insertions[m.point.start, default: []].append(code.replacingOccurrences(of: "@ID@", with: String(m.id)))
                insertionIds[m.point.start, default: []].append(m.id)
            case .removeStatement, .expression:
                let stmt = m.point.kind == .removeStatement
                let k = "\(m.point.start):\(m.point.end):\(stmt)"
                if let i = index[k] { sites[i].mutants.append(m) } else {
                    index[k] = sites.count
                    sites.append(Site(start: m.point.start, end: m.point.end, statement: stmt, mutants: [m]))
                }
            }
        }
        // Outer before inner: start ascending, end descending, statements around expressions.
        sites.sort { ($0.start, -$0.end, $0.statement ? 0 : 1) < ($1.start, -$1.end, $1.statement ? 0 : 1) }
        var roots: [Int] = []
        var stack: [Int] = []
        for i in sites.indices {
            while let top = stack.last, !(sites[top].start <= sites[i].start && sites[i].end <= sites[top].end) {
                stack.removeLast()
            }
            if let top = stack.last { sites[top].children.append(i) } else { roots.append(i) }
            stack.append(i)
        }

        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        var spans: [Span] = []

        func emit(_ s: String) { out.append(contentsOf: s.utf8) }
        func copy(_ from: Int, _ to: Int, children: [Int]) {
            var p = from
            for c in children {
                copyPlain(p, sites[c].start)
                render(c)
                p = sites[c].end
            }
            copyPlain(p, to)
        }
        func copyPlain(_ from: Int, _ to: Int) {
            guard from < to else { return }
            // Insertions fall at statement starts inside this stretch.
            var p = from
            for pos in insertions.keys.sorted() where pos >= from && pos < to {
                out.append(contentsOf: bytes[p..<pos])
                insertOnce(pos)
                p = pos
            }
            out.append(contentsOf: bytes[p..<to])
        }
        var inserted: Set<Int> = []
        func insertOnce(_ pos: Int) {
            guard !inserted.contains(pos), let codes = insertions[pos] else { return }
            inserted.insert(pos)
            for (code, id) in zip(codes, insertionIds[pos]!) {
                let s = out.count
                emit(code + "; ")
                spans.append(Span(id: id, branch: s..<out.count, wrapper: s..<out.count))
            }
        }
        func render(_ i: Int) {
            let site = sites[i]
            insertOnce(site.start)
            let wrapStart = out.count
            var branches: [(Int, Range<Int>)] = []
            if site.statement {
                let id = site.mutants[0].id
                emit("if \(selectorName) != \(id) { ")
                let b = out.count
                copy(site.start, site.end, children: site.children)
                branches.append((id, b..<out.count))
                emit(" }")
            } else {
                emit("(")
                for m in site.mutants {
                    guard case .expression(let replacement) = m.point.kind else { continue }
                    emit("\(selectorName) == \(m.id) ? (")
                    let b = out.count
                    emit(replacement)
                    branches.append((m.id, b..<out.count))
                    emit(") : ")
                }
                emit("(")
                copy(site.start, site.end, children: site.children)
                emit("))")
            }
            for (id, b) in branches { spans.append(Span(id: id, branch: b, wrapper: wrapStart..<out.count)) }
        }

        copy(0, bytes.count, children: roots)
        return Output(text: String(decoding: out, as: UTF8.self), spans: spans)
    }

    /// The source file that defines the selector, added to each mutated module of the copy only.
    public static let selectorSource = """
        // Generated by Tools/mutants for mutation testing; never part of a normal build.
        #if canImport(Glibc)
        import Glibc
        #elseif canImport(Darwin)
        import Darwin
        #endif

        /// The active mutant (IMSIM_MUTANT; 0 or unset = none), read once per process.
        let \(selectorName): Int = {
            guard let p = getenv("IMSIM_MUTANT") else { return 0 }
            return Int(String(cString: p)) ?? 0
        }()

        """
}
