// Simulated storage for SQLite (issue 28): see include/simvfs.h and Docs/store.md.
//
// Model. A device holds named files. Each file keeps its bytes as *written* (what reached the
// OS) and, for every sector changed since the last xSync, the sector's *synced* content (an undo
// copy), plus its synced length. xSync drops the undo copies; a power loss puts them back (all of
// them, or a PRNG-chosen subset when torn). Directory operations (create, delete) are durable at
// once: a simplification, said in Docs/store.md. Single-threaded by contract (the simulator's
// thread); SQLite's own mutexes are not needed (connections are opened NOMUTEX).
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // mremap
#endif
#include "simvfs.h"
#include "shim.h"
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define SECTOR IMSIM_SIMDISK_SECTOR
#define PREFIX "/imsim-sim/"
#define MAX_FILES 16
#define SHM_SLOTS SQLITE_SHM_NLOCK

// Sectors changed since the last sync, as runs of consecutive sectors in order of first change
// (a write's new sectors are one run, or two where it crosses the synced length; a run that
// continues the last one extends it). `undo` is the offset in the file's undo buffer of the
// first sector's synced content, the others following it, or -1 when the run lies wholly past
// the synced length (its synced content is zeros: no copy — every WAL append between
// checkpoints is such a sector). A power loss walks the runs sector by sector: the same sectors
// in the same order as one entry per sector would give, so the same PRNG draws.
typedef struct dirty_run {
    int64_t sector, count;
    int64_t undo;
} dirty_run;

static const uint8_t zero_sector[SECTOR];

typedef struct simfile {
    char name[96];
    uint8_t *data;
    int64_t size, cap;          // written length, buffer capacity (bytes past size are zero)
    int mapped;                 // data is an anonymous mapping (else heap memory)
    int64_t synced_size;
    uint64_t *dirty;            // one bit per sector: changed since the last sync
    int64_t dirty_cap;          // sectors the bitmap covers (a multiple of 64)
    dirty_run *runs;            // changed sectors, in order of first change
    int64_t n_runs, runs_cap;
    int64_t n_dirty;            // sectors in the runs
    uint8_t *undo;              // SECTOR bytes per saved synced content (dirty_run.undo)
    int64_t n_undo, undo_cap;
    // Rollback-journal locks (SQLite's five states), per file.
    int n_shared;
    void *reserved, *pending, *exclusive;
} simfile;

// The wal-index ("-shm"): memory regions plus the WAL's slot locks. Reference-counted so that a
// killed connection can keep using the set it mapped while a new connection gets a fresh one.
typedef struct shmset {
    void **regions;
    int n_regions, region_size, refs;
    int shared[SHM_SLOTS];
    void *excl[SHM_SLOTS];
} shmset;

struct imsim_simdisk {
    uint64_t rng;
    uint64_t prng_seed;         // the creation seed: SQLite's own PRNG is reseeded from it
    uint64_t opens;             // databases opened on this device (imsim_simdisk_seed_sqlite_prng)
    uint64_t gen;
    int frozen;                 // deletes ignored while a killed connection closes
    int writes_durable;         // no power loss can come: every write is durable as it is made
    imsim_simdisk_faults faults;
    imsim_simdisk_stats stats;
    simfile *files[MAX_FILES];
    shmset *shm;
};

typedef struct simhandle {
    sqlite3_file base;
    imsim_simdisk *disk;
    simfile *file;
    int anon;                   // a temp file of this handle only
    int delete_on_close;
    uint64_t gen;
    int lock;
    shmset *shm;
    uint16_t shm_shared, shm_excl;  // slot bitmasks this handle holds
} simhandle;

