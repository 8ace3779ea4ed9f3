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
        subcommands: [StoreCrashWriter.self, StoreWALSalt.self, StoreLibrarySetup.self]
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

/// The child process of IMStoreTests' PRNG test: a store on a fresh simulated device of `seed`,
/// one commit, then the WAL header's salts (bytes 16..<24) in hex. SQLite's PRNG is
/// process-wide, so only a fresh process shows what the device's reseed alone decides.
struct StoreWALSalt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wal-salt",
        abstract: "Print the WAL salts a simulated device's store writes (one commit).",
        shouldDisplay: false
    )

    @Option(help: "Device seed.") var seed: UInt64 = 1

    func run() throws {
        let disk = SimDisk(seed: seed)
        let store = try IMStore(copyOf: IMStore.inMemory(), on: disk)
        _ = try store.storeReceived(StoreBenchmark.messages(count: 1, conversations: 1))
        guard let header = disk.bytes(of: "store.db-wal", count: 32), header.count == 32 else {
            throw ValidationError("no WAL header on the device after a commit")
        }
        print(header[16..<24].map { String(format: "%02x", $0) }.joined())
    }
}

/// The child process of IMStoreTests' library-setup test: a simulated device made before any
/// store (registering its VFS initialises SQLite), a store on it, one commit, then whether SQLite
/// keeps memory statistics. They must be off however the process starts (Docs/store.md).
struct StoreLibrarySetup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "library-setup",
        abstract: "Print whether SQLite keeps memory statistics after a device store is opened first.",
        shouldDisplay: false
    )

    func run() throws {
        let disk = SimDisk(seed: 1)
        let store = try IMStore(copyOf: IMStore.inMemory(), on: disk)
        _ = try store.storeReceived(StoreBenchmark.messages(count: 1, conversations: 1))
        print("memory statistics \(SQLiteInfo.memoryStatisticsOn ? "on" : "off")")
        store.close()
    }
}
