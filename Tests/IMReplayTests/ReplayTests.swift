import Foundation
import IMClient
import IMStore
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMReplay

/// Recorder → replay round trips, divergence detection, determinism.
@Suite struct ReplayTests {
    static let quickstartDevices = ["alice-phone", "alice-desktop", "bob-phone", "carol-phone", "dave-web"]

    @Test func roundTripReproducesEveryQuickstartDevice() throws {
        let (sc, _) = try Scenario.load(pathOrName: tracePath("Traces/scenarios/quickstart.json"))
        // 90 s: connects, sends, receipts, group and chatroom traffic, a background period.
        let (captures, _) = try recordRun(sc, until: .seconds(90), devices: Self.quickstartDevices)
        for d in Self.quickstartDevices {
            let report = try replay(captures[d]!)
            #expect(report.divergence == nil, "\(d): \(report.divergence.map { "line \($0.line): \($0.captured) vs \($0.replayed)" } ?? "")")
            #expect(report.violations.isEmpty, "\(d): \(report.violations.map(\.text))")
            #expect(report.outputsCompared > 10, "\(d)")
            #expect(report.exitCode == 0)
            #expect(!report.ledger.conversations.isEmpty || d == "dave-web", "\(d)")
        }
    }

    /// The big built-in scenarios, debug-sized: a short window and a spread of devices (first,
    /// middle, last and two between), which covers mobile/desktop/web and room members.
    @Test(arguments: ["chatroom-storm", "mixed-1k"])
    func roundTripReproducesDevicesOfTheBigScenarios(_ name: String) throws {
        let (sc, _) = try Scenario.load(pathOrName: tracePath("Traces/scenarios/\(name).json"))
        let world = try ScenarioRun(scenario: sc, seed: 1).world
        let n = world.deviceCount
        let picks = [0, n / 4, n / 2, 3 * n / 4, n - 1].map { world.deviceId($0) }
        let (captures, _) = try recordRun(sc, until: .seconds(20), devices: picks)
        var compared = 0
        for d in picks {
            let report = try replay(captures[d]!)
            #expect(report.divergence == nil, "\(name) \(d): \(report.divergence.map { "line \($0.line): \($0.captured) vs \($0.replayed)" } ?? "")")
            #expect(report.violations.isEmpty, "\(name) \(d): \(report.violations.map(\.text))")
            compared += report.outputsCompared
        }
        #expect(compared > 20, "\(name): the window exercised the devices")
    }

    @Test func roundTripThroughZstdFileAndAppKills() throws {
        // A device that is killed and restarted, with a clock step: app start/kill and clock records.
        var sc = Scenario(name: "kills", duration: .seconds(40), users: [UserSpec(id: "alice"), UserSpec(id: "bob")])
        sc.script = try JSONDecoder().decode([ScriptStep].self, from: Data("""
            [{"at": "5s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "one"},
             {"at": "8s", "device": "alice-phone", "action": "kill"},
             {"at": "9s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "two"},
             {"at": "12s", "device": "alice-phone", "action": "restart"},
             {"at": "15s", "device": "alice-phone", "action": "clockStep", "by": "-3s"},
             {"at": "20s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "three"},
             {"at": "25s", "device": "alice-phone", "action": "network", "state": "none"},
             {"at": "27s", "device": "alice-phone", "action": "network", "state": "wifi"}]
            """.utf8))
        let (captures, _) = try recordRun(sc, devices: ["alice-phone"])
        let text = String(decoding: captures["alice-phone"]!, as: UTF8.self)
        #expect(text.contains("\"event\":\"kill\"") && text.contains("\"kind\":\"clock\"") && text.contains("\"available\":false"))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imreplay-rt-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("alice.jsonl.zst").path
        let sink = try CaptureFileSink(path: path)
        try sink.write(captures["alice-phone"]!)
        try sink.finish()
        let report = try Replayer(path: path).run()
        #expect(report.divergence == nil)
        #expect(report.violations.isEmpty)
        #expect(report.ledger.conversations.first?.messages.count == 3)
    }

