/// The device has no network: no attempts until `networkChanged(available: true)`.
struct NetworkWaitState: Sendable, Hashable {
    var call: ConnectCall
}
