import CSQLite
import CSimVFS

/// A simulated storage device (issue 28): the files of one device's database in memory, with
/// what reached the OS (*written*) apart from what is durable (*synced*). Backed by the C VFS
/// `imsim-sim` (`Sources/CSimVFS`); see `Docs/store.md` for the model and each fault.
///
/// Deterministic: no clock, no system randomness; fault draws come from `seed`, which the world
/// takes from the device's own storage stream. One thread at a time (the simulator's).
public final class SimDisk: @unchecked Sendable {
    // @unchecked: owned by one world (one thread); `Sendable` only so `StoreLocation` stays so.
    let disk: OpaquePointer
    /// The device's database file name for `sqlite3_open_v2` with the VFS.
    let path: String
    /// Set by `IMStore.crash()` (an app kill) to its connection's `conversationRowsDerived`,
    /// taken by the next open of this device, cleared by a power loss: the open store then
    /// trusts its conversation rows only if the killed one did and nothing but SQLite's
    /// recovery came between.
    var conversationRowsDerived = false

    /// Fault knobs (see the fields): changed by the world between store operations.
    public struct Faults: Sendable, Hashable {
        /// Probability per call, parts per million.
        public var readErrorPpm: UInt32 = 0, writeErrorPpm: UInt32 = 0, syncErrorPpm: UInt32 = 0
        /// A window in which every call of that kind fails.
        public var readError = false, writeError = false, syncError = false
        /// Writes that would grow the device fail with SQLITE_FULL.
        public var full = false
        /// fsync answers OK before the data is durable.
        public var syncLies = false
        public init() {}
    }

    public struct Stats: Sendable, Hashable {
        public var reads, writes, syncs, truncates, bytesWritten, bytesSynced: UInt64
        public var readErrors, writeErrors, syncErrors, fullErrors: UInt64
        public var powerLosses, sectorsLost, sectorsTorn: UInt64
    }

    public init(seed: UInt64) {
        _ = SimDisk.registered
        disk = imsim_simdisk_new(seed)!
        var buf = [CChar](repeating: 0, count: 80)
        imsim_simdisk_db_path(disk, &buf, Int32(buf.count))
        path = String(cString: buf)
    }

    deinit { imsim_simdisk_free(disk) }

    /// `sqlite3_vfs_register` initialises SQLite: the library's process-wide setup comes first.
    private static let registered: Bool = {
        _ = SQLiteConnection.libraryConfigured
        return imsim_simvfs_register() == SQLITE_OK
    }()

    public static let vfsName = IMSIM_SIMVFS_NAME

    public var faults: Faults {
        get {
            let f = imsim_simdisk_faults_of(disk)!.pointee
            var r = Faults()
            r.readErrorPpm = f.read_error_ppm; r.writeErrorPpm = f.write_error_ppm; r.syncErrorPpm = f.sync_error_ppm
            r.readError = f.read_error != 0; r.writeError = f.write_error != 0; r.syncError = f.sync_error != 0
            r.full = f.full != 0; r.syncLies = f.sync_lies != 0
            return r
        }
        set {
            let p = imsim_simdisk_faults_of(disk)!
            p.pointee = imsim_simdisk_faults(
                read_error_ppm: newValue.readErrorPpm, write_error_ppm: newValue.writeErrorPpm,
                sync_error_ppm: newValue.syncErrorPpm, read_error: newValue.readError ? 1 : 0,
                write_error: newValue.writeError ? 1 : 0, sync_error: newValue.syncError ? 1 : 0,
                full: newValue.full ? 1 : 0, sync_lies: newValue.syncLies ? 1 : 0)
        }
    }

    public var stats: Stats {
        let s = imsim_simdisk_stats_of(disk)!.pointee
        return Stats(reads: s.reads, writes: s.writes, syncs: s.syncs, truncates: s.truncates,
                     bytesWritten: s.bytes_written, bytesSynced: s.bytes_synced, readErrors: s.read_errors,
                     writeErrors: s.write_errors, syncErrors: s.sync_errors, fullErrors: s.full_errors,
                     powerLosses: s.power_losses, sectorsLost: s.sectors_lost, sectorsTorn: s.sectors_torn)
    }

    /// False for a device that cannot lose power in this run: it keeps no synced copies (every
    /// write is durable as it reaches the OS, a power loss would lose nothing). The synced copies
    /// and their bookkeeping are observable only through a power loss, so a world whose scenario
    /// can never cut a device's power turns them off (Docs/store.md, "Devices that cannot lose
    /// power"). Turning it off makes what was written so far durable.
    public var tracksPowerLoss: Bool {
        get { imsim_simdisk_writes_durable(disk) == 0 }
        set { imsim_simdisk_set_writes_durable(disk, newValue ? 0 : 1) }
    }

    /// Sectors written since their last sync, over every file.
    public var unsyncedSectors: Int { Int(imsim_simdisk_unsynced_sectors(disk)) }
    /// Bytes the device holds (files plus the synced copies of unsynced sectors).
    public var usedBytes: Int { Int(imsim_simdisk_used_bytes(disk)) }

    /// Up to `count` written bytes of the device's file `name` (`store.db`, `store.db-wal`) from
    /// `offset`; nil when there is no such file (tests and diagnostics).
    public func bytes(of name: String, at offset: Int = 0, count: Int) -> [UInt8]? {
        var buf = [UInt8](repeating: 0, count: count)
        let got = buf.withUnsafeMutableBytes { imsim_simdisk_read(disk, name, Int64(offset), $0.baseAddress, Int64(count)) }
        return got < 0 ? nil : Array(buf[..<Int(got)])
    }

    /// Re-seeds the fault draws.
    public func seed(_ seed: UInt64) { imsim_simdisk_seed(disk, seed) }

    /// Reseeds SQLite's own (process-wide) PRNG from this device's seed and open count, so the
    /// WAL salts and journal nonces it writes here do not come from /dev/urandom.
    func seedSQLitePRNG() { imsim_simdisk_seed_sqlite_prng(disk) }

    /// App kill: handles open now go stale (nothing they do later reaches the device).
    func kill() { imsim_simdisk_kill(disk) }
    func freezeDeletes(_ on: Bool) { imsim_simdisk_freeze_deletes(disk, on ? 1 : 0) }

    /// Power loss of the device (after its connections were killed): unsynced data is lost, or,
    /// `torn`, partly kept. Returns the unsynced sectors there were.
    @discardableResult
    func powerLoss(torn: Bool) -> Int {
        // Unsynced writes lost or torn: recovery need not land on a state the store wrote.
        conversationRowsDerived = false
        return Int(imsim_simdisk_power_loss(disk, torn ? 1 : 0))
    }

    /// Power loss of a device with no open connection (tests, and after `IMStore.crash`).
    @discardableResult
    public func losePower(torn: Bool) -> Int { powerLoss(torn: torn) }
}

extension SimDisk: Hashable {
    public static func == (a: SimDisk, b: SimDisk) -> Bool { a === b }
    public func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(self)) }
}
