import Testing
@testable import MutantsCore

func points(_ src: String, _ op: MutationOperator? = nil) -> [MutationPoint] {
    MutationFinder().points(in: src).filter { op == nil || $0.op == op }
}

func mutated(_ src: String, _ op: MutationOperator) -> [String] {
    points(src, op).map { $0.applied(to: src) }
}

@Suite("Each operator's mutated text")
struct OperatorTests {
    @Test func boundary() {
        let src = "func f(a: Int, b: Int) -> Bool { return a < b || a >= b }"
        #expect(mutated(src, .boundary) == [
            "func f(a: Int, b: Int) -> Bool { return a <= b || a >= b }",
            "func f(a: Int, b: Int) -> Bool { return a < b || a > b }",
        ])
    }

    @Test func relational() {
        let src = "func f(a: Int, b: Int) -> Bool { return a == b && a != 1 }"
        #expect(mutated(src, .relational) == [
            "func f(a: Int, b: Int) -> Bool { return a == b || a != 1 }",
            "func f(a: Int, b: Int) -> Bool { return a != b && a != 1 }",
            "func f(a: Int, b: Int) -> Bool { return a == b && a == 1 }",
        ])
    }

    @Test func arithmetic() {
        let src = "func f(a: Int, b: Int) -> Int { a + b }"
        #expect(mutated(src, .arithmetic) == ["func f(a: Int, b: Int) -> Int { a - b }"])
        // Strings and arrays are left alone.
        #expect(mutated("func f(a: String) -> String { a + \"x\" }", .arithmetic).isEmpty)
    }

    @Test func constantPlusMinusOne() {
        let src = "func f(a: Int) -> Int { a * 30 }"
        #expect(mutated(src, .constant) == ["func f(a: Int) -> Int { a * 31 }", "func f(a: Int) -> Int { a * 29 }"])
        #expect(mutated("func f() -> Int { 0 }", .constant) == ["func f() -> Int { 1 }"])
        // Type limits and literals that are not expressions the selector can reach.
        #expect(points("func f() -> UInt8 { 255 }", .constant).isEmpty)
        #expect(points("enum E: Int { case a = 3 }", .constant).isEmpty)
        #expect(points("func f(x: Int) -> Int { switch x { case 4: return 1 default: return 2 } }", .constant).map(\.before) == ["1", "1", "2", "2"])
        #expect(points("func f(x: Int = 5) {}", .constant).isEmpty)
    }

    @Test func negateConditions() {
        let src = "func f(a: Int) -> Int { if a > 2 { return 1 }; guard a != 0 else { return 0 }; return a > 9 ? 3 : 4 }"
        let m = mutated(src, .negateCondition)
        #expect(m == [
            "func f(a: Int) -> Int { if !(a > 2) { return 1 }; guard a != 0 else { return 0 }; return a > 9 ? 3 : 4 }",
            "func f(a: Int) -> Int { if a > 2 { return 1 }; guard !(a != 0) else { return 0 }; return a > 9 ? 3 : 4 }",
            "func f(a: Int) -> Int { if a > 2 { return 1 }; guard a != 0 else { return 0 }; return !(a > 9) ? 3 : 4 }",
        ])
        // Bindings are not conditions to negate.
        #expect(points("func f(a: Int?) { if let a { g(a) } }", .negateCondition).isEmpty)
    }

    @Test func removeStatement() {
        let src = "func f() {\n    g()\n    x = 1\n    y += 2\n}"
        #expect(mutated(src, .removeStatement) == [
            "func f() {\n    \n    x = 1\n    y += 2\n}",
            "func f() {\n    g()\n    \n    y += 2\n}",
            "func f() {\n    g()\n    x = 1\n    \n}",
        ])
        // Initialisers, closures and calls that never return are left alone.
        #expect(points("struct S { let x: Int; init() { x = 1; g() } }", .removeStatement).isEmpty)
        #expect(points("func f() { h { g() } }", .removeStatement).count == 1)
        #expect(points("func f() { fatalError(\"x\") }", .removeStatement).isEmpty)
        // A value that is returned implicitly is no statement.
        #expect(points("func f() -> Int? { xs.firstIndex { $0 == 1 } }", .removeStatement).isEmpty)
        #expect(points("var v: [Int] { xs.map(g) }", .removeStatement).isEmpty)
        #expect(points("func f(c: Bool) -> Int { let n = if c { g() } else { h() }; return n }", .removeStatement).isEmpty)
        #expect(points("func f(c: Bool) { if c { g() } else { h() } }", .removeStatement).count == 2)
        // A `let` initialised later must keep its initialisation.
        #expect(points("func f(c: Bool) -> Int { let n: Int; if c { n = 1 } else { n = 2 }; return n }", .removeStatement).isEmpty)
        #expect(points("func f(c: Bool) -> Int { let m: Int, n: Int; if c { n = 1 } else { n = 2 }; m = n; return m }", .removeStatement).isEmpty)
        #expect(points("func f() { (a, b) = (1, 2) }", .removeStatement).isEmpty)
        #expect(points("func f(x: Int) -> Int { switch x { case 1: g() default: h() } }", .removeStatement).isEmpty)
        #expect(points("func f(x: Int) { switch x { case 1: g() default: h() } }", .removeStatement).count == 2)
        // The `;` between statements stays.
        #expect(mutated("func f() { x += 1; return }", .removeStatement) == ["func f() { ; return }"])
    }

    @Test func swapArguments() {
        let src = "func f() { g(a, b, label: c) }"
        #expect(mutated(src, .swapArguments) == ["func f() { g(b, a, label: c) }"])
        #expect(points("func f() { g(x: a, y: b) }", .swapArguments).isEmpty)
        #expect(points("func f() -> Int { max(a, b) }", .swapArguments).isEmpty)
        // Leading-dot members, strings and calls nearly always differ in type from their neighbour.
        #expect(points("func f() { g(.a, b) }", .swapArguments).isEmpty)
        #expect(points("func f() { g(\"x\", b) }", .swapArguments).isEmpty)
        #expect(mutated("func f() { g(s.a, 3) }", .swapArguments) == ["func f() { g(3, s.a) }"])
    }

    @Test func earlyReturn() {
        let src = "func f() { g() }"
        #expect(mutated(src, .earlyReturn) == ["func f() { return; g() }"])
        #expect(points("func f() -> Int { 1 }", .earlyReturn).isEmpty)
    }

    @Test func positionsAreOneBased() {
        let p = points("func f(a: Int) -> Bool {\n  return a < 2\n}", .boundary)
        #expect(p.map(\.line) == [2])
        #expect(p.map(\.column) == [10])
    }
}

