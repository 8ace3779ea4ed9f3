import IMClient
import IMServer
import IMWorldValues

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

    // The numbers are the stable codes declared next to each core type; only the names live here.
    static let table: [UInt16: String] = {
        var t: [UInt16: String] = [:]
        func name<K: RawRepresentable & CaseIterable>(_: K.Type, _ prefix: String, _ names: [String]) where K.RawValue == UInt16 {
            precondition(K.allCases.count == names.count, "a name for each \(K.self)")
            for (k, n) in zip(K.allCases, names) { t[k.rawValue] = prefix + n }
        }
        name(WorldEventKind.self, "ev.", ["appStart", "script", "deliver.up", "deliver.down", "connectArrive", "connectComplete",
                                         "close.up", "close.down", "clientTimer", "serverTimer", "workload", "faultStart", "faultEnd",
                                         "serverRestart", "heal", "convergenceCheck", "end", "network.up", "network.down",
                                         "workload.room"])
        name(ClientInput.TraceKind.self, "", ["in.opened", "in.bytes", "in.closed", "in.timer", "in.lifecycle", "in.network", "in.clock"]
             + ["connect", "disconnect", "logout", "send", "resend", "recall", "sendReadReceipt", "clearUnread", "joinChatroom",
                "joinExistChatroom", "quitChatroom", "setChatroomKV", "removeChatroomKV", "getChatroomKV", "getHistory",
                "getRemoteHistory", "getRemoteHistoryAfter"].map { "api." + $0 })
        name(ClientEffect.TraceKind.self, "out.", ["open", "send", "close", "setTimer", "cancelTimer"])
        name(AppCallback.TraceKind.self, "cb.", ["connectionStatus", "dbOpened", "connected", "connectError", "messageInserted",
                                                "sendResult", "received", "recalled", "readReceipt", "syncReadStatus", "chatroomJoined",
                                                "chatroomJoinFailed", "chatroomQuit", "chatroomKicked", "chatroomDestroyed",
                                                "chatroomKVSynced", "chatroomKVUpdated", "chatroomKVRemoved", "chatroomKVResult",
                                                "chatroomKV", "history", "remoteHistory", "recallResult"])
        name(ClientNote.TraceKind.self, "client.", ["state", "stored", "skipped", "cursor", "reconnectScheduled", "requestTimedOut",
                                                   "chatroomState", "changed", "storeError", "ignored", "syncState", "incompleteBody"])
        name(ServerInput.TraceKind.self, "srv.", ["in.accepted", "in.bytes", "in.closed", "in.timer"]
             + ["createChatroom", "destroyChatroom", "keepAliveChatroom", "banChatroomUser", "muteChatroomUser",
                "setChatroomUserWhitelist", "muteGroupUser", "addGroupMembers", "removeGroupMembers", "blockUser",
                "sendSystemMessage", "broadcast", "setChatroomMessageWhitelist"].map { "api." + $0 })
        name(ServerEffect.TraceKind.self, "srv.out.", ["send", "close", "setTimer", "cancelTimer"])
        name(ServerEvent.TraceKind.self, "srv.", ["sessionOpened", "connectRejected", "sessionClosed", "kicked", "accepted", "rejected",
                                                 "duplicateAbsorbed", "fannedOut", "pulled", "offlineStored", "pushed", "dropped",
                                                 "chatroomJoined", "chatroomLeft", "chatroomDestroyed", "kvChanged", "recalled",
                                                 "restarted", "protocolError", "reconnectRefused", "queryRejected", "chatroomCreated",
                                                 "incompleteBody"])
        name(WorldNoteKind.self, "world.", ["connectionOpened", "connectionRefused", "connectTimedOut", "bytesLost", "fault",
                                           "lifecycle", "network", "clockStep", "serverDown", "serverUp", "phase", "script"])
        // Meta records are the trace's own (no core type): their kinds live in `MetaRecord`.
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
