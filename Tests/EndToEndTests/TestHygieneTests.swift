import Foundation
import Testing

/// Issue 23, item 9: tests that depend on the machine. These read the test sources: a seed
/// sweep that draws fresh seeds or an assertion on wall time is found before it flakes.
@Suite struct TestHygieneTests {
    static let testsDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    @Test func seedSweepPropertiesArePinned() throws {
        let text = try String(contentsOf: Self.testsDir.appendingPathComponent("EndToEndTests/SeedSweepPropertyTests.swift"), encoding: .utf8)
        // Every test whose body runs propertyCheck carries a .fixedSeed trait.
        let tests = text.components(separatedBy: "@Test").dropFirst()
        var checked = 0
        for t in tests where t.contains("expectNoViolation(") && !t.contains("withKnownIssue") {
            let head = t.prefix(while: { $0 != "{" })
            // A sweep draws its seeds from pinnedSeeds, never from a fresh generator.
            #expect(!t.contains("Gen.") && !t.contains("propertyCheck("), "unpinned: \(head.prefix(80))")
            if t.contains("pinnedSeeds(") { checked += 1 }
        }
        #expect(checked >= 5)
    }

    @Test func noTestAssertsOnWallTime() throws {
        let fm = FileManager.default
        let files = fm.enumerator(atPath: Self.testsDir.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted() ?? []
        #expect(!files.isEmpty)
        for f in files where !f.hasSuffix("TestHygieneTests.swift") {
            let text = try String(contentsOf: Self.testsDir.appendingPathComponent(f), encoding: .utf8)
            for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("#expect(") && (line.contains("ContinuousClock") || line.contains("Date()")) {
                Issue.record("\(f):\(i + 1) asserts on wall time: \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }
}
