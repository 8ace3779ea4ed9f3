import Foundation
import Testing

/// Docs/property-testing.md shows PropertyTestingExampleTests.swift verbatim (less its two-line
/// header comment): the example a user pastes is the one CI compiles and runs.
@Suite struct PropertyTestingDocTests {
    @Test func theDocShowsTheTestedExample() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let example = try String(contentsOf: root.appendingPathComponent("Tests/EndToEndTests/PropertyTestingExampleTests.swift"),
                                 encoding: .utf8)
        let doc = try String(contentsOf: root.appendingPathComponent("Docs/property-testing.md"), encoding: .utf8)
        let body = example.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0.hasPrefix("//") }.joined(separator: "\n")
        #expect(body.hasPrefix("import IMSim"))
        #expect(doc.contains("```swift\n" + body + "```\n"), "Docs/property-testing.md no longer shows PropertyTestingExampleTests.swift verbatim")
    }
}
