import IMStore
import IMWire

/// Workloads for `imsim bench store`. Timing lives in the CLI; these only do the work, so the
/// three variants run the same messages through the same schema.
public enum StoreBenchmark {
    /// `count` received private-chat messages spread round-robin over `conversations` peers, with
    /// distinct RongCloud-style messageUIds, increasing server times and ~50-byte JSON bodies.
    public static func messages(count: Int, conversations: Int) -> [ReceivedMessage] {
        precondition(conversations > 0)
        var out: [ReceivedMessage] = []
        out.reserveCapacity(count)
        for i in 0..<count {
            let peer = "user\(i % conversations)"
            let sentTime = 1_700_000_000_000 + Int64(i)
            out.append(ReceivedMessage(
                conversation: ConversationKey(.privateChat, peer),
                messageUId: messageUId(UInt64(i)),
                senderUserId: peer,
                objectName: "RC:TxtMsg",
                content: #"{"content":"message \#(i) from \#(peer)","extra":""}"#,
                sentTime: sentTime,
                receivedTime: sentTime + 50))
        }
        return out
    }

    /// A 19-character messageUId like `BFJ4-M5O3-K0G6-9LH5`, unique per `n` (bijective mix).
    public static func messageUId(_ n: UInt64) -> String {
        var x = n &+ 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        x ^= x >> 31
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUV".utf8)
        var chars: [UInt8] = []
        chars.reserveCapacity(19)
        for i in 0..<16 {
            if i > 0 && i % 4 == 0 { chars.append(UInt8(ascii: "-")) }
            // Nibble i of x picks the character (odd positions from the alphabet's upper half).
            chars.append(alphabet[Int((x >> (UInt64(i) * 4)) & 15) + (i & 1) * 16])
        }
        return String(decoding: chars, as: UTF8.self)
    }

    /// The raw floor: one prepared INSERT into the same `messages` table, all rows in one
    /// transaction, no dedup lookup and no conversation update.
    public static func rawFloor(_ store: IMStore, _ messages: [ReceivedMessage]) throws {
        let c = store.connection
        let insert = try c.prepare("""
            INSERT INTO messages (messageUId, conversationType, targetId, senderUserId, direction, objectName,
                content, extra, sentTime, receivedTime, sentStatus, receivedStatus, flags, clientUniqueId, uidCopy)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, 0)
            """)
        try c.transaction {
            for m in messages {
                try insert.bind(m.messageUId, at: 1)
                try insert.bind(m.conversation.type.rawValue, at: 2)
                try insert.bind(m.conversation.targetId, at: 3)
                try insert.bind(m.senderUserId, at: 4)
                try insert.bind(m.direction.rawValue, at: 5)
                try insert.bind(m.objectName, at: 6)
                try insert.bind(m.content, at: 7)
                try insert.bind(m.extra, at: 8)
                try insert.bind(m.sentTime, at: 9)
                try insert.bind(m.receivedTime, at: 10)
                try insert.bind(m.sentStatus.rawValue, at: 11)
                try insert.bind(m.receivedStatus.rawValue, at: 12)
                try insert.bind(m.flags.rawValue, at: 13)
                try insert.bind(m.clientUniqueId, at: 14)
                _ = try insert.step()
                insert.reset()
            }
        }
    }

    /// As the client does it: `storeReceived` per message — one transaction each with the dedup
    /// lookup, the insert and the conversation update. Returns how many were new.
    public static func perMessage(_ store: IMStore, _ messages: [ReceivedMessage]) throws -> Int {
        var new = 0
        for m in messages where try store.storeReceived(m).isNew { new += 1 }
        return new
    }

    /// `storeReceived(batch)` with `batchSize` messages per transaction (a pull response).
    public static func batched(_ store: IMStore, _ messages: [ReceivedMessage], batchSize: Int) throws -> Int {
        precondition(batchSize > 0)
        var new = 0
        var start = 0
        while start < messages.count {
            let end = min(start + batchSize, messages.count)
            for r in try store.storeReceived(Array(messages[start..<end])) where r.isNew { new += 1 }
            start = end
        }
        return new
    }
}
