import IMWire
import Testing
@testable import IMWorld

/// The SDK's target-id normalisation the duplicate-conversation check (B10) relies on.
@Suite struct NoDuplicateTrimTests {
    @Test func trimsWhitespaceAtEitherEndOnly() {
        func t(_ s: String) -> String? { NoDuplicateOracle.trimmed(ConversationKey(.privateChat, s))?.targetId }
        #expect(t("bob") == nil)
        #expect(t("b ob") == nil)
        #expect(t("é") == nil)
        #expect(t("用户") == nil)
        #expect(t(" bob") == "bob")
        #expect(t("bob\t") == "bob")
        #expect(t("\n bob \r") == "bob")
        #expect(t("\u{3000}bob") == "bob")  // ideographic space: not ASCII, still whitespace
        #expect(t("bob\u{a0}") == "bob")
        #expect(NoDuplicateOracle.trimmed(ConversationKey(.group, " g1"))?.type == .group)
    }
}
