// A size-class allocator for SQLite (sqlite3_mem_methods; Docs/store.md, "SQLite's allocator").
//
// Every simulated device has its own connection, so SQLite prepares the same statements a
// thousand times; preparing is mostly small allocations that live until the parse ends, in
// bursts larger than glibc's per-thread cache (7 blocks a size), so most of them took malloc's
// slow path (~120 instructions, ~60 to free). Here a request up to 1 KiB is one of 64 classes
// (16 bytes apart) with a per-thread free list: a pop or a push. Blocks are carved from 256 KiB
// chunks and never given back to the system (SQLite's small-block footprint is what it keeps
// reusing); a block freed on another thread joins that thread's list. Larger requests (pages,
// sorter buffers) go to malloc. A 16-byte header holds the capacity (xSize) and keeps the
// alignment malloc gives.
#include "shim.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_LIMIT 1024            /* larger requests go to malloc */
#define CLASS_SHIFT 4               /* 16-byte classes */
#define NCLASSES ((SMALL_LIMIT >> CLASS_SHIFT) + 1)
#define CHUNK (256 * 1024)
#define HDR 16                      /* keeps 16-byte alignment; holds the capacity */

typedef struct freeblock { struct freeblock *next; } freeblock;
typedef struct arena {
    freeblock *free[NCLASSES];
    char *bump, *end;
} arena;
static _Thread_local arena A;

static void *fm_malloc(int n) {
    if (n <= 0) return 0;
    size_t cls = ((size_t)n + 15) >> CLASS_SHIFT;
    if (cls < NCLASSES) {
        arena *a = &A;
        freeblock *b = a->free[cls];
        if (b) { a->free[cls] = b->next; return b; }
        size_t need = HDR + (cls << CLASS_SHIFT);
        if ((size_t)(a->end - a->bump) < need) {
            char *c = malloc(CHUNK);
            if (!c) return 0;
            a->bump = c; a->end = c + CHUNK;
        }
        char *p = a->bump; a->bump += need;
        *(uint64_t *)p = cls << CLASS_SHIFT;
        return p + HDR;
    }
    char *p = malloc((size_t)n + HDR);
    if (!p) return 0;
    *(uint64_t *)p = (uint64_t)n;
    return p + HDR;
}

static int fm_size(void *p) { return p ? (int)*(uint64_t *)((char *)p - HDR) : 0; }

static void fm_free(void *p) {
    if (!p) return;
    uint64_t sz = *(uint64_t *)((char *)p - HDR);
    if (sz <= SMALL_LIMIT) {
        arena *a = &A;
        size_t cls = sz >> CLASS_SHIFT;
        freeblock *b = p; b->next = a->free[cls]; a->free[cls] = b;
        return;
    }
    free((char *)p - HDR);
}

static void *fm_realloc(void *p, int n) {
    if (!p) return fm_malloc(n);
    int old = fm_size(p);
    if (n <= old) {
        if (old <= SMALL_LIMIT) return p;              /* fits its class */
        if (n > SMALL_LIMIT && n > old / 2) return p;  /* a large block shrinking a little */
    }
    void *q = fm_malloc(n);
    if (!q) return 0;
    memcpy(q, p, (size_t)(old < n ? old : n));
    fm_free(p);
    return q;
}

static int fm_roundup(int n) { return n <= SMALL_LIMIT ? ((n + 15) & ~15) : ((n + 7) & ~7); }
static int fm_init(void *x) { (void)x; return SQLITE_OK; }
static void fm_shutdown(void *x) { (void)x; }

int imsim_sqlite_use_size_class_malloc(void) {
    if (getenv("IMSIM_SQLITE_SYSTEM_MALLOC")) return SQLITE_OK;
    static const sqlite3_mem_methods m = { fm_malloc, fm_free, fm_realloc, fm_size, fm_roundup, fm_init, fm_shutdown, 0 };
    return sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
}
