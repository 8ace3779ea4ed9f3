import Benchmarks
import ArgumentParser
import Foundation
import IMSim

/// `imsim store …`: store utilities. Hidden: today it only hosts the crash-test child process.
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Message-store utilities (test support).",
        shouldDisplay: false,
        subcommands: [StoreCrashWriter.self]
    )
}

/// The child process of IMStoreTests' crash test: commits some rows, then writes more inside an
/// open transaction (with a tiny page cache, so uncommitted pages spill into the WAL), prints
/// `ready <committed> <walBytesBefore> <walBytesNow>` and waits to be killed with SIGKILL.
struct StoreCrashWriter: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-writer",
        abstract: "Write into a store file inside an open transaction, then wait to be killed.",
        shouldDisplay: false
    )

    @Option(help: "Database file.") var db: String
    @Option(help: "Messages committed before the open transaction.") var committed = 10
    @Option(help: "Messages written inside the open transaction.") var pending = 2000
    @Flag(help: "Commit the second transaction before signalling (the 'all' case).") var commit = false

    func run() throws {
        let store = try IMStore.file(db)
        let messages = StoreBenchmark.messages(count: committed + pending, conversations: 7)
        _ = try store.storeReceived(Array(messages[..<committed]))
        // A 16-page cache forces SQLite to spill dirty pages of the open transaction into the WAL.
        try store.connection.execute("PRAGMA cache_size = 16")
        let before = walBytes()
        if commit {
            _ = try store.storeReceived(Array(messages[committed...]))
            signalReady(committed: committed + pending, walBefore: before)
        } else {
            try store.transaction { s in
                for m in messages[committed...] { _ = try s.storeReceived(m) }
                signalReady(committed: committed, walBefore: before)
            }
        }
    }

    private func walBytes() -> Int {
        let attrs = try? FileManager.default.attributesOfItem(atPath: db + "-wal")
        return (attrs?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Tells the parent where we are, then blocks until SIGKILL; never returns.
    private func signalReady(committed: Int, walBefore: Int) -> Never {
        // Unbuffered: the parent reads this line before it kills us.
        FileHandle.standardOutput.write(Data("ready \(committed) \(walBefore) \(walBytes())\n".utf8))
        while true { pause() }
    }
}
