/// No connection and no reconnection: the app disconnected or logged out, or a fatal error
/// (token, ban, kick, time limit) ended the connect call. Only a new `connect` leaves it.
struct StoppedState: Sendable, Hashable {
    enum Reason: Sendable, Hashable {
        case disconnected
        case loggedOut
        case failed(code: Int32)
    }

    var reason: Reason
}
