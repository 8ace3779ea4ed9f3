import IMWire
import SimKernel
import Testing
@testable import IMServer

/// Issue 23, item 6: the core checks signed tokens (form, MAC, account, expiry); the simulator's
/// model MAC and the runtime's HMAC-SHA256 go through this same check.
@Suite struct SignedTokenTests {
    static let signer = TokenSigner.model(key: 42)

    func connack(_ token: String, accounts: Set<String> = ["alice", "bob"]) throws -> ConnackStatus {
        var d = ServerDirectory()
        d.signer = Self.signer
        d.accounts = accounts
        var h = Harness(directory: d)
        let c = h.newConnection()
        let connect = Frame.Connect(keepAlive: 30, clientId: "mobile:b1", appKey: h.core.config.appKey, token: token)
        let out = h.send(c, .connect(connect))
        let ack = try #require(out.connack(c))
        let status = try #require(ack.status)
        if status == .accepted { #expect(ack.session?.userId == "bob") } else { #expect(out.closed(c)) }
        return status
    }

    var now: Int64 { Harness.t0 }

    @Test func aSignedTokenForAnAccountIsAccepted() throws {
        #expect(try connack(Self.signer.issue(userId: "bob", expiryMs: now + 60_000)) == .accepted)
    }

    @Test func anExpiredTokenGetsConnack10() throws {
        #expect(try connack(Self.signer.issue(userId: "bob", expiryMs: now - 1)) == .tokenExpired)
    }

    @Test(arguments: ["token-bob", "v1.bob.99999999999999", "", "v1.bob.x.00", "v1..1.00", "v1.bob.1.zz.extra"])
    func malformedTokensGetConnack4(_ token: String) throws {
        #expect(try connack(token) == .tokenIncorrect)
    }

    @Test func forgedTokensGetConnack4() throws {
        let alice = Self.signer.issue(userId: "alice", expiryMs: now + 60_000)
        // alice's MAC with bob's name; another key; a flipped MAC digit; a far expiry re-signed by nobody.
        #expect(try connack(alice.replacingOccurrences(of: "v1.alice.", with: "v1.bob.")) == .tokenIncorrect)
        #expect(try connack(TokenSigner.model(key: 43).issue(userId: "bob", expiryMs: now + 60_000)) == .tokenIncorrect)
        var flipped = Array(Self.signer.issue(userId: "bob", expiryMs: now + 60_000))
        flipped[flipped.count - 1] = flipped.last == "0" ? "1" : "0"
        #expect(try connack(String(flipped)) == .tokenIncorrect)
        let valid = Self.signer.issue(userId: "bob", expiryMs: now + 60_000)
        #expect(try connack(valid.replacingOccurrences(of: ".\(now + 60_000).", with: ".\(now + 600_000_000).")) == .tokenIncorrect)
    }

    @Test func aValidTokenForSomeoneWithoutAnAccountIsRefused() throws {
        #expect(try connack(Self.signer.issue(userId: "bob", expiryMs: now + 60_000), accounts: ["alice"]) == .tokenIncorrect)
    }
}

/// The check splits at the dots of the token's bytes.
@Suite struct SignedTokenSplitTests {
    static let signer = TokenSigner.model(key: 42)

    @Test func everyFieldIsReadAtItsDots() {
        let t = Self.signer.issue(userId: "bob", expiryMs: 2_000)
        #expect(Self.signer.check(t, nowMs: 2_000) == .valid(userId: "bob"))
        #expect(Self.signer.check(t, nowMs: 2_001) == .expired(userId: "bob"))
        #expect(Self.signer.check(t + ".", nowMs: 0) == .invalid)
        #expect(Self.signer.check("." + t, nowMs: 0) == .invalid)
        #expect(Self.signer.check(String(t.dropLast()), nowMs: 0) == .invalid)
    }

    /// A user id with non-ASCII letters, and one starting with a combining mark (a dot followed
    /// by one is one `Character`, but still the field separator).
    @Test func nonASCIIUserIdsRoundTrip() {
        for user in ["zoë", "\u{301}bob", "用户", "a\u{1F600}b"] {
            let t = Self.signer.issue(userId: user, expiryMs: 5)
            #expect(Self.signer.check(t, nowMs: 1) == .valid(userId: user))
        }
    }
}
