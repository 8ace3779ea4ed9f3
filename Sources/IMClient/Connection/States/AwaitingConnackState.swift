/// CONNECT was written; waiting for CONNACK (the 5 s timer started at open keeps running).
struct AwaitingConnackState: Sendable, Hashable {
    var call: ConnectCall

    init(_ opening: OpeningState) {
        call = opening.call
    }
}
