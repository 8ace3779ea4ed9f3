import IMSimTestSupport
import CSQLite
import Foundation
import IMWire
import Testing
@testable import IMStore

@Suite struct SchemaTests {
    private func names(_ s: IMStore, _ type: String) throws -> [String] {
        let st = try s.connection.prepare(
            "SELECT name FROM sqlite_master WHERE type = '\(type)' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        var out: [String] = []
        while try st.step() { out.append(st.string(0)) }
        return out
    }

    @Test func migratesAnEmptyFileToTheCurrentVersion() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("empty.db").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))  // a zero-byte file, as a fresh app finds it
        let s = try IMStore.file(path)
        #expect(Schema.currentVersion == 1)
        #expect(try s.schemaVersion() == 1)
        #expect(try names(s, "table") == ["chatroom_kv", "chatrooms", "conversations", "cursors", "messages"])
        #expect(try names(s, "index") == ["messages_by_conversation", "messages_by_conversation_time", "messages_by_uid"])
        s.close()
        // Reopening does not migrate again (a second CREATE TABLE would fail).
        let again = try IMStore.file(path)
        #expect(try again.schemaVersion() == 1)
        #expect(try again.totalMessageCount() == 0)
    }

    @Test func aNewerSchemaIsRefused() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("future.db").path
        do {
            let s = try IMStore.file(path)
            try s.connection.execute("PRAGMA user_version = 99")
        }
        let error = #expect(throws: StoreError.self) { try IMStore.file(path) }
        #expect(error?.message.contains("99") == true)
        #expect(error?.imErrorCode == .databaseError)
    }

    @Test func fileModeUsesWALAndSynchronousNormal() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let s = try IMStore.file(dir.appendingPathComponent("wal.db").path)
        let mode = try s.connection.prepare("PRAGMA journal_mode")
        _ = try mode.step()
        #expect(mode.string(0) == "wal")
        #expect(try scalar(s, "PRAGMA synchronous") == 1)  // NORMAL
        let m = try memoryStore()
        let memMode = try m.connection.prepare("PRAGMA journal_mode")
        _ = try memMode.step()
        #expect(memMode.string(0) == "memory")
    }

    /// "Indexes the queries need, and no more": the hot queries use them, nothing scans the table.
    @Test func queriesUseTheirIndexes() throws {
        let s = try memoryStore()
        func plan(_ sql: String) throws -> String {
            let st = try s.connection.prepare("EXPLAIN QUERY PLAN " + sql)
            var lines: [String] = []
            while try st.step() { lines.append(st.string(3)) }
            return lines.joined(separator: " | ")
        }
        let uid = try plan("SELECT messageId FROM messages WHERE messageUId = 'x' ORDER BY messageId LIMIT 1")
        #expect(uid.contains("messages_by_uid"), "\(uid)")
        let history = try plan("""
            SELECT messageId FROM messages WHERE conversationType = 1 AND targetId = 'a' AND messageId < 9
            ORDER BY messageId DESC LIMIT 20
            """)
        #expect(history.contains("INDEX messages_by_conversation ("), "\(history)")
        #expect(!history.contains("TEMP B-TREE"), "\(history)")
        let range = try plan("""
            SELECT messageId FROM messages WHERE conversationType = 1 AND targetId = 'a' AND sentTime BETWEEN 1 AND 2
            ORDER BY sentTime, messageId
            """)
        #expect(range.contains("messages_by_conversation_time"), "\(range)")
        #expect(!range.contains("TEMP B-TREE"), "\(range)")
        let latest = try plan("""
            SELECT messageId, sentTime FROM messages WHERE conversationType = 1 AND targetId = 'a'
            ORDER BY sentTime DESC, messageId DESC LIMIT 1
            """)
        #expect(latest.contains("messages_by_conversation_time"), "\(latest)")
        #expect(!latest.contains("TEMP B-TREE"), "\(latest)")
    }
}
