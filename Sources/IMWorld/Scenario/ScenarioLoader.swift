import Foundation
import IMWire
import SimKernel

extension Scenario {
    /// Parses and validates a scenario; every problem names its JSON path.
    public static func load(json data: Data) throws(ScenarioError) -> Scenario {
        // Strict syntax (duplicate keys, trailing commas, depth) and the documented field limits
        // first: Foundation's decoder is laxer than the format (Docs/scenario-format.md).
        try ScenarioLimits.check(try StrictJSON.parse([UInt8](data)))
        let scenario: Scenario
        do {
            scenario = try JSONDecoder().decode(Scenario.self, from: data)
        } catch {
            throw ScenarioError.from(error, data: data)
        }
        try scenario.validate()
        return scenario
    }

    /// Loads a scenario by file path, or by built-in name (`quickstart`, `chatroom-storm`,
    /// `mixed-1k`, …) from `Traces/scenarios/`.
    public static func load(pathOrName: String) throws(ScenarioError) -> (Scenario, path: String) {
        let path = try resolve(pathOrName)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ScenarioError(path: "$", message: "cannot read \(path)")
        }
        return (try load(json: data), path)
    }

    /// Directories searched for built-in scenarios, in order.
    public static var builtInDirectories: [String] {
        let cwd = FileManager.default.currentDirectoryPath + "/Traces/scenarios"
        // The source tree this binary was built from (works from any working directory).
        let src = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Traces/scenarios").path
        return cwd == src ? [cwd] : [cwd, src]
    }

    public static func builtInNames() -> [String] {
        var names: Set<String> = []
        for dir in builtInDirectories {
            for f in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] where f.hasSuffix(".json") {
                names.insert(String(f.dropLast(5)))
            }
        }
        return names.sorted()
    }

    static func resolve(_ pathOrName: String) throws(ScenarioError) -> String {
        if FileManager.default.fileExists(atPath: pathOrName) { return pathOrName }
        if !pathOrName.contains("/") && !pathOrName.hasSuffix(".json") {
            for dir in builtInDirectories {
                let p = dir + "/" + pathOrName + ".json"
                if FileManager.default.fileExists(atPath: p) { return p }
            }
        }
        let known = builtInNames()
        throw ScenarioError(path: "$", message: "no scenario file or built-in named \"\(pathOrName)\"" +
            (known.isEmpty ? "" : " (built-in: \(known.joined(separator: ", ")))"))
    }

    /// Cross-reference checks Codable cannot express.
    public func validate() throws(ScenarioError) {
        func fail(_ path: String, _ msg: String) -> ScenarioError { ScenarioError(path: path, message: msg) }
        guard duration.duration > .zero else { throw fail("$.duration", "must be positive") }
        // Server time must stay inside what PUBACK's u32 seconds carry, for the whole run.
        let runLength = duration.duration + liveness.deadline.duration
        guard runLength <= ScenarioLimits.maxRunLength else {
            throw fail("$.duration", "duration + liveness.deadline is \(runLength); at most \(ScenarioLimits.maxRunLength)")
        }
        let epoch = epochMs ?? Self.defaultEpochMs
        guard epoch >= 0, epoch <= ScenarioLimits.maxServerMs - runLength.milliseconds else {
            throw fail("$.epochMs", "\(epoch) + the run's \(runLength) passes \(ScenarioLimits.maxServerMs) ms, the last server time the wire carries (PUBACK date is u32 seconds)")
        }
        var userIds: Set<String> = []
        var deviceIds: Set<String> = []
        for (i, u) in users.enumerated() {
            guard Self.isValidId(u.id) else {
                throw fail("$.users[\(i)].id", "user ids are letters, digits, '_' or '-', 1…64 bytes (33002)")
            }
            guard userIds.insert(u.id).inserted else { throw fail("$.users[\(i)].id", "duplicate user \"\(u.id)\"") }
            guard !u.devices.isEmpty else { throw fail("$.users[\(i)].devices", "a user needs at least one device") }
            for (j, d) in u.devices.enumerated() {
                guard Self.isValidId(d.id) else { throw fail("$.users[\(i)].devices[\(j)].id", "invalid device id") }
                guard deviceIds.insert(d.id).inserted else {
                    throw fail("$.users[\(i)].devices[\(j)].id", "duplicate device \"\(d.id)\"")
                }
            }
        }
        if users.isEmpty && population == nil { throw fail("$.users", "a scenario needs users or a population") }
        func checkUsers(_ list: [String], _ path: String) throws(ScenarioError) {
            guard population == nil else { return }   // generated ids are checked when built
            for (k, m) in list.enumerated() where !userIds.contains(m) {
                throw fail("\(path)[\(k)]", "unknown user \"\(m)\"")
            }
        }
        var groupIds: Set<String> = []
        for (i, g) in groups.enumerated() {
            guard groupIds.insert(g.id).inserted else { throw fail("$.groups[\(i)].id", "duplicate group \"\(g.id)\"") }
            guard !g.members.isEmpty else { throw fail("$.groups[\(i)].members", "a group needs members") }
            guard g.members.count <= 3000 else { throw fail("$.groups[\(i)].members", "at most 3000 members") }
            try checkUsers(g.members, "$.groups[\(i)].members")
            try checkUsers(g.muted, "$.groups[\(i)].muted")
        }
        var roomIds: Set<String> = []
        for (i, r) in chatrooms.enumerated() {
            guard roomIds.insert(r.id).inserted else { throw fail("$.chatrooms[\(i)].id", "duplicate chatroom \"\(r.id)\"") }
            guard r.joinCount >= -1 else { throw fail("$.chatrooms[\(i)].joinCount", "must be -1, 0 or a positive count") }
            try checkUsers(r.members, "$.chatrooms[\(i)].members")
            try checkUsers(r.whitelist, "$.chatrooms[\(i)].whitelist")
        }
        var lastAt = SimDuration.zero
        for (i, step) in script.enumerated() {
            if step.at.duration < lastAt {
                throw fail("$.script[\(i)].at", "script steps must be in time order (\(step.at) after \(DurationValue(lastAt)))")
            }
            lastAt = step.at.duration
            if let d = step.device, population == nil, !deviceIds.contains(d) {
                throw fail("$.script[\(i)].device", "unknown device \"\(d)\"")
            }
            switch step.action {
            case .send(let s):
                if population == nil {
                    switch s.to.type {
                    case .privateChat, .system:
                        if !userIds.contains(s.to.targetId) { throw fail("$.script[\(i)].to", "unknown user \"\(s.to.targetId)\"") }
                    case .group:
                        if !groupIds.contains(s.to.targetId) { throw fail("$.script[\(i)].to", "unknown group \"\(s.to.targetId)\"") }
                    default: break
                    }
                }
                if s.content == nil && s.text == nil && s.objectName == "RC:TxtMsg" {
                    throw fail("$.script[\(i)]", "send needs \"text\" (or \"content\" for other types)")
                }
            case .partition(let target, _):
                if target != "server" && population == nil && !deviceIds.contains(target) {
                    throw fail("$.script[\(i)].target", "unknown device \"\(target)\" (or \"server\")")
                }
            default:
                break
            }
        }
        if let h = liveness.healAt, h.duration > duration.duration {
            throw fail("$.liveness.healAt", "must not be after duration (\(duration))")
        }
    }

    /// im-semantics §5: userId letters/digits (we also allow '_' and '-'), ≤ 64 bytes.
    static func isValidId(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 64 && s.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b == 0x2D
        }
    }

    /// A stable digest of the scenario's canonical JSON (recorded in trace headers).
    public var digest: UInt64 {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        let data = (try? enc.encode(self)) ?? Data()
        return StableHash.fnv1a(data)
    }
}
