import CSQLite
import CSimVFS
import IMWire
import Testing
@testable import IMStore

// The simulated-storage VFS against SQLite's contract (issue 28): sync semantics, lock states,
// short reads, recovery after torn writes, and the store on top of it.

private func deviceStore(_ disk: SimDisk) throws -> IMStore {
    try IMStore(copyOf: IMStore.inMemory(), on: disk)
}

private func uids(_ s: IMStore) throws -> [String] {
    try s.snapshot(of: alice).compactMap(\.messageUId)
}

/// A raw connection on `disk` with the given journal pragmas (for contract tests below the store).
private func rawConnection(_ disk: SimDisk, journal: String, synchronous: String) throws -> SQLiteConnection {
    let c = try SQLiteConnection(location: .device(disk))
    try c.execute("PRAGMA journal_mode = \(journal); PRAGMA synchronous = \(synchronous)")
    return c
}

private func count(_ c: SQLiteConnection, _ sql: String = "SELECT COUNT(*) FROM t") throws -> Int {
    let s = try c.prepare(sql)
    _ = try s.step()
    return s.int(0)
}

/// The device's main database file opened through the VFS's own methods (below SQLite).
private struct RawDBFile {
    let f: UnsafeMutablePointer<sqlite3_file>
    let methods: UnsafePointer<sqlite3_io_methods>
    init(_ disk: SimDisk) throws {
        let vfs = try #require(sqlite3_vfs_find(SimDisk.vfsName))
        f = UnsafeMutableRawPointer.allocate(byteCount: Int(vfs.pointee.szOsFile), alignment: 16)
            .assumingMemoryBound(to: sqlite3_file.self)
        var outFlags: Int32 = 0
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MAIN_DB
        #expect(vfs.pointee.xOpen!(vfs, disk.path, f, flags, &outFlags) == SQLITE_OK)
        methods = try #require(f.pointee.pMethods)
    }
    func deallocate() { UnsafeMutableRawPointer(f).deallocate() }
}

@Suite struct SimDiskTests {
    @Test func appKillKeepsWrittenPowerLossKeepsOnlySynced() throws {
        let disk = SimDisk(seed: 1)
        var s = try deviceStore(disk)
        _ = try store(s, incoming("a", at: 100))
        // WAL + synchronous=NORMAL: a commit reaches the OS, not the platter.
        #expect(disk.unsyncedSectors > 0)
        s = try s.reopen()                       // app kill
        #expect(try uids(s) == ["a"])
        s.crash()
        disk.losePower(torn: false)
        s = try IMStore(location: .device(disk))
        #expect(try uids(s) == [])               // never synced: gone
        #expect(try s.integrityProblems() == [])
        // A checkpoint syncs the WAL and the database: now it survives a power loss.
        _ = try store(s, incoming("b", at: 200))
        try s.connection.execute("PRAGMA wal_checkpoint(FULL)")
        #expect(disk.unsyncedSectors == 0)
        s.crash()
        disk.losePower(torn: false)
        s = try IMStore(location: .device(disk))
        #expect(try uids(s) == ["b"])
        #expect(try s.integrityProblems() == [])
    }

    /// A device that cannot lose power keeps no synced copies: nothing is unsynced, and a power
    /// loss (which the world never causes on it) would lose nothing. Turning it off makes what
    /// was already written durable; turning it on again tracks from there.
    @Test func aDeviceThatCannotLosePowerKeepsNoSyncedCopies() throws {
        let disk = SimDisk(seed: 9)
        var s = try deviceStore(disk)
        #expect(disk.tracksPowerLoss)
        _ = try store(s, incoming("a", at: 100))
        #expect(disk.unsyncedSectors > 0)
        disk.tracksPowerLoss = false
        #expect(!disk.tracksPowerLoss)
        #expect(disk.unsyncedSectors == 0)
        _ = try store(s, incoming("b", at: 200))
        #expect(disk.unsyncedSectors == 0)
        s.crash()
        disk.losePower(torn: true)
        #expect(disk.stats.sectorsLost == 0 && disk.stats.sectorsTorn == 0)
        s = try IMStore(location: .device(disk))
        #expect(try uids(s) == ["a", "b"])
        #expect(try s.integrityProblems() == [])
        disk.tracksPowerLoss = true
        _ = try store(s, incoming("c", at: 300))
        #expect(disk.unsyncedSectors > 0)
        s.crash()
        disk.losePower(torn: false)
        s = try IMStore(location: .device(disk))
        #expect(try uids(s) == ["a", "b"])      // c was never synced
        #expect(try s.integrityProblems() == [])
    }

    @Test func syncLiesLoseWhatTheCheckpointThoughtDurable() throws {
        let disk = SimDisk(seed: 2)
        var s = try deviceStore(disk)
        disk.faults.syncLies = true
        _ = try store(s, incoming("a", at: 100))
        try s.connection.execute("PRAGMA wal_checkpoint(FULL)")
        #expect(disk.unsyncedSectors > 0)
        s.crash()
        disk.losePower(torn: false)
        disk.faults.syncLies = false
        s = try IMStore(location: .device(disk))
        #expect(try uids(s) == [])
        #expect(try s.integrityProblems() == [])
    }

