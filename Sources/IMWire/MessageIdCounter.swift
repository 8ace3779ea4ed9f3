/// A side's message-id counter (wire-protocol §1.3): 1…65535, wraps to 1 (0 is never used), reset
/// on every reconnect. Replies are matched by (message id, publish-or-query).
public struct MessageIdCounter: Sendable, Hashable {
    /// The last id handed out; 0 before the first.
    public private(set) var last: UInt16

    public init() { last = 0 }

    /// Continues after `last` (e.g. to restore a captured state).
    public init(last: UInt16) { self.last = last }

    /// The next id: 1, 2, …, 65535, 1, …
    public mutating func next() -> UInt16 {
        last = last == UInt16.max ? 1 : last + 1
        return last
    }

    /// Starts again from 1 (a new connection).
    public mutating func reset() { last = 0 }
}
