#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import IMWire
import IMWorld

/// Scenario files as IMReplay writes them (lifted and shrunk scenarios): the JSON members in the
/// order they were built, the top level one member per line, arrays of objects one element per
/// line — readable, diffable and byte-stable.
public enum ScenarioText {
    public static func format(_ value: JSONValue) -> String {
        guard case .object(let members) = value else { return value.serializedString + "\n" }
        var lines = ["{"]
        for (i, m) in members.enumerated() {
            let comma = i + 1 < members.count ? "," : ""
            let key = JSONValue.string(m.key).serializedString
            if case .array(let items) = m.value, items.contains(where: { if case .object = $0 { true } else { false } }) {
                lines.append("  \(key): [")
                for (j, item) in items.enumerated() {
                    lines.append("    " + item.serializedString + (j + 1 < items.count ? "," : ""))
                }
                lines.append("  ]" + comma)
            } else {
                lines.append("  \(key): \(m.value.serializedString)\(comma)")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Parses and validates the JSON as a scenario (the same strict loader `imsim run` uses).
    public static func scenario(_ value: JSONValue) throws(ScenarioError) -> Scenario {
        try Scenario.load(json: Data(value.serialized()))
    }

    /// Writes `text` to `path` through a temporary file and a rename.
    public static func write(_ text: String, to path: String) throws {
        let tmp = path + ".partial"
        try Data(text.utf8).write(to: URL(fileURLWithPath: tmp))
        guard rename(tmp, path) == 0 else {
            let e = errno
            unlink(tmp)
            throw CaptureError(.io, line: 0, "cannot rename \(tmp) to \(path): \(errnoText(e))")
        }
    }
}

extension JSONValue {
    /// Replaces (or appends) an object member.
    func setting(_ key: String, _ value: JSONValue?) -> JSONValue {
        guard case .object(var m) = self else { return self }
        if let i = m.firstIndex(where: { $0.key == key }) {
            if let value { m[i].value = value } else { m.remove(at: i) }
        } else if let value {
            m.append(.init(key, value))
        }
        return .object(m)
    }
}