    @Test func synchronousFullMakesEveryCommitDurableOffDoesNot() throws {
        for (mode, survives) in [("FULL", true), ("OFF", false)] {
            let disk = SimDisk(seed: 3)
            var c = try rawConnection(disk, journal: "DELETE", synchronous: "FULL")
            try c.execute("CREATE TABLE t(x)")                 // durable (FULL)
            try c.execute("PRAGMA synchronous = \(mode)")
            try c.execute("INSERT INTO t VALUES (1)")
            disk.kill(); disk.freezeDeletes(true); c.close(); disk.freezeDeletes(false)
            disk.losePower(torn: false)
            c = try rawConnection(disk, journal: "DELETE", synchronous: "FULL")
            #expect(try count(c) == (survives ? 1 : 0), "synchronous=\(mode)")
            c.close()
        }
    }

    @Test func lockStatesBetweenTwoConnections() throws {
        let disk = SimDisk(seed: 4)
        let a = try rawConnection(disk, journal: "DELETE", synchronous: "FULL")
        try a.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let b = try rawConnection(disk, journal: "DELETE", synchronous: "FULL")
        // A reserves (RESERVED): B may still read (SHARED) but not reserve too.
        try a.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (2)")
        #expect(try count(b) == 1)
        #expect(throws: StoreError.self) { try b.execute("BEGIN IMMEDIATE") }
        do { try b.execute("BEGIN IMMEDIATE") } catch let e as StoreError { #expect(e.primaryCode == SQLITE_BUSY) }
        // B holds SHARED in a read transaction: A's COMMIT cannot get EXCLUSIVE.
        try b.execute("BEGIN; SELECT COUNT(*) FROM t")
        let readB = try b.prepare("SELECT x FROM t")
        #expect(try readB.step())
        do { try a.execute("COMMIT"); Issue.record("COMMIT got EXCLUSIVE while a reader held SHARED") }
        catch let e as StoreError { #expect(e.primaryCode == SQLITE_BUSY) }
        readB.reset()
        try b.execute("COMMIT")
        try a.execute("COMMIT")
        #expect(try count(b) == 2)
        a.close(); b.close()
    }

    @Test func shortReadZeroFillsAndSaysSo() throws {
        let disk = SimDisk(seed: 5)
        _ = disk
        let file = try RawDBFile(disk)
        defer { file.deallocate() }
        let (f, m) = (file.f, file.methods)
        var data = [UInt8](repeating: 7, count: 100)
        #expect(m.pointee.xWrite!(f, &data, 100, 0) == SQLITE_OK)
        var buf = [UInt8](repeating: 0xEE, count: 300)
        #expect(m.pointee.xRead!(f, &buf, 300, 0) == SQLITE_IOERR | (2 << 8))  // SQLITE_IOERR_SHORT_READ
        #expect(Array(buf[0..<100]) == data)
        #expect(buf[100...].allSatisfy { $0 == 0 })
        #expect(m.pointee.xRead!(f, &buf, 300, 1000) == SQLITE_IOERR | (2 << 8))  // SQLITE_IOERR_SHORT_READ
        #expect(buf.allSatisfy { $0 == 0 })
        var size: sqlite3_int64 = 0
        #expect(m.pointee.xFileSize!(f, &size) == SQLITE_OK && size == 100)
        // xSync makes the written bytes the synced ones.
        #expect(disk.unsyncedSectors == 1)
        #expect(m.pointee.xSync!(f, SQLITE_SYNC_NORMAL) == SQLITE_OK)
        #expect(disk.unsyncedSectors == 0)
        #expect(m.pointee.xClose!(f) == SQLITE_OK)
    }

    /// A file grows through many capacities (its buffer is remapped, not copied): what was written
    /// stays, a hole reads as zeros, a truncate and a regrow leave no old bytes behind.
    @Test func growingAFileKeepsItsBytesAndHolesReadAsZeros() throws {
        let disk = SimDisk(seed: 6)
        let file = try RawDBFile(disk)
        defer { file.deallocate() }
        let (f, m) = (file.f, file.methods)
        // 4 KiB pages at doubling offsets: 0, 8 KiB, … 4 MiB (eleven regrowths of the buffer).
        var offsets: [Int64] = [0]
        while offsets.last! < 4 << 20 { offsets.append(max(8192, offsets.last! * 2)) }
        for (i, off) in offsets.enumerated() {
            var page = [UInt8](repeating: UInt8(i + 1), count: 4096)
            #expect(m.pointee.xWrite!(f, &page, 4096, off) == SQLITE_OK)
        }
        var page = [UInt8](repeating: 0xEE, count: 4096)
        for (i, off) in offsets.enumerated() {
            #expect(m.pointee.xRead!(f, &page, 4096, off) == SQLITE_OK)
            #expect(page.allSatisfy { $0 == UInt8(i + 1) })
            #expect(m.pointee.xRead!(f, &page, 4096, off + 4096) == SQLITE_OK || off == offsets.last!)
            if off != offsets.last! { #expect(page.allSatisfy { $0 == 0 }) }  // the hole after it
        }
        // Shrink to one page, then write past the old end: the bytes between read as zeros.
        #expect(m.pointee.xTruncate!(f, 4096) == SQLITE_OK)
        var tail = [UInt8](repeating: 9, count: 100)
        #expect(m.pointee.xWrite!(f, &tail, 100, 5 << 20) == SQLITE_OK)
        for off in offsets.dropFirst() {
            #expect(m.pointee.xRead!(f, &page, 4096, off) == SQLITE_OK)
            #expect(page.allSatisfy { $0 == 0 })
        }
        var size: sqlite3_int64 = 0
        #expect(m.pointee.xFileSize!(f, &size) == SQLITE_OK && size == (5 << 20) + 100)
        #expect(m.pointee.xClose!(f) == SQLITE_OK)
    }

    /// One row per transaction, a checkpoint partway; then a torn power loss. Whatever the tear,
    /// recovery gives a sound database holding a prefix of the commits, at least the synced ones.
    @Test(arguments: [("WAL", "NORMAL"), ("DELETE", "FULL"), ("DELETE", "NORMAL")])
    func tornPowerLossRecoversToACommittedPrefix(journal: String, synchronous: String) throws {
        var outcomes: Set<Int> = []
        for seed in UInt64(1)...40 {
            let disk = SimDisk(seed: seed)
            var c = try rawConnection(disk, journal: journal, synchronous: synchronous)
            try c.execute("CREATE TABLE t(x INTEGER PRIMARY KEY, pad TEXT)")
            var synced = 0
            for i in 1...30 {
                try c.execute("INSERT INTO t VALUES (\(i), printf('%.*c', 300 + \(i) * 7, 'x'))")
                if i == 10 { try c.execute("PRAGMA wal_checkpoint(FULL)") }
                if disk.unsyncedSectors == 0 { synced = i }
            }
            // Interrupt a transaction in flight, too.
            try c.execute("BEGIN; DELETE FROM t WHERE x < 5; UPDATE t SET pad = 'y' WHERE x > 20")
            disk.kill(); disk.freezeDeletes(true); c.close(); disk.freezeDeletes(false)
            disk.losePower(torn: true)
            c = try rawConnection(disk, journal: journal, synchronous: synchronous)
            #expect(try count(c, "SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'") == 0)
            let n = try count(c)
            #expect(n >= synced, "seed \(seed): \(n) rows, \(synced) were synced")
            #expect(try count(c, "SELECT COALESCE(MAX(x), 0) FROM t") == n, "seed \(seed): not a prefix")
            #expect(try count(c, "SELECT COUNT(*) FROM t WHERE pad = 'y'") == 0)
            outcomes.insert(n)
            c.close()
        }
        // The tear really varies what survives (else this test proves nothing).
        if journal == "WAL" { #expect(outcomes.count > 1) }
    }

    @Test func writeErrorAndDiskFullFailTheOperationAndLeaveNothingHalfDone() throws {
        let disk = SimDisk(seed: 6)
        let s = try deviceStore(disk)
        _ = try store(s, incoming("a", at: 100))
        disk.faults.writeError = true
        do { _ = try store(s, incoming("b", at: 200)); Issue.record("insert succeeded under a write error") }
        catch let e as StoreError { #expect(e.primaryCode == SQLITE_IOERR) }
        disk.faults.writeError = false
        #expect(try uids(s) == ["a"])
        disk.faults.full = true
        var sawFull = false
        for i in 0..<200 {   // fills the WAL's free space first
            do { _ = try store(s, incoming("f\(i)", at: 300 + Int64(i))) }
            catch let e as StoreError { #expect(e.primaryCode == SQLITE_FULL); sawFull = true; break }
        }
        #expect(sawFull)
        disk.faults.full = false
        _ = try store(s, incoming("c", at: 10_000))
        #expect(try uids(s).last == "c")
        #expect(try s.integrityProblems() == [])
        #expect(try s.countUnreadCandidates(in: alice) == (try s.snapshot(of: alice).count))
    }

    @Test func readErrorFailsTheOpenCleanly() throws {
        let disk = SimDisk(seed: 7)
        let s = try deviceStore(disk)
        _ = try store(s, incoming("a", at: 100))
        s.crash()
        disk.faults.readError = true
        #expect(throws: StoreError.self) { _ = try IMStore(location: .device(disk)) }
        disk.faults.readError = false
        #expect(try uids(IMStore(location: .device(disk))) == ["a"])
    }

    @Test func probabilisticFaultsAreDeterministicPerSeed() throws {
        func run(_ seed: UInt64) throws -> [Bool] {
            let disk = SimDisk(seed: seed)
            let s = try deviceStore(disk)
            disk.faults.writeErrorPpm = 200_000
            return (0..<40).map { i in (try? store(s, incoming("m\(i)", at: Int64(i) + 1))) != nil }
        }
        #expect(try run(11) == run(11))
        #expect(try run(11) != run(12))
        #expect(try run(11).contains(false))
    }
}
