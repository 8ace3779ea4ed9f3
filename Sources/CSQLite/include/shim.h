#ifndef IMSIM_CSQLITE_SHIM_H
#define IMSIM_CSQLITE_SHIM_H
// IMSim builds its own SQLite (a pinned release, Docs/store.md "Which SQLite"): Tools/setup.sh
// puts the amalgamation's sqlite3.h here and sqlite3.c beside include/ (neither is committed).
// Both looked up beside this file first, so a host's /usr/include/sqlite3.h is never taken instead.
#if !__has_include("../sqlite3.c") || !__has_include("sqlite3.h")
#error "SQLite source missing: run ./Tools/setup.sh (it fetches the pinned SQLite amalgamation into Sources/CSQLite)"
#else
#include "sqlite3.h"
#if SQLITE_VERSION_NUMBER != 3050004
#error "Sources/CSQLite holds another SQLite than the pinned 3.50.4: run ./Tools/setup.sh"
#endif

// SQLITE_TRANSIENT / SQLITE_STATIC are function-pointer-cast macros Swift cannot import.
static inline sqlite3_destructor_type imsim_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type imsim_sqlite_static(void) { return SQLITE_STATIC; }

// sqlite3_config is variadic (Swift cannot call it). Memory statistics make every sqlite3_malloc
// and sqlite3_free take a global mutex; nothing in IMSim reads them. Must run before
// sqlite3_initialize(); returns SQLITE_MISUSE (harmless) if the library is already initialised.
static inline int imsim_sqlite_disable_memstatus(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }
#endif
#endif