@Suite("Bug-switch code paths are not mutated")
struct BugSwitchTests {
    @Test func ifGuardedByASwitchIsSkippedButItsElseIsNot() {
        let src = """
            func f(a: Int) {
                if config.bugs.contains(.b1) {
                    g(a + 1)
                } else {
                    h(a - 1)
                }
            }
            """
        let ps = points(src).filter { $0.op != .earlyReturn }
        #expect(!ps.isEmpty)
        #expect(ps.allSatisfy { $0.line == 5 })
    }

    @Test func negatedSwitchGuardsTheNormalPath() {
        let src = """
            func f(a: Int) {
                if a != 0, !config.bugs.contains(.b2) {
                    g()
                }
            }
            """
        let ps = points(src)
        #expect(ps.contains { $0.op == .removeStatement && $0.line == 3 })
        #expect(ps.contains { $0.op == .relational && $0.before == "a != 0" })
        #expect(!ps.contains { $0.before.contains("bugs") })
    }

    @Test func theRestOfABlockAfterAGuardOnASwitchIsSkipped() {
        let src = """
            func f(a: Int) {
                guard config.bugs.contains(.b6) else { return }
                g(a + 1)
            }
            func k(a: Int) {
                if settings.b11 { g(a + 1) }
                b11 = config.bugs.contains(.b11)
                let x = settings.b11 ? 1 : 2
            }
            """
        // Only k's early return (its first statement is no guard on a switch).
        #expect(points(src).map(\.op) == [.earlyReturn])
        #expect(points(src).map(\.line) == [6])
    }
}
