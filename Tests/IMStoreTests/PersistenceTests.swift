import CSQLite
import Foundation
import IMSimTestSupport
import IMWire
import Testing
@testable import IMStore

/// Everything a store shows, for before/after comparisons.
private func dump(_ s: IMStore) throws -> String {
    var lines: [String] = []
    for key in [alice, bob, room] {
        lines += try s.snapshot(of: key).map { "\($0)" }
        lines.append("\(String(describing: try s.conversation(key)))")
    }
    lines.append("cursors \(try s.cursor(.inbox)) \(try s.cursor(.sendbox)) \(try s.cursor(.chatroom("room1")))")
    lines.append("rooms \(try s.joinedChatrooms()) kv \(try s.chatroomKV("room1"))")
    return lines.joined(separator: "\n")
}

private func populate(_ s: IMStore) throws {
    _ = try store(s, incoming("A", at: 100))
    _ = try store(s, incoming("B", in: bob, at: 200, mentioned: true))
    let id = try s.insertOutgoing(outgoing("mine", at: 250)).messageId
    _ = try s.markSent(messageId: id, messageUId: "M", sentTime: 260)
    try s.joinChatroom("room1", at: 300)
    _ = try store(s, incoming("R", in: room, at: 310))
    try s.upsertChatroomKV("room1", [ChatroomKVEntry(key: "k", value: "v", userId: "u", updateTime: 1)])
    try s.advanceCursor(.inbox, to: 200)
    try s.advanceCursor(.chatroom("room1"), to: 310)
    try s.setTop(bob, true)
}

@Suite struct AppKillTests {
    /// The simulated app kill on the simulator's default store: the world keeps the database,
    /// the new core gets a store object that shares nothing else with the old one.
    @Test func memoryStoreSurvivesReopenAndTheOldObjectIsRetired() throws {
        let old = try memoryStore(dedup: false)
        try populate(old)
        let before = try dump(old)
        #expect(old.connection.cachedStatementCount > 0)
        let fresh = try old.reopen()
        #expect(fresh.connection.cachedStatementCount == 0, "no prepared statement survives the restart")
        #expect(try dump(fresh) == before)
        #expect(fresh.options.dedupByMessageUId == false, "options travel with the database")
        #expect(!old.isOpen)
        let error = #expect(throws: StoreError.self) { try old.storeReceived(incoming("X", at: 1)) }
        #expect(error?.code == SQLITE_MISUSE)
        // The new store keeps working, ids keep increasing.
        let next = try store(fresh, incoming("C", at: 400))
        #expect(next > (try fresh.snapshot(of: room).last!.messageId))
    }

    @Test func reopenRollsBackAnOpenTransaction() throws {
        let old = try memoryStore()
        _ = try store(old, incoming("A", at: 1))
        try old.connection.execute("BEGIN IMMEDIATE")
        _ = try store(old, incoming("B", at: 2))  // nested as a savepoint, never committed
        let fresh = try old.reopen()
        #expect(try fresh.allMessageUIds() == ["A"])
        #expect(!fresh.connection.isInTransaction)
    }

    @Test func fileStoreSurvivesReopen() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("device.db").path
        let s = try IMStore.file(path)
        try populate(s)
        let before = try dump(s)
        let fresh = try s.reopen()
        #expect(!s.isOpen)
        #expect(try dump(fresh) == before)
        fresh.close()
        // A third, independent open sees the same.
        #expect(try dump(IMStore.file(path)) == before)
    }

    @Test func serializedImageRoundTrips() throws {
        let s = try memoryStore()
        try populate(s)
        let image = try s.serializedImage()
        #expect(image.count >= 4096)
        #expect(Array(image.prefix(15)) == Array("SQLite format 3".utf8))
        let copy = try IMStore(image: image)
        #expect(try dump(copy) == dump(s))
        // The copy is independent.
        _ = try store(copy, incoming("ONLY-IN-COPY", at: 1))
        #expect(try s.countRows(withUId: "ONLY-IN-COPY") == 0)
        // Same operations, same bytes: the image is deterministic.
        let again = try memoryStore()
        try populate(again)
        #expect(try again.serializedImage() == image)
    }

    @Test func aGarbageImageIsAStoreError() throws {
        let error = #expect(throws: StoreError.self) { try IMStore(image: Array(repeating: 0xAB, count: 8192)) }
        #expect(error?.primaryCode == SQLITE_NOTADB)
        #expect(error?.imErrorCode == .databaseError)
    }

    @Test func serializingInsideATransactionIsRefused() throws {
        let s = try memoryStore()
        try s.connection.execute("BEGIN")
        #expect(throws: StoreError.self) { try s.serializedImage() }
        try s.connection.execute("ROLLBACK")
    }
}

/// Reopening a file after a crash mid-transaction: a child process (`imsim store crash-writer`)
/// writes inside an open transaction whose pages spill into the WAL, and is killed with SIGKILL.
@Suite(.serialized) struct CrashRecoveryTests {
    struct Child {
        var committed: Int
        var walBefore: Int
        var walAtKill: Int
    }

    /// Runs the crash writer until it reports `ready`, then SIGKILLs it.
    private func crash(db: String, committed: Int, pending: Int, commit: Bool) throws -> Child {
        let p = Process()
        p.executableURL = try ImsimBinary.locate()
        p.arguments = ["store", "crash-writer", "--db", db, "--committed", "\(committed)", "--pending", "\(pending)"]
            + (commit ? ["--commit"] : [])
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // EOF: the child died on its own
            line.append(chunk)
        }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal, "the child must die by SIGKILL, not exit")
        #expect(p.terminationStatus == SIGKILL)
        let fields = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard fields.count == 4, fields[0] == "ready", let c = Int(fields[1]), let b = Int(fields[2]), let a = Int(fields[3]) else {
            throw StoreError(code: SQLITE_ERROR, message: "crash-writer said: \(String(decoding: line, as: UTF8.self))")
        }
        return Child(committed: c, walBefore: b, walAtKill: a)
    }

    private func check(_ path: String, expectRows rows: Int) throws {
        let s = try IMStore.file(path)
        let integrity = try s.connection.prepare("PRAGMA integrity_check")
        _ = try integrity.step()
        #expect(integrity.string(0) == "ok")
        #expect(try s.totalMessageCount() == rows)
        // The conversations agree with the rows (the conversation update was in the same transaction).
        let unread = try s.conversationList().map(\.unreadCount).reduce(0, +)
        #expect(unread == rows)
        #expect(try s.duplicateMessageUIds() == [])
    }

    @Test func uncommittedTransactionVanishes() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("crash.db").path
        let child = try crash(db: path, committed: 10, pending: 2_000, commit: false)
        #expect(child.committed == 10)
        #expect(child.walAtKill > child.walBefore, "uncommitted pages must have reached the WAL for the test to mean anything")
        try check(path, expectRows: 10)
    }

    @Test func committedTransactionSurvives() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("crash.db").path
        let child = try crash(db: path, committed: 10, pending: 2_000, commit: true)
        #expect(child.committed == 2_010)
        try check(path, expectRows: 2_010)
    }
}

