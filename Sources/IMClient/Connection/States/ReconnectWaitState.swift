import SimKernel

/// The last attempt failed (or the connection dropped); the `.reconnect` timer is armed with the
/// schedule's delay.
struct ReconnectWaitState: Sendable, Hashable {
    var call: ConnectCall
    var delay: SimDuration
}
