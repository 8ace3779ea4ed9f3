import IMWire
import SimKernel

/// Login tokens the server signs itself (issue 23: the runtime accepted `token-<userId>`, so
/// anyone could log in as anyone): `v1.<userId>.<expiryMs>.<mac>`, the MAC (hex) over
/// `v1.<userId>.<expiryMs>`. The core checks form, MAC, expiry and the account; the MAC function
/// is injected: HMAC-SHA256 with the server's secret in the runtime (IMRuntime, swift-crypto),
/// a deterministic keyed model in the simulator — the same check either way.
public struct TokenSigner: Sendable, Hashable {
    /// Names the MAC (equality and hashing use it: the function itself cannot be compared).
    public let name: String
    let mac: @Sendable ([UInt8]) -> [UInt8]

    public init(name: String, mac: @escaping @Sendable ([UInt8]) -> [UInt8]) {
        self.name = name
        self.mac = mac
    }

    public static func == (a: TokenSigner, b: TokenSigner) -> Bool { a.name == b.name }
    public func hash(into h: inout Hasher) { h.combine(name) }

    /// The simulator's signer: a keyed StableHash (deterministic, not cryptographic) with the
    /// same token form and the same checks as the runtime's HMAC-SHA256.
    public static func model(key: UInt64) -> TokenSigner {
        TokenSigner(name: "model-\(key)") { payload in
            var h = Digest64(key)
            h.fold(bytes: payload)
            let a = h.value
            h.fold(a ^ key)
            let b = h.value
            return (0..<8).map { UInt8(truncatingIfNeeded: a >> (8 * $0)) } + (0..<8).map { UInt8(truncatingIfNeeded: b >> (8 * $0)) }
        }
    }

    public static let version = "v1"

    /// A token for `userId` valid until `expiryMs` (server ms).
    public func issue(userId: String, expiryMs: Int64) -> String {
        let payload = "\(Self.version).\(userId).\(expiryMs)"
        return payload + "." + Hex.encode(mac(Array(payload.utf8)))
    }

    public enum Verdict: Sendable, Equatable {
        case valid(userId: String)
        case expired(userId: String)
        /// Not a token of this form, or its MAC is wrong (forged, tampered, another secret).
        case invalid
    }

    /// Checks a presented token at server time `nowMs`.
    ///
    /// The four fields are split at the ASCII dots of the UTF-8 bytes: `String.split` on
    /// `Character`s ran grapheme breaking over the whole token (~24k instructions a CONNECT), and
    /// would not split a dot that a combining mark follows.
    public func check(_ token: String, nowMs: Int64) -> Verdict {
        let bytes = token.utf8
        var dots: [String.UTF8View.Index] = []
        var i = bytes.startIndex
        while i != bytes.endIndex {
            if bytes[i] == UInt8(ascii: ".") {
                dots.append(i)
                if dots.count > 3 { return .invalid }
            }
            i = bytes.index(after: i)
        }
        guard dots.count == 3 else { return .invalid }
        // ASCII dots sit on scalar boundaries, so the slices are exact.
        let parts = [token[..<dots[0]], token[bytes.index(after: dots[0])..<dots[1]],
                     token[bytes.index(after: dots[1])..<dots[2]], token[bytes.index(after: dots[2])...]]
        guard parts[0] == Self.version, !parts[1].isEmpty, parts[1].utf8.count <= 64,
              let expiry = Int64(parts[2]), parts[3].utf8.count <= 256 else { return .invalid }
        let expected = mac(Array(bytes[..<dots[2]]))
        guard case .success(let presented) = Hex.decode(String(parts[3])), presented.count == expected.count else { return .invalid }
        // Constant time: a forger learns nothing from how long the comparison took.
        var diff: UInt8 = 0
        for (x, y) in zip(presented, expected) { diff |= x ^ y }
        guard diff == 0 else { return .invalid }
        let user = String(parts[1])
        return expiry < nowMs ? .expired(userId: user) : .valid(userId: user)
    }
}
