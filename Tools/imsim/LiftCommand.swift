import ArgumentParser
import Foundation
import IMSim

/// `imsim replay CAPTURE --lift`: placeholder until the lifter lands.
struct LiftCommandRunner {
    var capture: String
    var out: String?
    var neighbours: Int
    var bugs: ClientBugs?
    var json: Bool
    var maxLineLength: Int
    func run() throws { throw ValidationError("--lift is not implemented yet") }
}
