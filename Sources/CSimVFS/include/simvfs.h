#ifndef IMSIM_SIMVFS_H
#define IMSIM_SIMVFS_H
#include <stdint.h>

/// A simulated storage device for SQLite (issue 28): every file of one device (database, WAL,
/// rollback journal, wal-index) in memory, with what was *written* (reached the OS) apart from
/// what was *synced* (durable). No real file is touched; no clock, no thread, no system
/// randomness: faults draw from the device's own PRNG state, which the world seeds.
///
/// Open a database on a device with `imsim_simdisk_db_path` as the file name and the VFS
/// `IMSIM_SIMVFS_NAME` (`imsim_simvfs_register` must have been called once).
#define IMSIM_SIMVFS_NAME "imsim-sim"
#define IMSIM_SIMDISK_SECTOR 512

typedef struct imsim_simdisk imsim_simdisk;

/// Fault knobs of a device. Probabilities in parts per million per call.
typedef struct imsim_simdisk_faults {
    uint32_t read_error_ppm;   // xRead → SQLITE_IOERR_READ
    uint32_t write_error_ppm;  // xWrite/xTruncate → SQLITE_IOERR_WRITE / _TRUNCATE
    uint32_t sync_error_ppm;   // xSync → SQLITE_IOERR_FSYNC
    int32_t  read_error;       // != 0: every xRead fails (a scheduled window)
    int32_t  write_error;      // != 0: every xWrite/xTruncate fails
    int32_t  sync_error;       // != 0: every xSync fails
    int32_t  full;             // != 0: any write that grows the device fails with SQLITE_FULL
    int32_t  sync_lies;        // != 0: xSync answers OK and makes nothing durable
} imsim_simdisk_faults;

typedef struct imsim_simdisk_stats {
    uint64_t reads, writes, syncs, truncates;
    uint64_t bytes_written, bytes_synced;
    uint64_t read_errors, write_errors, sync_errors, full_errors;
    uint64_t power_losses, sectors_lost, sectors_torn;
} imsim_simdisk_stats;

/// Registers the VFS (not as the default). Idempotent; returns an SQLite result code.
int imsim_simvfs_register(void);

/// A new, empty device whose fault draws come from `seed`.
imsim_simdisk *imsim_simdisk_new(uint64_t seed);
/// Frees the device and its files. Every connection on it must be closed first.
void imsim_simdisk_free(imsim_simdisk *disk);
/// The file name of the device's database (for sqlite3_open_v2 with the VFS); at most 64 bytes.
void imsim_simdisk_db_path(const imsim_simdisk *disk, char *out, int out_len);

imsim_simdisk_faults *imsim_simdisk_faults_of(imsim_simdisk *disk);
const imsim_simdisk_stats *imsim_simdisk_stats_of(const imsim_simdisk *disk);
/// Re-seeds the device's fault PRNG.
void imsim_simdisk_seed(imsim_simdisk *disk, uint64_t seed);

/// App kill: every file handle open now goes stale — whatever its connection does afterwards
/// (closing checkpoints, deletes the WAL) never reaches the device. What was written stays.
/// The wal-index is dropped, so the next open recovers it from the WAL.
void imsim_simdisk_kill(imsim_simdisk *disk);

/// Power loss: an app kill, then every file goes back to its synced state. With `torn`, each
/// unsynced sector survives or not by the device PRNG, one may be half-written, and a grown file
/// keeps its written length or its synced one. Returns the number of unsynced sectors.
int64_t imsim_simdisk_power_loss(imsim_simdisk *disk, int torn);

/// On: the device keeps no synced copies — every write is durable as it reaches the OS, and a
/// power loss loses nothing (what was written so far becomes durable when this is turned on).
/// For a run in which no power loss can happen: the exact model's bookkeeping is then dead work.
void imsim_simdisk_set_writes_durable(imsim_simdisk *disk, int on);
int imsim_simdisk_writes_durable(const imsim_simdisk *disk);

/// Reseeds SQLite's process-wide PRNG (WAL salt, journal nonce) from the device's creation seed
/// and its open count; call right before opening the device's database (see Docs/store.md).
void imsim_simdisk_seed_sqlite_prng(imsim_simdisk *disk);
/// While on, deletes are ignored: a killed connection is closing (see IMStore).
void imsim_simdisk_freeze_deletes(imsim_simdisk *disk, int on);
/// Sectors written but not yet synced, over every file (0 after a sync of every file).
int64_t imsim_simdisk_unsynced_sectors(const imsim_simdisk *disk);
/// Copies up to `n` written bytes of the file `name` ("store.db", "store.db-wal") from `off`;
/// returns how many, or -1 when the device has no such file (tests and diagnostics).
int64_t imsim_simdisk_read(const imsim_simdisk *disk, const char *name, int64_t off, void *buf, int64_t n);
/// Bytes the device holds (files plus undo copies).
int64_t imsim_simdisk_used_bytes(const imsim_simdisk *disk);

/// Gives SQLite a size-class allocator (`SQLITE_CONFIG_MALLOC`, `sqlite_malloc.c`): requests up
/// to 1 KiB come from per-thread free lists, larger ones from malloc. Before `sqlite3_initialize`
/// only (else SQLITE_MISUSE). The environment variable IMSIM_SQLITE_SYSTEM_MALLOC (any value)
/// keeps the system allocator (for memcheck). Same results: only where SQLite's memory comes from.
int imsim_sqlite_use_size_class_malloc(void);
#endif
