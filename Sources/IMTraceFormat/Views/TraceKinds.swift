/// Names of record kinds, as shown by `imsim trace show` and matched by `--kind`.
///
/// Names are `category.name` (`ev.deliver.up`, `cb.received`, `srv.fannedOut`); a `--kind`
/// pattern matches a name exactly or any name it is a dot-prefix of (`cb`, `srv.out`, `ev.deliver`).
public enum TraceKinds {
    public static let categories: [(prefix: String, what: String)] = [
        ("ev", "kernel events"), ("world", "world notes (links, faults, lifecycle)"), ("api", "client API calls"),
        ("in", "other client inputs"), ("out", "client effects"), ("cb", "app callbacks"), ("client", "client notes"),
        ("srv.in", "server inputs"), ("srv.api", "server API calls"), ("srv.out", "server effects"),
        ("srv", "server inputs, effects and events"), ("meta", "checkpoints, devices, violations, ledger, run end"),
    ]

    static let table: [UInt16: String] = {
        var t: [UInt16: String] = [:]
        let kernel = ["appStart", "script", "deliver.up", "deliver.down", "connectArrive", "connectComplete", "close.up",
                      "close.down", "clientTimer", "serverTimer", "workload", "faultStart", "faultEnd", "serverRestart",
                      "heal", "convergenceCheck", "end", "network.up", "network.down"]
        for (i, n) in kernel.enumerated() { t[UInt16(1 + i)] = "ev." + n }
        t[32] = "ev.workload.room"
        for (k, n) in [(20, "opened"), (21, "bytes"), (22, "closed"), (23, "timer"), (24, "lifecycle"), (25, "network"), (31, "clock")] {
            t[UInt16(k)] = "in." + n
        }
        for (k, n) in [(26, "open"), (27, "send"), (28, "close"), (29, "setTimer"), (30, "cancelTimer")] { t[UInt16(k)] = "out." + n }
        let callbacks = ["connectionStatus", "dbOpened", "connected", "connectError", "messageInserted", "sendResult", "received",
                         "recalled", "readReceipt", "syncReadStatus", "chatroomJoined", "chatroomJoinFailed", "chatroomQuit",
                         "chatroomKicked", "chatroomDestroyed", "chatroomKVSynced", "chatroomKVUpdated", "chatroomKVRemoved",
                         "chatroomKVResult", "chatroomKV", "history", "remoteHistory", "recallResult"]
        for (i, n) in callbacks.enumerated() { t[UInt16(40 + i)] = "cb." + n }
        let notes = ["state", "stored", "skipped", "cursor", "reconnectScheduled", "requestTimedOut", "chatroomState", "changed",
                     "storeError", "ignored", "syncState", "incompleteBody"]
        for (i, n) in notes.enumerated() { t[UInt16(64 + i)] = "client." + n }
        for (k, n) in [(80, "in.accepted"), (81, "in.bytes"), (82, "in.closed"), (83, "in.timer"),
                       (84, "out.send"), (85, "out.close"), (86, "out.setTimer"), (87, "out.cancelTimer")] {
            t[UInt16(k)] = "srv." + n
        }
        let events = ["sessionOpened", "connectRejected", "sessionClosed", "kicked", "accepted", "rejected", "duplicateAbsorbed",
                      "fannedOut", "pulled", "offlineStored", "pushed", "dropped", "chatroomJoined", "chatroomLeft",
                      "chatroomDestroyed", "kvChanged", "recalled", "restarted", "protocolError", "reconnectRefused", "queryRejected",
                      "chatroomCreated", "incompleteBody"]
        for (i, n) in events.enumerated() { t[UInt16(96 + i)] = "srv." + n }
        let api = ["connect", "disconnect", "logout", "send", "resend", "recall", "sendReadReceipt", "clearUnread", "joinChatroom",
                   "joinExistChatroom", "quitChatroom", "setChatroomKV", "removeChatroomKV", "getChatroomKV", "getHistory",
                   "getRemoteHistory", "getRemoteHistoryAfter"]
        for (i, n) in api.enumerated() { t[UInt16(128 + i)] = "api." + n }
        let srvAPI = ["createChatroom", "destroyChatroom", "keepAliveChatroom", "banChatroomUser", "muteChatroomUser",
                      "setChatroomUserWhitelist", "muteGroupUser", "addGroupMembers", "removeGroupMembers", "blockUser",
                      "sendSystemMessage", "broadcast", "setChatroomMessageWhitelist"]
        for (i, n) in srvAPI.enumerated() { t[UInt16(160 + i)] = "srv.api." + n }
        let world = ["connectionOpened", "connectionRefused", "connectTimedOut", "bytesLost", "fault", "lifecycle", "network",
                     "clockStep", "serverDown", "serverUp", "phase", "script"]
        for (i, n) in world.enumerated() { t[UInt16(176 + i)] = "world." + n }
        for (k, n) in [(192, "checkpoint"), (193, "device"), (194, "violation"), (195, "ledger"), (196, "runEnd")] {
            t[UInt16(k)] = "meta." + n
        }
        return t
    }()

    /// The name of a kind (`kind.N` for kinds this build does not know).
    public static func name(_ kind: UInt16) -> String { table[kind] ?? "kind.\(kind)" }

    /// Every known kind, sorted by number.
    public static var all: [(kind: UInt16, name: String)] { table.keys.sorted().map { ($0, table[$0]!) } }

    /// Whether `pattern` selects `name`: equal, or a prefix ending at a dot.
    public static func matches(_ pattern: String, _ name: String) -> Bool {
        name == pattern || (name.hasPrefix(pattern) && name.dropFirst(pattern.count).first == ".")
    }

    /// Whether `pattern` selects at least one known kind.
    public static func isKnownPattern(_ pattern: String) -> Bool {
        table.values.contains { matches(pattern, $0) } || pattern.hasPrefix("kind.")
    }
}