    @Test func reorderingTwoFramesDivergesAtTheFirstOfThem() throws {
        let (sc, _) = try Scenario.load(pathOrName: tracePath("Traces/scenarios/quickstart.json"))
        let (captures, _) = try recordRun(unsplit(sc), until: .seconds(90), devices: ["alice-phone"])
        var l = lines(captures["alice-phone"]!)
        // Two consecutive reads on the same connection, each exactly one server PUBLISH.
        let ins = l.indices.filter { l[$0].contains("\"kind\":\"in\"") }
        var pair: (Int, Int)?
        for (a, b) in zip(ins, ins.dropFirst()) {
            let fa = (try JSONValue.parse(l[a]))["frames"]?.arrayValue ?? [], fb = (try JSONValue.parse(l[b]))["frames"]?.arrayValue ?? []
            if fa.count == 1, fb.count == 1, fa[0].stringValue!.hasPrefix("PUBLISH"), fb[0].stringValue!.hasPrefix("PUBLISH"),
               (try JSONValue.parse(l[a]))["conn"] == (try JSONValue.parse(l[b]))["conn"] {
                pair = (a, b)
                break
            }
        }
        let (a, b) = try #require(pair)
        func swapPayload(_ x: inout String, _ y: inout String) throws {
            let jx = try JSONValue.parse(x), jy = try JSONValue.parse(y)
            var nx = jx, ny = jy
            for k in ["hex", "len", "frames"] {
                nx = nx.setting(k, jy[k])
                ny = ny.setting(k, jx[k])
            }
            x = nx.serializedString
            y = ny.serializedString
        }
        var la = l[a], lb = l[b]
        try swapPayload(&la, &lb)
        l[a] = la
        l[b] = lb
        let report = try replay(bytes(l))
        let d = try #require(report.divergence)
        #expect(d.inputLine == a + 1, "the input whose outputs differ is the first swapped frame (line \(a + 1))")
        #expect(d.line > a + 1 && d.line < b + 1)
        #expect(!d.context.isEmpty && d.context.contains { $0.hasPrefix("▶") })
        #expect(report.exitCode == 1)
    }

    @Test func aChangedOutgoingFrameIsShownDecoded() throws {
        let (sc, _) = try Scenario.load(pathOrName: tracePath("Traces/scenarios/quickstart.json"))
        let (captures, _) = try recordRun(unsplit(sc), until: .seconds(30), devices: ["bob-phone"])
        var l = lines(captures["bob-phone"]!)
        // Change the token in the captured CONNECT: replay writes the real one.
        let i = try #require(l.firstIndex { $0.contains("\"kind\":\"out\"") && $0.contains("CONNECT") })
        // The simulator's tokens are signed: v1.bob.<expiry>.<MAC>; change the user's letter.
        let tokenHex = Hex.encode(Array("v1.bob.".utf8)), otherHex = Hex.encode(Array("v1.bOb.".utf8))
        #expect(l[i].contains(tokenHex))
        l[i] = l[i].replacingOccurrences(of: tokenHex, with: otherHex)
        let report = try replay(bytes(l))
        let d = try #require(report.divergence)
        #expect(d.line == i + 1)
        #expect(d.frameDiff.contains { $0.contains("v1.bOb.") } && d.frameDiff.contains { $0.contains("v1.bob.") })
    }

    @Test func replayIsDeterministic() throws {
        let path = tracePath("Traces/captures/dedup-b1.jsonl")
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        let a = try enc.encode(try Replayer(path: path).run())
        let b = try enc.encode(try Replayer(path: path).run())
        #expect(a == b)
    }

    @Test func recordingIsDeterministic() throws {
        let sc = try loadScenario("Traces/captures/chatroom-drop-b6.scenario.json")
        let one = try recordRun(sc, devices: ["alice-phone"]).captures["alice-phone"]!
        let two = try recordRun(sc, devices: ["alice-phone"]).captures["alice-phone"]!
        #expect(one == two)
    }
}
