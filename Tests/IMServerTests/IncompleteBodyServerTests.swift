import IMWire
import Testing
@testable import IMServer

/// A body the server core builds without a required field is an effect, not a trap or an empty
/// body (issue 29).
@Suite struct IncompleteBodyServerTests {
    @Test func theCoreReportsTheBodyAndSendsItAsBuilt() throws {
        var h = Harness()
        var n = RMTPNotifyMsg()
        n.time = 7                      // `type` (required) left unset
        let bytes = h.core.built(n)
        #expect(bytes == ProtoBody.encodeBuilt(n).bytes && !bytes.isEmpty)
        guard case .event(.incompleteBody(let i))? = h.core.effects.last else {
            Issue.record("no incompleteBody effect: \(h.core.effects)")
            return
        }
        #expect(i.message == "NotifyMsg" && i.field == "type")
        #expect(i.site.hasPrefix("IMServerTests/IncompleteBodyServerTests.swift:"))
        n.type = 1
        let before = h.core.effects.count
        _ = h.core.built(n)
        #expect(h.core.effects.count == before)   // a complete body reports nothing
    }
}
