import Foundation

/// A coding key for any string: used to see which keys an object actually has.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) { self.stringValue = "\(intValue)"; self.intValue = intValue }
}

/// A scenario file problem, naming the JSON path (`$.users[2].devices[0].platform`).
public struct ScenarioError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    /// 1-based line of the offending value when known (syntax errors).
    public var line: Int?

    public init(path: String, message: String, line: Int? = nil) {
        self.path = path
        self.message = message
        self.line = line
    }

    public var description: String {
        if let line { return "\(path) (line \(line)): \(message)" }
        return "\(path): \(message)"
    }

    static func path(_ codingPath: [CodingKey]) -> String {
        var s = "$"
        for k in codingPath {
            if let i = k.intValue { s += "[\(i)]" } else { s += ".\(k.stringValue)" }
        }
        return s
    }

    /// Turns Foundation's decoding errors into path-named messages.
    static func from(_ error: Error, data: Data) -> ScenarioError {
        switch error {
        case let e as ScenarioError:
            return e
        case DecodingError.keyNotFound(let key, let ctx):
            return ScenarioError(path: path(ctx.codingPath), message: "missing required field \"\(key.stringValue)\"")
        case DecodingError.typeMismatch(let type, let ctx):
            return ScenarioError(path: path(ctx.codingPath), message: "expected \(typeName(type))" + detail(ctx))
        case DecodingError.valueNotFound(let type, let ctx):
            return ScenarioError(path: path(ctx.codingPath), message: "expected \(typeName(type)), found null")
        case DecodingError.dataCorrupted(let ctx):
            if ctx.codingPath.isEmpty {
                // Ask the parser itself for the position of the syntax error.
                do { _ = try JSONSerialization.jsonObject(with: data) } catch { return syntaxError(error, data: data) }
                if let underlying = ctx.underlyingError { return syntaxError(underlying, data: data) }
            }
            return ScenarioError(path: path(ctx.codingPath), message: ctx.debugDescription)
        default:
            return ScenarioError(path: "$", message: "\(error)")
        }
    }

    private static func detail(_ ctx: DecodingError.Context) -> String {
        ctx.debugDescription.hasPrefix("Expected to decode") ? "" : " (\(ctx.debugDescription))"
    }

    private static func typeName(_ t: Any.Type) -> String {
        switch t {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Double.Type, is Float.Type: "a number"
        case is Int.Type, is Int64.Type, is UInt64.Type, is Int32.Type, is UInt32.Type: "an integer"
        default:
            String(describing: t).hasPrefix("Array") ? "an array" : "an object"
        }
    }

    private static func syntaxError(_ error: Error, data: Data) -> ScenarioError {
        let ns = error as NSError
        let text = (ns.userInfo[NSDebugDescriptionErrorKey] as? String) ?? ns.localizedDescription
        // Darwin gives the byte index in userInfo; Linux only says "around character N".
        var index = ns.userInfo["NSJSONSerializationErrorIndex"] as? Int
        if index == nil, let r = text.range(of: "character ") {
            index = Int(text[r.upperBound...].prefix(while: \.isNumber))
        }
        let line = index.map { i in data.prefix(i).reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) } }
        return ScenarioError(path: "$", message: "not valid JSON: \(text)", line: line)
    }
}

extension Decoder {
    /// Rejects keys this object does not define, suggesting the closest known key — a typo in a
    /// scenario must not be silently ignored.
    func rejectUnknownKeys(allowed: [String]) throws {
        guard let c = try? container(keyedBy: AnyKey.self) else { return }
        for key in c.allKeys.map(\.stringValue).sorted() where !allowed.contains(key) {
            var msg = "unknown field \"\(key)\""
            if let near = allowed.min(by: { editDistance($0, key) < editDistance($1, key) }),
               editDistance(near, key) <= max(2, key.count / 3) {
                msg += " (did you mean \"\(near)\"?)"
            } else {
                msg += " (known: \(allowed.sorted().joined(separator: ", ")))"
            }
            throw ScenarioError(path: ScenarioError.path(codingPath + [AnyKey(stringValue: key)]), message: msg)
        }
    }
}

func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.lowercased()), b = Array(b.lowercased())
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var prev = Array(0...b.count)
    for i in 1...a.count {
        var cur = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        prev = cur
    }
    return prev[b.count]
}
