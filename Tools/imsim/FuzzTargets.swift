import Benchmarks
import ArgumentParser
import IMSim

/// Every `imsim fuzz` target besides `wire`, one line each; the target itself (a `FuzzTarget`,
/// Sources/IMWire/FuzzTarget.swift) lives in its own file in the parser's module.
enum FuzzTargets {
    static let all: [ParsableCommand.Type] = [
        FuzzTargetCommand<ScenarioFuzz>.self,
        FuzzTargetCommand<CaptureFuzz>.self,
        FuzzTargetCommand<TraceFuzz>.self,
        FuzzTargetCommand<ClientScriptFuzz>.self,
        FuzzPcap.self,  // IMImport's readers (FuzzImport.swift)
        FuzzHAR.self,
    ]
}
