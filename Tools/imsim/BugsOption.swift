import ArgumentParser
import IMSim

/// `--bugs B1,B6` of `imsim run` / `imsim sweep`: the bug switches to turn on instead of the
/// scenario's own (`none` turns every switch off).
enum BugsOption {
    static func apply(_ text: String, to scenario: Scenario) throws -> Scenario {
        do {
            return scenario.withBugs(try Scenario.parseBugsArgument(text))
        } catch {
            throw ValidationError("--bugs: \(error)")
        }
    }

    /// What the repro line appends, so it reproduces the same switches.
    static func reproSuffix(_ text: String?) -> String {
        guard let text else { return "" }
        let list = (try? Scenario.parseBugsArgument(text)) ?? []
        return " --bugs " + (list.isEmpty ? "none" : list.map(\.rawValue).joined(separator: ","))
    }
}
