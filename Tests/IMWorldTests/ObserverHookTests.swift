import Foundation
import Testing

/// Observers hear of effects only once the world applied them (`world(_:device:applied:)`,
/// `world(_:serverApplied:)`, issue 29). A method still written with the old pre-apply
/// signature would compile (the protocol's default covers the requirement) and never be called:
/// this catches one left in the sources, e.g. by a branch merged after the change.
@Suite struct ObserverHookTests {
    @Test func noObserverImplementsThePreApplyHooks() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let old = try Regex(#"func world\(_ \w+: World, (device \w*:? ?Int, effects: \[ClientEffect\]|serverEffects: \[ServerEffect\])\)"#)
        var found: [String] = []
        var scanned = 0
        for dir in ["Sources", "Tests", "Tools"] {
            let e = FileManager.default.enumerator(at: root.appendingPathComponent(dir), includingPropertiesForKeys: nil)
            while let url = e?.nextObject() as? URL {
                guard url.pathExtension == "swift", let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
                scanned += 1
                for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains(old) && !line.contains("Regex(") {
                    found.append("\(url.path.dropFirst(root.path.count + 1)):\(i + 1)")
                }
            }
        }
        #expect(scanned > 100)
        #expect(found.isEmpty, "pre-apply observer hooks (use applied:/serverApplied:): \(found)")
    }
}