// ---- PRNG (splitmix64): the device's only source of randomness ----
static uint64_t next_rand(imsim_simdisk *d) {
    uint64_t z = (d->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int chance_ppm(imsim_simdisk *d, uint32_t ppm) {
    if (ppm == 0) return 0;
    return (next_rand(d) % 1000000u) < ppm;
}

// ---- files ----
// A file's bytes. On Linux each file's buffer is its own anonymous mapping, grown with mremap:
// growth moves page tables instead of copying the file, and the new room is zero pages the
// kernel hands out on first touch. With realloc + memset a thousand devices' files, each grown
// by doubling, were copied and zeroed through the cache (three quarters of the device run's
// last-level cache write misses in mixed-1k's first 15 minutes; Docs/store.md). Capacities are
// powers of two from 4096, so whole pages.
static void data_free(simfile *f) {
    if (!f->data) return;
#if defined(__linux__)
    if (f->mapped) { munmap(f->data, (size_t)f->cap); return; }
#endif
    free(f->data);
}
static uint8_t *data_grow(simfile *f, int64_t c) {
#if defined(__linux__)
    if (f->mapped || !f->data) {
        void *p = f->data
            ? mremap(f->data, (size_t)f->cap, (size_t)c, MREMAP_MAYMOVE)
            : mmap(NULL, (size_t)c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) { f->mapped = 1; return p; }
        // Out of mappings (vm.max_map_count): this file continues on the heap.
        if (f->data) {
            uint8_t *h = malloc((size_t)c);
            if (!h) return NULL;
            memcpy(h, f->data, (size_t)f->cap);
            memset(h + f->cap, 0, (size_t)(c - f->cap));
            munmap(f->data, (size_t)f->cap);
            f->mapped = 0;
            return h;
        }
        f->mapped = 0;
    }
#endif
    uint8_t *p = realloc(f->data, (size_t)c);
    if (p) memset(p + f->cap, 0, (size_t)(c - f->cap));
    return p;
}
static void file_free(simfile *f) {
    if (!f) return;
    data_free(f); free(f->dirty); free(f->runs); free(f->undo); free(f);
}
static int ensure_cap(simfile *f, int64_t n) {
    if (n <= f->cap) return 1;
    int64_t c = f->cap ? f->cap : 4096;
    while (c < n) c *= 2;
    uint8_t *p = data_grow(f, c);
    if (!p) return 0;
    f->data = p; f->cap = c;
    return 1;
}
// The first sector in [from, to) whose dirty bit is `want`, or `to`.
static int64_t bit_find(const uint64_t *bm, int64_t from, int64_t to, int want) {
    while (from < to) {
        uint64_t w = bm[from >> 6];
        if (!want) w = ~w;
        w >>= (from & 63);
        if (w) { int64_t i = from + __builtin_ctzll(w); return i < to ? i : to; }
        from = (from | 63) + 1;
    }
    return to;
}
static void bits_assign(uint64_t *bm, int64_t from, int64_t to, int on) {
    while (from < to) {
        int64_t end = (from | 63) + 1 < to ? (from | 63) + 1 : to;
        uint64_t m = (end - from == 64) ? ~0ull : (((1ull << (end - from)) - 1) << (from & 63));
        if (on) bm[from >> 6] |= m; else bm[from >> 6] &= ~m;
        from = end;
    }
}
// Appends sectors [s, s + n) to the runs (undo: offset of the first one's copy, or -1).
static void add_run(simfile *f, int64_t s, int64_t n, int64_t undo) {
    if (f->n_runs) {
        dirty_run *r = &f->runs[f->n_runs - 1];
        if (r->sector + r->count == s && (undo < 0 ? r->undo < 0 : r->undo >= 0 && r->undo + r->count * SECTOR == undo)) {
            r->count += n;
            return;
        }
    }
    dirty_run *r = &f->runs[f->n_runs++];
    r->sector = s; r->count = n; r->undo = undo;
}
// Marks the sectors of bytes [from, to) changed, saving each one's synced content the first
// time (a copy only when the sector holds synced bytes): one run and one memcpy per stretch of
// sectors not yet changed. Capacities are grown once per call.
static int touch_range(simfile *f, int64_t from, int64_t to) {
    if (to <= from) return 1;
    int64_t s0 = from / SECTOR, s1 = (to - 1) / SECTOR, end = s1 + 1;
    // Fast path: every sector already changed since the last sync (within one bitmap word).
    if (end <= f->dirty_cap && (s0 >> 6) == (s1 >> 6)) {
        uint64_t m = (end - s0 == 64) ? ~0ull : (((1ull << (end - s0)) - 1) << (s0 & 63));
        if ((f->dirty[s0 >> 6] & m) == m) return 1;
    }
    if (end > f->dirty_cap) {
        int64_t c = f->dirty_cap ? f->dirty_cap : 64;
        while (c < end) c *= 2;
        uint64_t *p = realloc(f->dirty, (size_t)(c / 64) * sizeof(uint64_t));
        if (!p) return 0;
        memset(p + f->dirty_cap / 64, 0, (size_t)((c - f->dirty_cap) / 64) * sizeof(uint64_t));
        f->dirty = p; f->dirty_cap = c;
    }
    // At most one run per stretch of unchanged sectors, plus one where it crosses the synced length.
    int64_t n = end - s0;
    if (f->n_runs + n + 1 > f->runs_cap) {
        int64_t c = f->runs_cap ? f->runs_cap : 16;
        while (c < f->n_runs + n + 1) c *= 2;
        dirty_run *l = realloc(f->runs, (size_t)c * sizeof(dirty_run));
        if (!l) return 0;
        f->runs = l; f->runs_cap = c;
    }
    // Sectors holding synced bytes: s * SECTOR < synced_size. Room for the most copies this
    // call can need (every sector of the range that holds synced bytes), so no counting pass.
    int64_t synced_sectors = (f->synced_size + SECTOR - 1) / SECTOR;
    int64_t most = (end < synced_sectors ? end : synced_sectors) - s0;
    if (most > 0 && f->n_undo + most > f->undo_cap) {
        int64_t c = f->undo_cap ? f->undo_cap : 16;
        while (c < f->n_undo + most) c *= 2;
        uint8_t *u = realloc(f->undo, (size_t)c * SECTOR);
        if (!u) return 0;
        f->undo = u; f->undo_cap = c;
    }
    for (int64_t s = bit_find(f->dirty, s0, end, 0); s < end; s = bit_find(f->dirty, s, end, 0)) {
        int64_t e = bit_find(f->dirty, s, end, 1);   // [s, e): not changed since the last sync
        bits_assign(f->dirty, s, e, 1);
        f->n_dirty += e - s;
        int64_t m = e < synced_sectors ? e : synced_sectors;
        if (s < m) {
            // Within the buffer: its capacity covers the synced length, a multiple of SECTOR.
            memcpy(f->undo + f->n_undo * SECTOR, f->data + s * SECTOR, (size_t)((m - s) * SECTOR));
            add_run(f, s, m - s, f->n_undo * SECTOR);
            f->n_undo += m - s;
        } else {
            m = s;
        }
        if (m < e) add_run(f, m, e - m, -1);
        s = e;
    }
    return 1;
}
static void file_sync(simfile *f) {
    for (int64_t i = 0; i < f->n_runs; i++) bits_assign(f->dirty, f->runs[i].sector, f->runs[i].sector + f->runs[i].count, 0);
    f->n_runs = 0;
    f->n_dirty = 0;
    f->n_undo = 0;
    f->synced_size = f->size;
}
static void set_size(simfile *f, int64_t n) {
    if (n < f->size) memset(f->data + n, 0, (size_t)(f->size - n));
    f->size = n;
}

static simfile *find_file(imsim_simdisk *d, const char *name, int *slot) {
    for (int i = 0; i < MAX_FILES; i++) {
        if (d->files[i] && strcmp(d->files[i]->name, name) == 0) { if (slot) *slot = i; return d->files[i]; }
    }
    return NULL;
}

// "/imsim-sim/<16 hex digits>/<file>" → the device and the file's name on it.
static imsim_simdisk *parse_path(const char *path, const char **rest) {
    size_t n = strlen(PREFIX);
    if (!path || strncmp(path, PREFIX, n) != 0 || strlen(path) < n + 18 || path[n + 16] != '/') return NULL;
    uint64_t v = 0;
    for (size_t i = n; i < n + 16; i++) {
        char c = path[i];
        int x = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
        if (x < 0) return NULL;
        v = v << 4 | (uint64_t)x;
    }
    *rest = path + n + 17;
    return (imsim_simdisk *)(uintptr_t)v;
}

// ---- io methods ----
static int live(simhandle *h) { return h->anon || h->gen == h->disk->gen; }

static void shm_release(simhandle *h);

static int x_close(sqlite3_file *pf) {
    simhandle *h = (simhandle *)pf;
    shm_release(h);
    if (h->anon) { file_free(h->file); free(h->disk); h->file = NULL; h->disk = NULL; return SQLITE_OK; }
    if (live(h)) {
        simfile *f = h->file;
        if (h->lock >= SQLITE_LOCK_SHARED && f->n_shared > 0) f->n_shared--;
        if (f->reserved == h) f->reserved = NULL;
        if (f->pending == h) f->pending = NULL;
        if (f->exclusive == h) f->exclusive = NULL;
        if (h->delete_on_close && !h->disk->frozen) {
            int slot;
            if (find_file(h->disk, f->name, &slot) == f) { h->disk->files[slot] = NULL; file_free(f); }
        }
    }
    h->file = NULL;
    return SQLITE_OK;
}

static int x_read(sqlite3_file *pf, void *buf, int amt, sqlite3_int64 off) {
    simhandle *h = (simhandle *)pf;
    imsim_simdisk *d = h->disk;
    simfile *f = h->file;
    d->stats.reads++;
    if (!h->anon && (d->faults.read_error || chance_ppm(d, d->faults.read_error_ppm))) {
        d->stats.read_errors++;
        return SQLITE_IOERR_READ;
    }
    int64_t avail = off >= f->size ? 0 : f->size - off;
    if (avail >= amt) { memcpy(buf, f->data + off, (size_t)amt); return SQLITE_OK; }
    if (avail > 0) memcpy(buf, f->data + off, (size_t)avail);
    // The contract: zero-fill the rest and say so, or SQLite may read garbage as a page.
    memset((uint8_t *)buf + avail, 0, (size_t)(amt - avail));
    return SQLITE_IOERR_SHORT_READ;
}

static int x_write(sqlite3_file *pf, const void *buf, int amt, sqlite3_int64 off) {
    simhandle *h = (simhandle *)pf;
    imsim_simdisk *d = h->disk;
    simfile *f = h->file;
    if (!live(h)) return SQLITE_OK;          // a killed process: never reaches the device
    if (!h->anon) {
        if (d->faults.write_error || chance_ppm(d, d->faults.write_error_ppm)) {
            d->stats.write_errors++;
            return SQLITE_IOERR_WRITE;
        }
        if (d->faults.full && off + amt > f->size) { d->stats.full_errors++; return SQLITE_FULL; }
    }
    int64_t end = off + amt;
    if (end > f->cap && !ensure_cap(f, end)) return SQLITE_IOERR_NOMEM;
    if (!h->anon && !d->writes_durable && !touch_range(f, off < f->size ? off : f->size, end)) return SQLITE_IOERR_NOMEM;
    memcpy(f->data + off, buf, (size_t)amt);
    if (end > f->size) f->size = end;
    d->stats.writes++;
    d->stats.bytes_written += (uint64_t)amt;
    return SQLITE_OK;
}

static int x_truncate(sqlite3_file *pf, sqlite3_int64 size) {
    simhandle *h = (simhandle *)pf;
    imsim_simdisk *d = h->disk;
    simfile *f = h->file;
    if (!live(h)) return SQLITE_OK;
    if (!h->anon) {
        if (d->faults.write_error || chance_ppm(d, d->faults.write_error_ppm)) {
            d->stats.write_errors++;
            return SQLITE_IOERR_TRUNCATE;
        }
        if (d->faults.full && size > f->size) { d->stats.full_errors++; return SQLITE_FULL; }
    }
    if (!ensure_cap(f, size)) return SQLITE_IOERR_NOMEM;
    if (!h->anon && !d->writes_durable) {
        int64_t lo = size < f->size ? size : f->size, hi = size < f->size ? f->size : size;
        if (!touch_range(f, lo, hi)) return SQLITE_IOERR_NOMEM;
    }
    set_size(f, size);
    d->stats.truncates++;
    return SQLITE_OK;
}

static int x_sync(sqlite3_file *pf, int flags) {
    (void)flags;
    simhandle *h = (simhandle *)pf;
    imsim_simdisk *d = h->disk;
    if (!live(h) || h->anon) return SQLITE_OK;
    if (d->faults.sync_error || chance_ppm(d, d->faults.sync_error_ppm)) {
        d->stats.sync_errors++;
        return SQLITE_IOERR_FSYNC;
    }
    d->stats.syncs++;
    if (d->faults.sync_lies) return SQLITE_OK;  // returns before the data is durable
    d->stats.bytes_synced += (uint64_t)h->file->n_dirty * SECTOR;
    file_sync(h->file);
    return SQLITE_OK;
}

static int x_file_size(sqlite3_file *pf, sqlite3_int64 *size) {
    *size = ((simhandle *)pf)->file->size;
    return SQLITE_OK;
}

// SQLite's lock states (NONE < SHARED < RESERVED < PENDING < EXCLUSIVE) between the handles of
// one device (two connections on one database in tests; one in the world).
static int x_lock(sqlite3_file *pf, int level) {
    simhandle *h = (simhandle *)pf;
    if (h->lock >= level) return SQLITE_OK;
    if (h->anon || !live(h)) { h->lock = level; return SQLITE_OK; }
    simfile *f = h->file;
    if (level == SQLITE_LOCK_SHARED) {
        if ((f->pending && f->pending != h) || (f->exclusive && f->exclusive != h)) return SQLITE_BUSY;
        f->n_shared++;
        h->lock = SQLITE_LOCK_SHARED;
        return SQLITE_OK;
    }
    if (level == SQLITE_LOCK_RESERVED) {
        if (f->reserved && f->reserved != h) return SQLITE_BUSY;
        f->reserved = h;
        h->lock = SQLITE_LOCK_RESERVED;
        return SQLITE_OK;
    }
    // EXCLUSIVE (through PENDING): no new readers from now; wait for the others to leave.
    if (f->pending && f->pending != h) return SQLITE_BUSY;
    if (f->exclusive && f->exclusive != h) return SQLITE_BUSY;
    f->pending = h;
    if (h->lock < SQLITE_LOCK_RESERVED) {
        if (f->reserved && f->reserved != h) return SQLITE_BUSY;
        f->reserved = h;
    }
    h->lock = SQLITE_LOCK_PENDING;
    if (f->n_shared > 1) return SQLITE_BUSY;
    f->exclusive = h;
    h->lock = SQLITE_LOCK_EXCLUSIVE;
    return SQLITE_OK;
}

static int x_unlock(sqlite3_file *pf, int level) {
    simhandle *h = (simhandle *)pf;
    if (h->lock <= level) return SQLITE_OK;
    if (h->anon || !live(h)) { h->lock = level; return SQLITE_OK; }
    simfile *f = h->file;
    if (f->exclusive == h) f->exclusive = NULL;
    if (f->pending == h) f->pending = NULL;
    if (level < SQLITE_LOCK_RESERVED && f->reserved == h) f->reserved = NULL;
    if (level < SQLITE_LOCK_SHARED && h->lock >= SQLITE_LOCK_SHARED && f->n_shared > 0) f->n_shared--;
    h->lock = level;
    return SQLITE_OK;
}

static int x_check_reserved(sqlite3_file *pf, int *out) {
    simhandle *h = (simhandle *)pf;
    simfile *f = h->file;
    *out = (!h->anon && live(h) && ((f->reserved && f->reserved != h) || (f->exclusive && f->exclusive != h))) ? 1 : 0;
    return SQLITE_OK;
}

static int x_file_control(sqlite3_file *pf, int op, void *arg) { (void)pf; (void)op; (void)arg; return SQLITE_NOTFOUND; }
static int x_sector_size(sqlite3_file *pf) { (void)pf; return SECTOR; }
// Power-safe overwrite: a power loss never changes bytes not written since the last sync (the
// undo copies put back only what was written; a torn sector's unwritten bytes are its synced
// ones) — what SQLite's unix VFS also claims by default, as on Android. No ATOMIC*, SEQUENTIAL
// or SAFE_APPEND: torn writes keep any subset of sectors, in any order (Docs/store.md).
static int x_device_chars(sqlite3_file *pf) { (void)pf; return SQLITE_IOCAP_POWERSAFE_OVERWRITE; }

// ---- wal-index (shared memory) ----
static void shm_free(shmset *s) {
    for (int i = 0; i < s->n_regions; i++) free(s->regions[i]);
    free(s->regions);
    free(s);
}
static void shm_release(simhandle *h) {
    shmset *s = h->shm;
    if (!s) return;
    for (int i = 0; i < SHM_SLOTS; i++) {
        if (h->shm_shared & (1u << i)) s->shared[i]--;
        if (s->excl[i] == h) s->excl[i] = NULL;
    }
    h->shm_shared = h->shm_excl = 0;
    h->shm = NULL;
    if (--s->refs == 0) {
        if (h->disk->shm == s) h->disk->shm = NULL;
        shm_free(s);
    }
}

static int x_shm_map(sqlite3_file *pf, int region, int size, int extend, void volatile **pp) {
    simhandle *h = (simhandle *)pf;
    imsim_simdisk *d = h->disk;
    *pp = NULL;
    if (!h->shm) {
        if (!live(h)) return SQLITE_IOERR_SHMMAP;  // a killed process maps nothing new
        if (!d->shm) {
            d->shm = calloc(1, sizeof(shmset));
            if (!d->shm) return SQLITE_IOERR_NOMEM;
            d->shm->region_size = size;
        }
        h->shm = d->shm;
        h->shm->refs++;
    }
    shmset *s = h->shm;
    if (region >= s->n_regions) {
        if (!extend) return SQLITE_OK;
        void **r = realloc(s->regions, (size_t)(region + 1) * sizeof(void *));
        if (!r) return SQLITE_IOERR_NOMEM;
        s->regions = r;
        for (int i = s->n_regions; i <= region; i++) {
            s->regions[i] = calloc(1, (size_t)size);
            if (!s->regions[i]) { s->n_regions = i; return SQLITE_IOERR_NOMEM; }
        }
        s->n_regions = region + 1;
    }
    *pp = s->regions[region];
    return SQLITE_OK;
}

static int x_shm_lock(sqlite3_file *pf, int ofst, int n, int flags) {
    simhandle *h = (simhandle *)pf;
    shmset *s = h->shm;
    if (!s) return SQLITE_OK;
    if (flags & SQLITE_SHM_UNLOCK) {
        for (int i = ofst; i < ofst + n; i++) {
            if (h->shm_shared & (1u << i)) { s->shared[i]--; h->shm_shared &= (uint16_t)~(1u << i); }
            if (s->excl[i] == h) { s->excl[i] = NULL; h->shm_excl &= (uint16_t)~(1u << i); }
        }
        return SQLITE_OK;
    }
    for (int i = ofst; i < ofst + n; i++) {
        if (s->excl[i] && s->excl[i] != h) return SQLITE_BUSY;
        if ((flags & SQLITE_SHM_EXCLUSIVE) && s->shared[i] - ((h->shm_shared >> i) & 1) > 0) return SQLITE_BUSY;
    }
    for (int i = ofst; i < ofst + n; i++) {
        if (flags & SQLITE_SHM_EXCLUSIVE) { s->excl[i] = h; h->shm_excl |= (uint16_t)(1u << i); }
        else if (!(h->shm_shared & (1u << i))) { s->shared[i]++; h->shm_shared |= (uint16_t)(1u << i); }
    }
    return SQLITE_OK;
}

static void x_shm_barrier(sqlite3_file *pf) { (void)pf; }

static int x_shm_unmap(sqlite3_file *pf, int delete_flag) {
    (void)delete_flag;  // the set is freed with its last user either way
    shm_release((simhandle *)pf);
    return SQLITE_OK;
}

static const sqlite3_io_methods io_methods = {
    2, x_close, x_read, x_write, x_truncate, x_sync, x_file_size, x_lock, x_unlock, x_check_reserved,
    x_file_control, x_sector_size, x_device_chars, x_shm_map, x_shm_lock, x_shm_barrier, x_shm_unmap,
    0, 0,
};

// ---- VFS methods ----
static int v_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *pf, int flags, int *out_flags) {
    (void)vfs;
    simhandle *h = (simhandle *)pf;
    memset(h, 0, sizeof(*h));
    if (!name) {
        // A temp file (IMSim sets temp_store=MEMORY, so rarely used): private to this handle.
        h->file = calloc(1, sizeof(simfile));
        if (!h->file) return SQLITE_NOMEM;
        h->anon = 1;
        // A private device, for its counters only: anonymous files never draw faults.
        h->disk = calloc(1, sizeof(imsim_simdisk));
        if (!h->disk) { free(h->file); return SQLITE_NOMEM; }
    } else {
        const char *rest;
        imsim_simdisk *d = parse_path(name, &rest);
        if (!d || strlen(rest) >= sizeof(((simfile *)0)->name)) return SQLITE_CANTOPEN;
        simfile *f = find_file(d, rest, NULL);
        if (!f) {
            if (!(flags & SQLITE_OPEN_CREATE)) return SQLITE_CANTOPEN;
            int slot = -1;
            for (int i = 0; i < MAX_FILES; i++) if (!d->files[i]) { slot = i; break; }
            if (slot < 0) return SQLITE_CANTOPEN;
            f = calloc(1, sizeof(simfile));
            if (!f) return SQLITE_NOMEM;
            strcpy(f->name, rest);
            d->files[slot] = f;
        }
        h->disk = d;
        h->file = f;
        h->gen = d->gen;
        h->delete_on_close = (flags & SQLITE_OPEN_DELETEONCLOSE) != 0;
    }
    h->base.pMethods = &io_methods;
    if (out_flags) *out_flags = flags;
    return SQLITE_OK;
}

static int v_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs; (void)sync_dir;
    const char *rest;
    imsim_simdisk *d = parse_path(name, &rest);
    if (!d) return SQLITE_IOERR_DELETE_NOENT;
    if (d->frozen) return SQLITE_OK;
    int slot;
    simfile *f = find_file(d, rest, &slot);
    if (!f) return SQLITE_IOERR_DELETE_NOENT;
    if (f->n_shared || f->reserved || f->pending || f->exclusive) {
        // Still open by a handle: unlink the name only (the handle keeps its data, as on POSIX).
        // IMSim never deletes an open file; refuse rather than free memory in use.
        return SQLITE_IOERR_DELETE;
    }
    d->files[slot] = NULL;
    file_free(f);
    return SQLITE_OK;
}

