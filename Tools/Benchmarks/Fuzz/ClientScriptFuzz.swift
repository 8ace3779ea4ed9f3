import IMRuntime
import IMWire
import SimKernel

/// `imsim fuzz script`: mutated client scripts (`imsim client --script`). Every input must end in
/// a script or a `RuntimeError.script` naming the step and field.
public struct ClientScriptFuzz: FuzzTarget {
    public static let name = "script"
    public static let abstract = "Mutated client scripts through ClientScript.parse."

    static let bases: [String] = [
        #"[{"action": "connect"}, {"after": "1s", "action": "send", "to": "private:bob", "text": "hi", "count": 3, "interval": "200ms"}, {"after": "2s", "action": "read", "conversation": "private:bob"}, {"at": "10s", "action": "disconnect"}]"#,
        #"[{"action": "connect", "timeLimit": 30}, {"after": "500ms", "action": "join", "room": "lobby", "count": 10}, {"after": "1s", "action": "setKV", "room": "lobby", "key": "k", "value": "v", "autoDelete": true}, {"after": "1s", "action": "send", "to": "chatroom:lobby", "type": "App:Like", "content": "{\"n\":1}"}, {"after": "5s", "action": "quit", "room": "lobby"}]"#,
        #"[{"action": "connect"}, {"after": "1s", "action": "history", "conversation": "group:g1", "count": 20}, {"after": "1s", "action": "remoteHistory", "conversation": "group:g1", "count": 200}, {"after": "1s", "action": "network", "state": "none"}, {"after": "3s", "action": "network", "state": "wifi"}, {"after": "1s", "action": "background"}, {"after": "1m", "action": "foreground"}, {"at": "2m", "action": "wait"}]"#,
    ]
    /// Values spliced over a random token: extremes of every type the parser reads.
    static let hostile: [String] = ["-1", "1e308", "18446744073709551616", "2147483648", "\"-5s\"", "\"2562047h\"", "\"9999999999999999999d\"",
                                    "null", "[]", "{}", "\"\"", "\"private:\"", "\":\"", "true", "\"\\u0000\"", "0.5", "\"1ns\""]

    public init() {}

    public mutating func fuzzOne(_ rng: inout RandomStream) -> FuzzOutcome {
        var b = Array(Self.bases[Int(rng.below(UInt64(Self.bases.count)))].utf8)
        if rng.below(2) == 0 { FuzzRunner.spliceValue(&b, Self.hostile, &rng) }
        if rng.below(3) != 0 { FuzzRunner.mutate(&b, &rng) }
        let text = String(decoding: b, as: UTF8.self)
        do {
            let script = try ClientScript.parse(text, path: "fuzz")
            return FuzzOutcome(inputBytes: b.count, fingerprint: UInt64(script.steps.count) << 32 ^ UInt64(truncatingIfNeeded: script.duration.nanoseconds))
        } catch {
            guard case .script(let path, let step, _, let message) = error, path == "fuzz", !message.isEmpty else {
                return FuzzOutcome(inputBytes: b.count, error: "other", violation: "untyped error: \(error)")
            }
            let kind = step == nil ? "document" : "step"
            return FuzzOutcome(inputBytes: b.count, error: kind, fingerprint: UInt64(step.map { $0 + 1 } ?? 0) ^ StableHash.fnv1a(message))
        }
    }
}
