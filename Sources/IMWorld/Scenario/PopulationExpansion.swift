import SimKernel

/// What a scenario's `population` expands to with a given seed, written out as explicit
/// entities: a scenario with these users, groups and chatrooms in place of `population` runs
/// identically (every stream is keyed by entity id). The shrinker uses it so it can remove
/// generated users one by one.
public struct ExpandedPopulation: Sendable {
    public struct User: Sendable { public var id: String; public var devices: [(id: String, platform: String)] }
    public var users: [User] = []
    public var groups: [(id: String, members: [String])] = []
    public var chatrooms: [(id: String, members: [String], joinCount: Int)] = []
}

extension Scenario {
    /// The generated part of the population (nil without `population`).
    public func expandedPopulation(seed: UInt64) throws(ScenarioError) -> ExpandedPopulation? {
        guard population != nil else { return nil }
        var b = PopulationBuilder(scenario: self, streams: RandomStreams(seed: seed))
        try b.build()
        var out = ExpandedPopulation()
        out.users = b.users.dropFirst(users.count).map { u in
            ExpandedPopulation.User(id: u.id, devices: u.devices.map { ($0.id, $0.platform.rawValue) })
        }
        let explicit = Set(groups.map(\.id))
        out.groups = b.groups.keys.sorted().filter { !explicit.contains($0) }.map { ($0, b.groups[$0]!) }
        out.chatrooms = b.rooms.dropFirst(chatrooms.count).map { ($0.id, $0.members, Int($0.joinCount)) }
        return out
    }
}
