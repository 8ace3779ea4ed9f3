import Testing
@testable import IMStore

@Suite struct StoreCopyTests {
    /// A store copied from a fresh template (what the world does per device) behaves as a newly
    /// created one: same schema version, same ids, same contents after the same operations.
    @Test func copyOfAFreshStoreBehavesAsANewStore() throws {
        let template = try memoryStore()
        let copy = try IMStore(copyOf: template, options: .init(dedupByMessageUId: false))
        let fresh = try memoryStore(dedup: false)
        #expect(try copy.schemaVersion() == Schema.currentVersion)
        #expect(copy.options.dedupByMessageUId == false)
        for s in [copy, fresh] {
            let id = try s.insertOutgoing(outgoing("mine", at: 250)).messageId
            _ = try s.markSent(messageId: id, messageUId: "M", sentTime: 260)
            _ = try store(s, incoming("A", at: 100))
            _ = try store(s, incoming("A", at: 100))
        }
        #expect(try copy.snapshot(of: alice).map { "\($0)" } == (try fresh.snapshot(of: alice).map { "\($0)" }))
        #expect(try copy.conversation(alice).map { "\($0)" } == (try fresh.conversation(alice).map { "\($0)" }))
        // The template is untouched and the copies are independent.
        #expect(try template.snapshot(of: alice).isEmpty)
    }
}
