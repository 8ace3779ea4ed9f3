import ArgumentParser
import Foundation
import IMSim

struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a login token for USER signed with the server's secret (imsim serve --secret).",
        discussion: """
            The token is v1.<user>.<expiryMs>.<HMAC-SHA256 hex> (Docs/runtime.md): only a server \
            with the same secret accepts it, for that user, until it expires.
            """
    )

    @Argument(help: "User id.") var user: String
    @Option(help: "Secret file (the one given to imsim serve --secret).") var secret: String
    @Option(name: .customLong("valid-for"), help: "How long the token is valid (e.g. 24h, 30m).") var validFor = "24h"

    func run() throws {
        let valid = try RuntimeCLI.duration(validFor, option: "--valid-for")
        guard valid.nanoseconds > 0 else { throw ValidationError("--valid-for must be positive") }
        guard !user.isEmpty, user.utf8.count <= 64, !user.contains(".") else { throw ValidationError("USER must be 1…64 bytes without '.'") }
        let key: [UInt8]
        do { key = try RuntimeTokens.readSecret(path: secret) } catch { throw ValidationError("--secret: \(error)") }
        print(RuntimeTokens.issue(userId: user, secret: key, validForMs: valid.nanoseconds / 1_000_000, nowMs: WallClock.osEpochMs()))
    }
}
