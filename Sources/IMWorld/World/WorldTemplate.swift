import IMStore

/// What every world of one scenario shares whatever the seed, built once and handed to each
/// `World` a sweep worker runs: the freshly migrated empty database every device's store starts
/// as a copy of. A seed's run is the same with or without it (`WorldTemplateTests`); it only
/// saves the per-seed set-up.
public final class WorldTemplate {
    public let scenario: Scenario
    /// Read-only after `init` (SQLite's backup API copies from it).
    let emptyStore: IMStore

    public init(scenario: Scenario) throws(ScenarioError) {
        self.scenario = scenario
        do {
            emptyStore = try IMStore(location: .memory)
        } catch {
            throw ScenarioError(path: "$", message: "cannot open the template store: \(error)")
        }
    }

    deinit { emptyStore.close() }
}
