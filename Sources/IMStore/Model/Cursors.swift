/// The sync cursors the client keeps (im-semantics §4, §6). Values are server ms timestamps.
/// The client core decides when a cursor moves; the store only keeps it.
public enum SyncCursor: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Received messages (`pullMsg` syncTime).
    case inbox
    /// One's own messages sent from other devices.
    case sendbox
    /// A chatroom's pull cursor.
    case chatroom(String)

    /// The row name in `cursors`.
    public var name: String {
        switch self {
        case .inbox: "inbox"
        case .sendbox: "sendbox"
        case .chatroom(let roomId): "chatroom:\(roomId)"
        }
    }

    public var description: String { name }
}
