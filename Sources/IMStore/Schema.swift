import CSQLite

/// The store's schema and its versioned migrations (`PRAGMA user_version`).
///
/// Migration `n` takes a database from version `n-1` to `n`; each runs in its own transaction
/// together with the `user_version` bump, so a crash leaves the database at a whole version.
/// A database newer than this build is refused rather than guessed at.
public enum Schema {
    /// The version this build creates and understands.
    public static var currentVersion: Int { migrations.count }

    /// Migration scripts; index 0 is version 1.
    static let migrations: [String] = [version1]

    /// Brings `connection` to `currentVersion`; returns the version found (0: a new database).
    @discardableResult
    public static func migrate(_ connection: SQLiteConnection) throws -> Int {
        let found = try connection.userVersion()
        guard found <= currentVersion else {
            throw StoreError(
                code: SQLITE_ERROR,
                message: "database schema version \(found) is newer than this build's \(currentVersion)")
        }
        guard found >= 0 else {
            throw StoreError(code: SQLITE_CORRUPT, message: "negative schema version \(found)")
        }
        var version = found
        while version < currentVersion {
            version += 1
            let target = version
            try connection.transaction {
                try connection.execute(migrations[target - 1])
                try connection.execute("PRAGMA user_version = \(target)")
            }
        }
        return found
    }

    /// Empties every table of the current version, `sqlite_sequence` (AUTOINCREMENT) included:
    /// what `IMStore(recycling:)` runs. A new table must be listed here (`StoreRecyclingTests`
    /// compares this list with `sqlite_master`).
    static let emptyEveryTable: [StaticString] = [
        "DELETE FROM messages", "DELETE FROM conversations", "DELETE FROM cursors", "DELETE FROM chatrooms",
        "DELETE FROM chatroom_kv", "DELETE FROM sqlite_sequence",
    ]

    /// Version 1.
    ///
    /// `messages.messageUId` is unique together with `uidCopy`: the first row stored for a
    /// messageUId has copy 0; further copies (1, 2, …) exist only when de-duplication is off
    /// (`IMStore.Options.dedupByMessageUId`), which the simulator needs to reproduce
    /// duplicate-message bugs. With dedup on, the unique index itself detects the duplicate
    /// (`INSERT … ON CONFLICT DO NOTHING`): one index probe instead of a lookup plus an insert.
    /// The store keeps "some row of a messageUId has copy 0" true across deletes.
    /// `AUTOINCREMENT` keeps messageIds increasing and never reused, also after deleting the
    /// newest rows (chatroom quit, clear history), so a stale messageId never names a new message.
    ///
    /// Indexes, and the queries that need them:
    /// - `messages_by_uid` (unique, partial): dedup on receive, recall by messageUId, duplicate oracle.
    /// - `messages_by_conversation_time` (type, targetId, sentTime[, rowid]): time ranges, clear
    ///   history / unread up to a time, read receipts, latest-message recomputation, snapshots.
    /// - `messages_by_conversation` (type, targetId[, rowid]): history paging by messageId cursor
    ///   and chatroom quit.
    /// Conversations, cursors and chatrooms are keyed by their primary keys only.
    ///
    /// The `sentStatus` CHECK is spelled as `=` comparisons, not `IN (10, …, 70)`: SQLite codes
    /// an IN list of more than two constants in a CHECK as a temporary b-tree built again on every
    /// row written (~14.5k instructions per insert, a third of a raw insert); the comparisons accept
    /// and refuse exactly the same values (both compare with the column's INTEGER affinity;
    /// NULL passes both and is refused by NOT NULL). Same version: only the text differs.
    static let version1 = """
        CREATE TABLE messages (
            messageId INTEGER PRIMARY KEY AUTOINCREMENT,
            messageUId TEXT,
            uidCopy INTEGER NOT NULL DEFAULT 0 CHECK (uidCopy >= 0),
            conversationType INTEGER NOT NULL,
            targetId TEXT NOT NULL CHECK (targetId <> ''),
            senderUserId TEXT NOT NULL,
            direction INTEGER NOT NULL CHECK (direction IN (1, 2)),
            objectName TEXT NOT NULL,
            content TEXT NOT NULL,
            extra TEXT,
            sentTime INTEGER NOT NULL,
            receivedTime INTEGER NOT NULL,
            sentStatus INTEGER NOT NULL CHECK (sentStatus = 10 OR sentStatus = 20 OR sentStatus = 30 OR sentStatus = 40
                OR sentStatus = 50 OR sentStatus = 60 OR sentStatus = 70),
            receivedStatus INTEGER NOT NULL DEFAULT 0,
            flags INTEGER NOT NULL DEFAULT 0,
            clientUniqueId INTEGER
        );
        CREATE UNIQUE INDEX messages_by_uid ON messages (messageUId, uidCopy) WHERE messageUId IS NOT NULL;
        CREATE INDEX messages_by_conversation_time ON messages (conversationType, targetId, sentTime);
        CREATE INDEX messages_by_conversation ON messages (conversationType, targetId);

        CREATE TABLE conversations (
            conversationType INTEGER NOT NULL,
            targetId TEXT NOT NULL CHECK (targetId <> ''),
            latestMessageId INTEGER,
            latestTime INTEGER NOT NULL DEFAULT 0,
            unreadCount INTEGER NOT NULL DEFAULT 0 CHECK (unreadCount >= 0),
            hasUnreadMentioned INTEGER NOT NULL DEFAULT 0,
            isTop INTEGER NOT NULL DEFAULT 0,
            draft TEXT,
            notificationStatus INTEGER NOT NULL DEFAULT 1 CHECK (notificationStatus IN (0, 1)),
            readReceiptTime INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (conversationType, targetId)
        ) WITHOUT ROWID;

        CREATE TABLE cursors (
            name TEXT NOT NULL PRIMARY KEY,
            value INTEGER NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE chatrooms (
            roomId TEXT NOT NULL PRIMARY KEY CHECK (roomId <> ''),
            joinedTime INTEGER NOT NULL,
            kvSynced INTEGER NOT NULL DEFAULT 0,
            kvSyncTime INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;

        CREATE TABLE chatroom_kv (
            roomId TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            userId TEXT NOT NULL,
            autoDelete INTEGER NOT NULL DEFAULT 0,
            updateTime INTEGER NOT NULL,
            PRIMARY KEY (roomId, key)
        ) WITHOUT ROWID;
        """
}
