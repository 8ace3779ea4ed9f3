import IMClient
import IMWire
import SimKernel

/// After the heal, every device converges (connected, nothing in flight, nothing owed) before the
/// deadline.
final class LivenessOracle: Oracle {
    let name = "liveness"
    let hooks: OracleHooks = []
    unowned let suite: OracleSuite

    init(suite: OracleSuite) { self.suite = suite }

    func finalCheck(_ world: World) {
        guard world.convergedAt == nil, world.now >= world.deadlineTime else { return }
        let offline = (0..<world.deviceCount).filter { world.expectedOnline($0) && world.connectionStatus(ofDevice: $0) != .connected }
        var detail = "not converged \(world.deadlineTime - world.healTime) after the heal"
        if !offline.isEmpty {
            detail += "; not connected: " + offline.prefix(5).map { "\(world.deviceId($0)) (\(world.connectionStatus(ofDevice: $0)))" }.joined(separator: ", ")
            if offline.count > 5 { detail += " and \(offline.count - 5) more" }
        }
        if world.bytesInFlight > 0 { detail += "; \(world.bytesInFlight) bytes still in flight" }
        for wait in world.convergenceWaits { detail += "; " + wait }
        suite.report(name, device: offline.first, detail)
    }
}
