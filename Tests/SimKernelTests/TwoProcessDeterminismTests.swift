import Foundation
import IMSimTestSupport
import Testing

/// The test that catches `Hasher` seeding leaks: Swift seeds its hasher per process, so any
/// Dictionary/Set iteration order that leaks into the simulation shows up only across processes.
@Suite struct TwoProcessDeterminismTests {
    @Test func kernelDigestIsIdenticalInTwoProcesses() throws {
        let imsim = try ImsimBinary.locate()
        let args = ["bench", "kernel", "--quick", "--events", "200000", "--nodes", "300", "--seed", "77", "--json", "--repetitions", "1"]
        let a = try ImsimBinary.output(args, exe: imsim)
        let b = try ImsimBinary.output(args, exe: imsim)
        let da = try digest(a), db = try digest(b)
        #expect(da == db)
        #expect(da.count == 16)
        let c = try ImsimBinary.output(["bench", "kernel", "--quick", "--events", "200000", "--nodes", "300", "--seed", "78", "--json"], exe: imsim)
        #expect(try digest(c) != da)
    }

    private func digest(_ json: String) throws -> String {
        struct R: Decodable { var digest: String }
        return try JSONDecoder().decode(R.self, from: Data(json.utf8)).digest
    }
}