static int v_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs; (void)flags;
    const char *rest;
    imsim_simdisk *d = parse_path(name, &rest);
    *out = d && find_file(d, rest, NULL) ? 1 : 0;
    return SQLITE_OK;
}

static int v_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out) {
    (void)vfs;
    if ((int)strlen(name) >= n) return SQLITE_CANTOPEN;
    strcpy(out, name);
    return SQLITE_OK;
}

static int v_randomness(sqlite3_vfs *vfs, int n, char *out) { (void)vfs; memset(out, 0, (size_t)n); return n; }
static int v_sleep(sqlite3_vfs *vfs, int us) { (void)vfs; return us; }  // no real waiting
// No clock: a fixed instant (IMSim never asks SQLite for the time).
static int v_current_time(sqlite3_vfs *vfs, double *t) { (void)vfs; *t = 2440587.5; return SQLITE_OK; }
static int v_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *t) { (void)vfs; *t = 210866760000000LL; return SQLITE_OK; }
static int v_last_error(sqlite3_vfs *vfs, int n, char *out) { (void)vfs; if (n > 0) out[0] = 0; return 0; }

static sqlite3_vfs sim_vfs = {
    2, sizeof(simhandle), 128, 0, IMSIM_SIMVFS_NAME, 0,
    v_open, v_delete, v_access, v_full_pathname, 0, 0, 0, 0,
    v_randomness, v_sleep, v_current_time, v_last_error, v_current_time64, 0, 0, 0,
};

