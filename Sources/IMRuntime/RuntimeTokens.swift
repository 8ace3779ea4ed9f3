import Crypto
import Foundation
import IMServer

/// Real login tokens for the runtime: HMAC-SHA256 (swift-crypto) with the server's secret over
/// `v1.<userId>.<expiryMs>` (`TokenSigner` in IMServer checks form, MAC, expiry and account; the
/// simulator runs the same check with a deterministic model MAC).
public enum RuntimeTokens {
    /// A secret shorter than this is refused (HMAC-SHA256 wants ≥ 32; 16 is the floor).
    public static let minimumSecretBytes = 16

    public static func signer(secret: [UInt8]) -> TokenSigner {
        // The key is rebuilt per check from the secret's bytes (SymmetricKey is not Sendable).
        TokenSigner(name: "hmac-sha256") { payload in
            Array(HMAC<SHA256>.authenticationCode(for: payload, using: SymmetricKey(data: secret)))
        }
    }

    /// A token for `userId`, valid for `validFor` from `nowMs` (server ms).
    public static func issue(userId: String, secret: [UInt8], validForMs: Int64, nowMs: Int64) -> String {
        signer(secret: secret).issue(userId: userId, expiryMs: nowMs.addingReportingOverflow(validForMs).overflow ? .max : nowMs + validForMs)
    }

    /// Reads a secret file: its bytes, without one trailing newline.
    public static func readSecret(path: String) throws(RuntimeError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .io(path: path, message: "cannot read the secret file")
        }
        var bytes = [UInt8](data)
        if bytes.last == 0x0A { bytes.removeLast() }
        if bytes.last == 0x0D { bytes.removeLast() }
        guard bytes.count >= minimumSecretBytes else {
            throw .io(path: path, message: "the secret is \(bytes.count) bytes; at least \(minimumSecretBytes) are needed (e.g. `head -c 32 /dev/urandom | base64 > FILE`)")
        }
        return bytes
    }
}
