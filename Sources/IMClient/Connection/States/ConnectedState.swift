import IMWire

/// CONNACK accepted: a session is up. The heartbeat runs (PINGREQ every 30 s, dead after 6 s
/// without PINGRESP).
struct ConnectedState: Sendable, Hashable {
    var call: ConnectCall
    var userId: String
    var sessionId: String
    /// Server ms time of the CONNACK: messages with an older dataTime are flagged `offline`.
    var sessionTimestamp: Int64

    init(_ awaiting: AwaitingConnackState, session: Frame.Connack.Session?, fallbackUserId: String) {
        call = awaiting.call
        userId = session?.userId ?? fallbackUserId
        sessionId = session?.sessionId ?? ""
        sessionTimestamp = session?.timestamp ?? 0
    }
}
