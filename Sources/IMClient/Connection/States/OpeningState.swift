/// `.openConnection` was issued; waiting for the transport to open. The CONNACK timeout
/// (5 s) is already running: it covers transport setup and CONNACK together.
struct OpeningState: Sendable, Hashable {
    var call: ConnectCall

    /// This attempt is an automatic reconnect (CONNECT flag 0x04).
    var isReconnect: Bool { call.everConnected }
}
