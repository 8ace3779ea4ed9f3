import IMWire
import Testing
@testable import IMClient

/// A body the client core builds without a required field is a note, not a trap or an empty
/// body (issue 29).
@Suite struct IncompleteBodyClientTests {
    @Test func theCoreNotesTheBodyAndSendsItAsBuilt() throws {
        var h = Harness()
        var q = RMTPChrmPullMsg()
        q.count = 10                    // `syncTime` (required) left unset
        let bytes = h.core.built(q)
        #expect(bytes == ProtoBody.encodeBuilt(q).bytes && !bytes.isEmpty)
        guard case .note(.incompleteBody(let i))? = h.core.out.effects.last else {
            Issue.record("no incompleteBody note: \(h.core.out.effects)")
            return
        }
        #expect(i.message == "ChrmPullMsg" && i.field == "syncTime")
        #expect(i.site.hasPrefix("IMClientTests/IncompleteBodyClientTests.swift:"))
    }
}
