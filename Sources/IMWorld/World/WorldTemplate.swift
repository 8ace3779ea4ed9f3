import IMStore

/// What every world of one scenario shares whatever the seed, built once and handed to each
/// `World` a sweep worker runs: the freshly migrated empty database every device's store starts
/// as a copy of, and the in-memory connections of the last seed's device stores, emptied and
/// handed to the next seed's devices with their prepared statements (`recycleStores(of:)`). A
/// seed's run is the same with or without it (`WorldTemplateTests`); it only saves the per-seed
/// set-up.
public final class WorldTemplate {
    public let scenario: Scenario
    /// Read-only after `init` (SQLite's backup API copies from it).
    let emptyStore: IMStore
    /// Connections handed back by finished worlds, in device order (device `d` of the next world
    /// gets the one device `d` had: same statements prepared, so instruction counts repeat).
    private var spareConnections: [SQLiteConnection] = []
    private var nextSpare = 0

    public init(scenario: Scenario) throws(ScenarioError) {
        self.scenario = scenario
        do {
            emptyStore = try IMStore(location: .memory)
        } catch {
            throw ScenarioError(path: "$", message: "cannot open the template store: \(error)")
        }
    }

    deinit { emptyStore.close() }

    /// A store emptied to the template's contents on a recycled connection, or nil (none left, or
    /// it could not be emptied: the caller copies the template).
    func recycledStore(options: IMStore.Options) -> IMStore? {
        while nextSpare < spareConnections.count {
            let connection = spareConnections[nextSpare]
            nextSpare += 1
            if let store = try? IMStore(recycling: connection, options: options) { return store }
            connection.close()
        }
        return nil
    }

    /// Takes back the in-memory device stores of a finished world for the next one: each is
    /// retired (the world's calls on it throw from now on). Call when nothing reads the world's
    /// stores any more (after its result, ledger and checks). Device stores on a simulated disk
    /// are left alone (each seed's disk is its own).
    public func recycleStores(of world: World) {
        for unused in spareConnections[nextSpare...] { unused.close() }
        spareConnections.removeAll(keepingCapacity: true)
        nextSpare = 0
        for device in world.devices {
            if let connection = device.store.retireForReuse() { spareConnections.append(connection) }
        }
    }
}
