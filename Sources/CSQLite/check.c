// Keeps the target buildable-with-a-clear-error when Tools/setup.sh has not fetched SQLite yet:
// shim.h stops the build with the fix instead of a link error about missing sqlite3_* symbols.
#include "shim.h"
