#ifndef IMSIM_CSQLITE_SHIM_H
#define IMSIM_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT / SQLITE_STATIC are function-pointer-cast macros Swift cannot import.
static inline sqlite3_destructor_type imsim_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type imsim_sqlite_static(void) { return SQLITE_STATIC; }
#endif
