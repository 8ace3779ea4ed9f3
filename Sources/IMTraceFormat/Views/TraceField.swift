import IMWire
import SimKernel

/// A named value of a decoded record, rendered as `name=value` text (show, diff) or as a JSON
/// member (JSONL, Perfetto args). One description per record kind serves every view.
public struct TraceField: Sendable, Equatable {
    public var name: String
    public var value: TraceFieldValue
    public init(_ name: String, _ value: TraceFieldValue) {
        self.name = name
        self.value = value
    }
}

public indirect enum TraceFieldValue: Sendable, Equatable {
    case text(String)
    case int(Int64)
    case uint(UInt64)
    case bool(Bool)
    /// A wall-clock ms value (server or device): JSON the absolute ms, text relative to the epoch.
    case wallMs(Int64)
    case duration(SimDuration)
    case content(TraceContent)
    case hex(UInt64)
    case list([TraceFieldValue])
    case object([TraceField])
    case null

    public static func int(_ v: Int) -> TraceFieldValue { .int(Int64(v)) }
    public static func opt(_ s: String?) -> TraceFieldValue { s.map { .text($0) } ?? .null }
    public static func opt(_ v: Int32?) -> TraceFieldValue { v.map { .int(Int64($0)) } ?? .null }
    public static func texts(_ l: [String]) -> TraceFieldValue { .list(l.map { .text($0) }) }
}

extension [TraceField] {
    /// `name=value name=value …` (nil values left out).
    public func text(epochMs: Int64) -> String {
        var out = ""
        for f in self where f.value != .null {
            if !out.isEmpty { out += " " }
            out += f.name
            out += "="
            out += f.value.text(epochMs: epochMs)
        }
        return out
    }
}

extension TraceFieldValue {
    public func text(epochMs: Int64) -> String {
        switch self {
        case .text(let s): Self.bare(s) ? s : TraceText.quoted(s)
        case .int(let v): String(v)
        case .uint(let v): String(v)
        case .bool(let b): b ? "yes" : "no"
        case .wallMs(let ms): TraceText.wallMs(ms, epochMs: epochMs)
        case .duration(let d): d.description
        case .content(let c): c.description
        case .hex(let v): TraceText.hex(v)
        case .list(let l): "[" + l.map { $0.text(epochMs: epochMs) }.joined(separator: ",") + "]"
        case .object(let f): "{" + f.text(epochMs: epochMs) + "}"
        case .null: "-"
        }
    }

    /// Text that reads unambiguously without quotes.
    static func bare(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { b in
            b > 0x20 && b < 0x7F && b != 0x22 && b != 0x5C && b != 0x3D && b != 0x2C && b != 0x7B && b != 0x7D && b != 0x5B && b != 0x5D
        }
    }

    /// Appends the value as JSON.
    public func json(into out: inout String) {
        switch self {
        case .text(let s): JSONText.string(s, into: &out)
        case .int(let v): out += String(v)
        case .uint(let v): out += String(v)
        case .bool(let b): out += b ? "true" : "false"
        case .wallMs(let ms): out += String(ms)
        case .duration(let d): JSONText.string(d.description, into: &out)
        case .content(let c):
            switch c {
            case .digest(let n, let h): out += "{\"length\":\(n),\"hash\":\"\(TraceText.hex(UInt64(h)).suffix(8))\"}"
            case .text(let s): out += "{\"text\":"; JSONText.string(s, into: &out); out += "}"
            }
        case .hex(let v): out += "\"" + TraceText.hex(v) + "\""
        case .list(let l):
            out += "["
            for (i, v) in l.enumerated() {
                if i > 0 { out += "," }
                v.json(into: &out)
            }
            out += "]"
        case .object(let fields): fields.json(into: &out)
        case .null: out += "null"
        }
    }
}

extension [TraceField] {
    /// Appends `{"name":value,…}` (members in order; nulls kept so every record of a kind has
    /// the same members).
    public func json(into out: inout String) {
        out += "{"
        jsonMembers(into: &out, leadingComma: false)
        out += "}"
    }

    /// Appends `"name":value` members, comma-separated.
    public func jsonMembers(into out: inout String, leadingComma: Bool) {
        var first = !leadingComma
        for f in self {
            if !first { out += "," }
            first = false
            JSONText.string(f.name, into: &out)
            out += ":"
            f.value.json(into: &out)
        }
    }
}
