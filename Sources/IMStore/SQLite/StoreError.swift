import CSQLite
import IMWire

/// The one error type of IMStore: a failed SQLite call, or a stored value that cannot be read back.
///
/// `code` is SQLite's *extended* result code (e.g. `SQLITE_CONSTRAINT_CHECK` = 275); `primaryCode`
/// is its low byte (`SQLITE_CONSTRAINT` = 19). The SDK reports every database failure to the app
/// as **33002** (`IMErrorCode.databaseError`), see `imErrorCode`.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// SQLite extended result code.
    public var code: Int32
    /// SQLite's message (`sqlite3_errmsg`) or, for a value IMStore could not decode, what and where.
    public var message: String
    /// The SQL that failed, when there was one.
    public var sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// Primary result code (`SQLITE_CONSTRAINT`, `SQLITE_CANTOPEN`, `SQLITE_NOTADB`, …).
    public var primaryCode: Int32 { code & 0xff }

    /// The SDK error code the app sees for any store failure: 33002.
    public var imErrorCode: IMErrorCode { .databaseError }

    public var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }

    /// SQLite's English name for the code (`sqlite3_errstr`), e.g. "constraint failed".
    public var codeName: String { String(cString: sqlite3_errstr(code)) }

    public var description: String {
        var s = "StoreError(\(code) \(codeName)): \(message)"
        if let sql { s += " [SQL: \(sql.split(whereSeparator: \.isWhitespace).joined(separator: " "))]" }
        return s
    }

    /// A stored value IMStore cannot map to its type (corrupt or foreign data).
    static func badValue(_ column: String, _ value: Int64, sql: String?) -> StoreError {
        StoreError(code: SQLITE_MISMATCH, message: "column \(column): unexpected stored value \(value)", sql: sql)
    }

    /// The store object was closed or handed over (`IMStore.reopen()`).
    static func closed(_ what: String) -> StoreError {
        StoreError(code: SQLITE_MISUSE, message: "\(what) is closed")
    }
}
