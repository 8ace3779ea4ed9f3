import Benchmarks
import IMWire
import Testing
@testable import IMStore

@Suite struct ModelTests {
    @Test func flagsMatchMessagePersistentAndWireBits() {
        #expect(MessageFlags(persistent: .isCounted) == [.persisted, .counted])
        #expect(MessageFlags(persistent: .isCounted).rawValue == MessagePersistent.isCounted.rawValue)
        #expect(MessageFlags(persistent: .isPersisted) == .persisted)
        #expect(MessageFlags(persistent: .none) == [])
        #expect(MessageFlags(persistent: .status) == .status)
        #expect(MessageFlags(persistent: .isCounted, mentioned: true).rawValue == 7)
        for p in [MessagePersistent.none, .isPersisted, .isCounted, .status] {
            #expect(MessageFlags(persistent: p, mentioned: true).persistent == p)
        }
    }

    @Test func benchmarkUIdsAreDistinctAndShaped() {
        let uids = (0..<20_000).map { StoreBenchmark.messageUId(UInt64($0)) }
        #expect(Set(uids).count == uids.count)
        #expect(uids.allSatisfy { $0.count == 19 && $0.split(separator: "-").map(\.count) == [4, 4, 4, 4] })
        #expect(StoreBenchmark.messageUId(7) == StoreBenchmark.messageUId(7))
    }
}