int imsim_simvfs_register(void) {
    if (sqlite3_vfs_find(IMSIM_SIMVFS_NAME)) return SQLITE_OK;
    return sqlite3_vfs_register(&sim_vfs, 0);
}

imsim_simdisk *imsim_simdisk_new(uint64_t seed) {
    imsim_simdisk *d = calloc(1, sizeof(imsim_simdisk));
    if (d) d->rng = d->prng_seed = seed;
    return d;
}

void imsim_simdisk_free(imsim_simdisk *d) {
    if (!d) return;
    for (int i = 0; i < MAX_FILES; i++) file_free(d->files[i]);
    // A wal-index still referenced belongs to its handles (freed when they unmap).
    if (d->shm && d->shm->refs == 0) shm_free(d->shm);
    free(d);
}

void imsim_simdisk_db_path(const imsim_simdisk *d, char *out, int n) {
    snprintf(out, (size_t)n, PREFIX "%016llx/store.db", (unsigned long long)(uintptr_t)d);
}

imsim_simdisk_faults *imsim_simdisk_faults_of(imsim_simdisk *d) { return &d->faults; }
const imsim_simdisk_stats *imsim_simdisk_stats_of(const imsim_simdisk *d) { return &d->stats; }
void imsim_simdisk_seed(imsim_simdisk *d, uint64_t seed) { d->rng = seed; }
void imsim_simdisk_seed_sqlite_prng(imsim_simdisk *d) {
    // SQLite seeds its PRNG (WAL salts, journal nonces) once per process from the *default* VFS
    // (/dev/urandom), never from this one: reseed it from the device's seed and how many times
    // its database was opened, so those bytes on the simulated disk depend on (scenario, seed)
    // only. Does not draw from the device's fault PRNG (digests unchanged). x must not be 0.
    uint64_t z = d->prng_seed + 0x9E3779B97F4A7C15ull * ++d->opens;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    int x = (int)(uint32_t)(z | 1);
    sqlite3_test_control(SQLITE_TESTCTRL_PRNG_SEED, x, (sqlite3 *)0);
}

