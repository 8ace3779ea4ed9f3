/// No `connect` call yet in this process: nothing to do until the app connects.
struct IdleState: Sendable, Hashable {}
