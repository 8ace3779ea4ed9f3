import Foundation
import IMSim

/// `imsim run --log DEVICE`: one readable line per input, effect and server event that concerns
/// a device (or `server`), as the run goes.
final class RunLog: WorldObserver {
    let target: String
    init(target: String) { self.target = target }

    private func line(_ world: World, _ who: String, _ text: String) {
        print("\(world.now.description.padding(toLength: 11, withPad: " ", startingAt: 0)) \(who.padding(toLength: 16, withPad: " ", startingAt: 0)) \(text)")
    }

    func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {
        let id = world.deviceId(device)
        guard id == target else { return }
        switch input {
        case .transport(.bytes(let b)): line(world, id, "← \(b.count) bytes")
        default: line(world, id, "← \(input)")
        }
    }

    func world(_ world: World, device: Int, applied effects: AppliedClientEffects) {
        let id = world.deviceId(device)
        guard id == target else { return }
        for e in effects {
            switch e {
            case .send(let b, let frames): line(world, id, "→ \(b.count) bytes: \(frames.map(\.description).joined(separator: ", "))")
            case .callback(.received(let m, let left, let offline, let pkg)):
                line(world, id, "  onReceived \(m.messageUId ?? "-") \(m.conversation) \(m.objectName) sentTime \(m.sentTime) left=\(left) offline=\(offline) hasPackage=\(pkg)")
            default: line(world, id, "  \(e)")
            }
        }
    }

    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        for case .event(let e) in serverEffects {
            let text = "\(e)"
            if target == "server" || text.contains("\"\(target)\"") { line(world, "server", text) }
        }
    }

    func world(_ world: World, note: WorldNote) {
        let text = "\(note)"
        if case .lifecycle(let d, _) = note, world.deviceId(d) != target { return }
        if target == "server" || text.contains(target) { line(world, "world", text) }
    }
}
