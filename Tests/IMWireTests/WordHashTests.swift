import Testing
import IMWire

/// `WordHash` places the server's connection table and the world's timer tables.
@Suite struct WordHashTests {
    @Test func equalConnectionIdsHashEqualAndTheSeedMatters() {
        for raw: UInt64 in [0, 1, 2, 1 << 40, .max] {
            #expect(ConnectionID(raw)._rawHashValue(seed: 17) == ConnectionID(raw)._rawHashValue(seed: 17))
            #expect(ConnectionID(raw)._rawHashValue(seed: 17) != ConnectionID(raw)._rawHashValue(seed: 18))
        }
    }

    /// The world numbers connections 0, 1, 2, …: a table keeps the hash's low bits, so
    /// consecutive ids must spread over them as a random function would (~63% of 4096 buckets
    /// filled by 4096 keys), and no two may share a full hash.
    @Test func consecutiveIdsSpreadOverTheLowBits() {
        let hashes = (0..<4096).map { ConnectionID(UInt64($0))._rawHashValue(seed: 0x5eed) }
        #expect(Set(hashes).count == 4096)
        let buckets = Set(hashes.map { $0 & 4095 }).count
        #expect(buckets > 2400 && buckets < 2800, "\(buckets) of 4096 buckets")
    }

    @Test func aDictionaryOfConnectionsKeepsEveryEntry() {
        var table: [ConnectionID: Int] = [:]
        for i in 0..<10_000 { table[ConnectionID(UInt64(i) * 3)] = i }
        for i in stride(from: 0, to: 10_000, by: 2) { table[ConnectionID(UInt64(i) * 3)] = nil }
        #expect(table.count == 5_000)
        for i in 0..<10_000 {
            #expect(table[ConnectionID(UInt64(i) * 3)] == (i % 2 == 1 ? i : nil))
            #expect(table[ConnectionID(UInt64(i) * 3 + 1)] == nil)
        }
    }
}
