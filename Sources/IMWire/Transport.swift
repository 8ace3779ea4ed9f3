/// Vocabulary shared by the cores and whatever drives them (the simulated world, or a real
/// SwiftNIO runtime): connection identities and why a connection closed.

/// Identifies one transport connection (one TCP stream / WebSocket) for its whole life.
/// Assigned by the driver, never reused within a run.
public struct ConnectionID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let raw: UInt64
    public init(_ raw: UInt64) { self.raw = raw }
    public static func < (a: Self, b: Self) -> Bool { a.raw < b.raw }
    public var description: String { "c\(raw)" }
    /// The server's connection table is looked up on every frame (`WordHash`).
    @inlinable public func _rawHashValue(seed: Int) -> Int { WordHash.mix(raw, seed: seed) }
}

/// Why a transport connection ended, as the side that learns it sees it.
public enum TransportCloseReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The peer closed cleanly (FIN).
    case closedByPeer
    /// Connection reset (RST), e.g. the server process died or a middlebox reset it.
    case reset
    /// The connection attempt was refused (nothing listening / server down).
    case refused
    /// The connection attempt or the stream timed out at the transport level.
    case timeout
    /// The local network interface went away.
    case networkDown
    /// This side closed it deliberately (echo of a local close).
    case localClose
}
