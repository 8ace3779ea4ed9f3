import ArgumentParser
import Dispatch
import Foundation
import IMSim
import NIOCore
import NIOPosix

/// Shared parsing and process plumbing of the runtime commands (serve, client, proxy, loadgen).
enum RuntimeCLI {
    static func address(_ text: String, option: String) throws -> SocketAddress {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            throw ValidationError("\(option): \(RuntimeError.badAddress(text))")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" { host = "127.0.0.1" }
        do {
            return try SocketAddress(ipAddress: host, port: port)
        } catch {
            throw ValidationError("\(option): \(RuntimeError.badAddress(text)) — an IP address is expected")
        }
    }

    static func duration(_ text: String, option: String) throws -> SimDuration {
        do {
            let d = try SimDuration(parsing: text)
            guard d >= .zero else { throw ValidationError("\(option) must not be negative") }
            return d
        } catch let e as DurationParseError {
            throw ValidationError("\(option): \(e)")
        }
    }

    /// A rate such as `0.01/s` or `3/min`, as events per second.
    static func ratePerSecond(_ text: String, option: String) throws -> Double {
        do {
            let r = try RateValue(parsing: text)
            return Double(r.milliEvents) / 1000 / (Double(r.per.nanoseconds) / 1e9)
        } catch {
            throw ValidationError("\(option): \(error)")
        }
    }

    static func bugs(_ text: String?, side: BugSwitch.Side, option: String) throws -> [BugSwitch] {
        guard let text else { return [] }
        let list: [BugSwitch]
        do { list = try BugSwitch.parseList(text) } catch { throw ValidationError("\(option): \(error)") }
        for b in list where b.side != side {
            throw ValidationError("\(option): \(b) is a \(b.side.rawValue) bug switch, not a \(side.rawValue) one")
        }
        return list
    }

    /// `--users`: a file (one id per line, or a JSON array of strings) or a comma-separated list.
    static func users(_ text: String) throws -> [String] {
        var ids: [String]
        if FileManager.default.fileExists(atPath: text) {
            guard let data = FileManager.default.contents(atPath: text) else { throw ValidationError("--users: cannot read \(text)") }
            let body = String(decoding: data, as: UTF8.self)
            if body.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("[") {
                guard let arr = try? JSONValue.parse(body).arrayValue else { throw ValidationError("--users: \(text) is not a JSON array") }
                ids = []
                for (i, v) in arr.enumerated() {
                    guard let s = v.stringValue else { throw ValidationError("--users: \(text): element \(i) is not a string") }
                    ids.append(s)
                }
            } else {
                ids = body.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
            }
        } else {
            ids = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        for (i, id) in ids.enumerated() {
            guard !id.isEmpty, id.utf8.count <= 64, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
                throw ValidationError("--users: user \(i + 1) \"\(id)\": ids are letters, digits, _ and -, at most 64 bytes")
            }
        }
        return ids
    }

    static func printLine(_ s: String) {
        print(s)
        fflush(nil)
    }

    /// Blocks until SIGINT/SIGTERM, or until `limit` passes.
    static func waitForStop(limit: SimDuration?) {
        let stop = DispatchSemaphore(value: 0)
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let sources = [SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { stop.signal() }
            s.resume()
            return s
        }
        if let limit {
            _ = stop.wait(timeout: .now() + .nanoseconds(Int(limit.nanoseconds)))
        } else {
            stop.wait()
        }
        for s in sources { s.cancel() }
    }
}
