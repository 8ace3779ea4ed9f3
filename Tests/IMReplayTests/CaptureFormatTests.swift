import Foundation
import IMClient
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMReplay

/// The capture format: recorder output reads back as the same records; zstd round trip.
@Suite struct CaptureFormatTests {
    static func header(bugs: [BugSwitch] = []) -> CaptureHeader {
        var config = ClientConfig()
        config.bugs = ClientBugs(bugs)
        try! config.registry.register("App:Like", flags: MessageTypeFlags(persistent: .isPersisted, offline: false, push: false, chatroomPriority: .low))
        return CaptureHeader(identity: DeviceIdentity(userId: "alice", deviceId: "alice-phone", platform: .mobile),
                             config: config, storeOptions: IMStore.Options(dedupByMessageUId: false), startMs: 1_000,
                             sdk: "test", source: "unit test")
    }

    @Test func headerRoundTrip() throws {
        let h = Self.header(bugs: [.B1, .B6])
        let back = try CaptureHeader(json: h.json)
        #expect(back == h)
        #expect(back.bugs == [.B1, .B6])
        #expect(back.config.registry.flags(for: "App:Like")?.chatroomPriority == .low)
        #expect(back.storeOptions.dedupByMessageUId == false)
    }

    @Test(arguments: [false, true]) func recorderOutputReadsBack(compressed: Bool) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imreplay-\(compressed)-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent(compressed ? "c.jsonl.zst" : "c.jsonl").path
        let rec = try CaptureRecorder(header: Self.header(), path: path)
        let store = try IMStore(location: .memory)
        var core = ClientCore(identity: Self.header().identity, config: Self.header().config, store: store)
        var t: Int64 = 1_000
        for input: ClientInput in [.api(.connect(token: "tok", timeLimitSeconds: 0)), .transport(.opened)] {
            rec.record(input: input, at: t)
            rec.record(effects: core.handle(input, now: DeviceTime(milliseconds: t)), at: t)
            t += 10
        }
        let connack = try StreamFraming.encode(.connack(Frame.Connack(status: .accepted, session: .init(userId: "alice", sessionId: "s1", timestamp: 1_500))),
                                               direction: .serverToClient)
        rec.record(input: .transport(.bytes(connack)), at: t)
        rec.record(effects: core.handle(.transport(.bytes(connack)), now: DeviceTime(milliseconds: t)), at: t)
        rec.recordSnapshot(of: store, at: t)
        #expect(!FileManager.default.fileExists(atPath: path), "nothing under the final name before finish()")
        try rec.finish()
        #expect(!FileManager.default.fileExists(atPath: path + ".partial"))
        let reader = try CaptureReader(path: path)
        #expect(reader.header == Self.header())
        let records = try reader.readAll()
        #expect(records.count == rec.recordCount)
        #expect(records.first?.event.kind == "api")
        #expect(records.contains { if case .bytesOut = $0.event { true } else { false } })
        #expect(records.contains { if case .callback(.connectionStatus(.connected)) = $0.event { true } else { false } })
        #expect(records.last?.event.kind == "snapshot")
        #expect(records.map(\.line) == Array(2..<(2 + records.count)))
    }
}
