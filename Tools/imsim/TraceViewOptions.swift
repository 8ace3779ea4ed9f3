import ArgumentParser
import Foundation
import IMSim

/// Filters shared by `imsim trace show` and `imsim trace export`.
struct TraceFilterOptions: ParsableArguments {
    @Option(name: .customLong("device"), help: "Only records of this device (id such as alice-phone, or dN); repeatable.")
    var devices: [String] = []
    @Option(help: "Only records of this conversation, e.g. private:bob, group:family, chatroom:lobby.")
    var conversation: String?
    @Option(help: "Only records about this messageUId.") var message: String?
    @Option(help: "From this simulated time (e.g. 41s, 2m30s).") var from: String?
    @Option(help: "Up to this simulated time (inclusive).") var to: String?
    @Option(name: .customLong("kind"), help: "Only these kinds: a name (cb.received) or a prefix (cb, srv, ev.deliver); repeatable. See `imsim trace kinds`.")
    var kinds: [String] = []

    func validate() throws {
        _ = try filter()
    }

    func filter() throws -> TraceFilter {
        var f = TraceFilter()
        f.devices = devices
        if let c = conversation {
            let parts = c.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, let t = ConversationType(name: parts[0]), !parts[1].isEmpty else {
                throw ValidationError("--conversation must be TYPE:TARGET (private:bob, group:g1, chatroom:room1), got \"\(c)\"")
            }
            f.conversation = ConversationKey(t, parts[1])
        }
        f.messageUId = message
        func time(_ s: String?, _ name: String) throws -> SimTime? {
            guard let s else { return nil }
            do { return SimTime.zero + (try SimDuration(parsing: s)) } catch { throw ValidationError("--\(name): \(error)") }
        }
        f.from = try time(from, "from")
        f.to = try time(to, "to")
        if let a = f.from, let b = f.to, b < a { throw ValidationError("--to is before --from") }
        for k in kinds where !TraceKinds.isKnownPattern(k) {
            throw ValidationError("unknown --kind \"\(k)\" (see `imsim trace kinds`)")
        }
        f.kinds = kinds
        return f
    }
}

enum TraceCLI {
    static func printError(_ s: String) {
        FileHandle.standardError.write(Data((s + "\n").utf8))
    }

    /// Opens a trace for a view; on failure prints why (with a --salvage hint) and exits 2.
    static func open(_ path: String, salvage: Bool, command: String) throws -> TraceEventReader {
        do {
            return try TraceEventReader(path: path, salvage: salvage)
        } catch {
            printError("imsim trace \(command): \(path): \(error)")
            if !salvage {
                switch error {
                case .missingFooter, .badFooter, .checksumMismatch, .truncatedBlock, .badBlockHeader, .zstd:
                    printError("hint: imsim trace \(command) --salvage \(path)")
                default: break
                }
            }
            throw ExitCode(2)
        }
    }

    /// Runs a view body, turning trace errors into a message and exit 2.
    static func guarded<T>(_ command: String, _ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as TraceError {
            printError("imsim trace \(command): \(path): \(e)")
            if case .missingFooter = e { printError("hint: add --salvage to read an unfinished trace") }
            throw ExitCode(2)
        } catch let e as TraceViewError {
            printError("imsim trace \(command): \(path): \(e)")
            throw ExitCode(2)
        }
    }
}
