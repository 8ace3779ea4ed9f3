/// The app has been in the background for `backgroundCloseAfter` (2 min): the connection was
/// closed and no reconnect happens until the app comes to the foreground.
struct SuspendedState: Sendable, Hashable {
    var call: ConnectCall
}
