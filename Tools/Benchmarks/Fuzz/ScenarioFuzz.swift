import IMWorld
import Foundation
import IMWire
import SimKernel

/// `imsim fuzz scenario`: mutated scenario files (byte mutations and hostile values spliced into
/// fields). Every input must end in a scenario or a `ScenarioError` whose path starts at `$`;
/// an accepted scenario must pass its own validation again and give a memory estimate.
public struct ScenarioFuzz: FuzzTarget {
    public static let name = "scenario"
    public static let abstract = "Mutated scenario JSON through the strict parser, the field limits and Codable."

    static let bases: [String] = [
        #"{"name": "q", "duration": "10m", "seed": 3, "epochMs": 1767225600000, "users": [{"id": "alice", "devices": [{"id": "alice-phone", "platform": "mobile", "clockOffset": "-2s", "clockDriftPpm": 200}, {"id": "alice-web", "platform": "web", "startAt": "3s"}], "token": "valid"}, {"id": "bob"}], "groups": [{"id": "g", "members": ["alice", "bob"], "muted": ["bob"]}], "chatrooms": [{"id": "lobby", "members": ["alice", "bob"], "joinCount": 10, "whitelist": ["alice"], "keepAlive": true}], "network": {"latency": {"logNormal": {"median": "40ms", "sigma": 0.5, "max": "3s"}}, "bandwidthBytesPerSecond": 1000000, "splitProbability": 0.1, "connectSetup": {"uniform": ["5ms", "50ms"]}}, "server": {"offlineRetentionDays": 7, "rateLimitPerSecond": 5, "chatroom": {"quotaCapacity": 40, "quotaReservedHigh": 20}}, "client": {"heartbeatInterval": "30s", "pollInterval": "3m"}, "script": [{"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hi", "count": 3, "interval": "1s"}, {"at": "20s", "device": "alice-phone", "action": "clockStep", "by": "-3s"}, {"at": "30s", "action": "serverCrash", "downFor": "5s"}], "workload": {"privateRate": "1/min", "groupRate": "0.5/min", "recallProbability": 0.01}, "faults": {"random": {"reset": {"rate": "1/10m"}, "clockStep": {"rate": "1/h", "by": ["-60s", "60s"]}}}, "liveness": {"healAt": "9m", "deadline": "3m"}}"#,
        #"{"name": "p", "duration": "1h", "population": {"users": 50, "idPrefix": "u", "platforms": {"mobile": 0.8, "desktop": 0.2}, "secondDeviceFraction": 0.1, "groups": 5, "groupSize": 8, "chatrooms": 1, "chatroomMembers": 20}, "workload": {"privateRate": "1/15m", "chatroomRate": "1/h", "bursts": {"every": "10m", "length": "3s", "rate": "2/s"}}, "swarm": true}"#,
    ]
    static let hostile: [String] = ["-1", "0", "1.5", "1e308", "-1e308", "18446744073709551616", "9223372036854775807", "4398046511104",
                                    "\"0s\"", "\"-5s\"", "\"1000000h\"", "\"2562047h\"", "\"1000000/s\"", "\"1/0s\"", "\"../../\"",
                                    "null", "true", "\"\"", "[]", "{}", "\"x\"", "51", "2"]

    public init() {}

    public mutating func fuzzOne(_ rng: inout RandomStream) -> FuzzOutcome {
        var b = Array(Self.bases[Int(rng.below(UInt64(Self.bases.count)))].utf8)
        if rng.below(2) == 0 { FuzzRunner.spliceValue(&b, Self.hostile, &rng) }
        if rng.below(3) != 0 { FuzzRunner.mutate(&b, &rng) }
        do {
            let s = try Scenario.load(json: Data(b))
            try s.validate()
            let estimate = s.memoryEstimate
            return FuzzOutcome(inputBytes: b.count, fingerprint: UInt64(truncatingIfNeeded: estimate.bytes))
        } catch {
            guard error.path.hasPrefix("$"), !error.message.isEmpty else {
                return FuzzOutcome(inputBytes: b.count, error: "other", violation: "error without a path: \(error)")
            }
            // Kind: the top-level field the error names; `$` for syntax, `unknown` for a bad key.
            let field = String(error.path.dropFirst(2).prefix { $0 != "." && $0 != "[" })
            let kind = field.isEmpty ? "$" : Scenario.keys.contains(field) ? field : "unknown"
            return FuzzOutcome(inputBytes: b.count, error: kind,
                               fingerprint: StableHash.fnv1a(error.path) ^ UInt64(error.line ?? 0))
        }
    }
}
