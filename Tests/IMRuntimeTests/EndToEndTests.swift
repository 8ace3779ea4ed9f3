import IMClient
import IMReplay
import IMRuntime
import IMWire
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Runtime end to end: server + proxies + 3 clients, captures replayed")
struct RuntimeEndToEndTests {
    @Test("probe")
    func probe() async throws {
        let dir = tempPath("e2e")
        mkdir(dir, 0o755)
        let r = try await EndToEndRun.run(bobBugs: [.b1], dir: dir)
        for (u, s) in r.summaries.sorted(by: { $0.key < $1.key }) {
            print("\(u): sent \(s.sendOk)/\(s.sendFailed) received \(s.received.count) dups \(s.duplicates.count) conns \(s.connectionsOpened) connected \(s.connectedCount) lost \(s.transportsLost)")
        }
        print("quiesced \(r.quiesced) dir \(dir)")
    }
}
