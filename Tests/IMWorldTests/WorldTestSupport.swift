import Foundation
import IMSimTestSupport
import IMClient
import IMServer
import IMWire
import SimKernel
@testable import IMWorld

/// A tiny scenario builder for world tests.
func scenario(_ json: String) throws -> Scenario {
    try Scenario.load(json: Data(json.utf8))
}

/// Records what the world fed to and got from the cores, with times.
final class Tap: WorldObserver {
    struct ClientIn { var time: SimTime; var device: Int; var input: ClientInput; var localMs: Int64 }
    struct ClientOut { var time: SimTime; var device: Int; var effect: ClientEffect }
    struct ServerIn { var time: SimTime; var input: ServerInput; var serverMs: Int64 }
    struct ServerOut { var time: SimTime; var effect: ServerEffect }
    var clientIn: [ClientIn] = []
    var clientOut: [ClientOut] = []
    var serverIn: [ServerIn] = []
    var serverOut: [ServerOut] = []
    var notes: [(SimTime, WorldNote)] = []

    func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {
        clientIn.append(ClientIn(time: world.now, device: device, input: input, localMs: localMs))
    }
    func world(_ world: World, device: Int, applied effects: AppliedClientEffects) {
        for e in effects { clientOut.append(ClientOut(time: world.now, device: device, effect: e)) }
    }
    func world(_ world: World, serverInput: ServerInput, serverMs: Int64) {
        serverIn.append(ServerIn(time: world.now, input: serverInput, serverMs: serverMs))
    }
    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        for e in serverEffects { serverOut.append(ServerOut(time: world.now, effect: e)) }
    }
    func world(_ world: World, note: WorldNote) { notes.append((world.now, note)) }

    var accepted: [AcceptedMessage] {
        serverOut.compactMap { if case .event(.messageAccepted(let m)) = $0.effect { m } else { nil } }
    }
}

/// Runs a scenario with the oracles on and a tap; returns both.
func runWithTap(_ s: Scenario, seed: UInt64 = 1, until: SimTime? = nil) throws -> (ScenarioRun, Tap) {
    let tap = Tap()
    let run = try ScenarioRun(scenario: s, seed: seed, oracles: OracleOptions(scenarioArgument: s.name), observers: [tap])
    run.run(until: until)
    return (run, tap)
}

