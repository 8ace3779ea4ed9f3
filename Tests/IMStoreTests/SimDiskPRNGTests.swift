import Foundation
import IMSimTestSupport
import Testing
@testable import IMStore

/// SQLite's own PRNG (WAL salts, journal nonces) is reseeded from the device on every open of its
/// database (Docs/store.md, "SQLite's own PRNG"). The PRNG is process-wide and other suites draw
/// from it on parallel threads, so each case runs in a fresh `imsim store wal-salt` process.
@Suite struct SimDiskPRNGTests {
    private func salt(seed: UInt64) throws -> String {
        try ImsimBinary.output(["store", "wal-salt", "--seed", "\(seed)"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func walSaltsDependOnTheDeviceSeedOnly() throws {
        let a = try salt(seed: 7), b = try salt(seed: 7), c = try salt(seed: 8)
        #expect(a.count == 16)
        #expect(a == b, "two processes, same device seed: SQLite's PRNG was not reseeded from it")
        #expect(a != c)
    }

    @Test func bytesOfReadsWhatWasWritten() throws {
        let disk = SimDisk(seed: 3)
        let store = try IMStore(copyOf: IMStore.inMemory(), on: disk)
        #expect(disk.bytes(of: "store.db", count: 16) == Array("SQLite format 3\0".utf8))
        #expect(disk.bytes(of: "no-such-file", count: 4) == nil)
        store.close()
    }
}