void imsim_simdisk_freeze_deletes(imsim_simdisk *d, int on) { d->frozen = on; }

void imsim_simdisk_kill(imsim_simdisk *d) {
    d->gen++;
    for (int i = 0; i < MAX_FILES; i++) {
        simfile *f = d->files[i];
        if (!f) continue;
        f->n_shared = 0;
        f->reserved = f->pending = f->exclusive = NULL;
    }
    // The killed connection keeps the set it mapped until it closes; the next one starts empty
    // and rebuilds the index from the WAL (SQLite's recovery).
    if (d->shm && d->shm->refs == 0) shm_free(d->shm);
    d->shm = NULL;
}

void imsim_simdisk_set_writes_durable(imsim_simdisk *d, int on) {
    // Whatever was written so far is durable from here on (nothing is left to lose).
    for (int i = 0; i < MAX_FILES; i++) if (d->files[i]) file_sync(d->files[i]);
    d->writes_durable = on;
}
int imsim_simdisk_writes_durable(const imsim_simdisk *d) { return d->writes_durable; }

int64_t imsim_simdisk_power_loss(imsim_simdisk *d, int torn) {
    imsim_simdisk_kill(d);
    // No synced copies were kept: every written byte is the synced one.
    if (d->writes_durable) for (int i = 0; i < MAX_FILES; i++) if (d->files[i]) file_sync(d->files[i]);
    d->stats.power_losses++;
    int64_t total = 0;
    // Torn: how much of the unsynced data made it varies per power loss (0/8 … 8/8 of sectors).
    uint64_t survive = torn ? (next_rand(d) % 9) * 8 : 0;
    for (int i = 0; i < MAX_FILES; i++) {
        simfile *f = d->files[i];
        if (!f) continue;
        int64_t new_size = f->synced_size;
        if (torn && f->size > f->synced_size && (next_rand(d) & 1)) new_size = f->size;
        if (!ensure_cap(f, f->synced_size > f->size ? f->synced_size : f->size)) continue;
        for (int64_t k = 0; k < f->n_runs; k++) {
            const dirty_run *run = &f->runs[k];
            for (int64_t j = 0; j < run->count; j++) {
                uint8_t *p = f->data + (run->sector + j) * SECTOR;
                const uint8_t *old = run->undo < 0 ? zero_sector : f->undo + run->undo + j * SECTOR;
                int keep = 0, half = 0;
                if (torn) {
                    // Kept with this power loss's survival odds; of the lost, one in eight is torn
                    // in the middle (the first half written, the rest old).
                    uint64_t r = next_rand(d) % 64;
                    keep = r < survive;
                    half = !keep && (r & 7) == 0;
                }
                if (keep) continue;
                if (half) {
                    memcpy(p + SECTOR / 2, old + SECTOR / 2, SECTOR / 2);
                    d->stats.sectors_torn++;
                } else {
                    memcpy(p, old, SECTOR);
                    d->stats.sectors_lost++;
                }
            }
        }
        total += f->n_dirty;
        int64_t old_size = f->size;
        f->size = new_size > old_size ? new_size : old_size;  // restored bytes are in the buffer
        set_size(f, new_size);
        file_sync(f);
    }
    return total;
}

int64_t imsim_simdisk_read(const imsim_simdisk *d, const char *name, int64_t off, void *buf, int64_t n) {
    for (int i = 0; i < MAX_FILES; i++) {
        const simfile *f = d->files[i];
        if (!f || strcmp(f->name, name) != 0) continue;
        int64_t got = off >= f->size ? 0 : (f->size - off < n ? f->size - off : n);
        if (got > 0) memcpy(buf, f->data + off, (size_t)got);
        return got;
    }
    return -1;
}

int64_t imsim_simdisk_unsynced_sectors(const imsim_simdisk *d) {
    int64_t n = 0;
    for (int i = 0; i < MAX_FILES; i++) if (d->files[i]) n += d->files[i]->n_dirty;
    return n;
}

int64_t imsim_simdisk_used_bytes(const imsim_simdisk *d) {
    int64_t n = 0;
    for (int i = 0; i < MAX_FILES; i++) if (d->files[i]) n += d->files[i]->size + d->files[i]->n_undo * SECTOR;
    return n;
}
