/// `.openConnection` was issued; waiting for the transport to open. The CONNACK timeout
/// (5 s) is already running: it covers transport setup and CONNACK together.
struct OpeningState: Sendable, Hashable {
    var call: ConnectCall

    /// This attempt is the SDK's automatic retry (CONNECT flag 0x04): after a lost connection, or
    /// a retry of a first connect that never completed (im-semantics §5: "whether A had connected
    /// before does not" decide the kick policy).
    var isReconnect: Bool { call.everConnected || call.attempts > 1 }
}
