import IMWire

extension Scenario {
    /// Every bug switch the scenario turns on (client and server), sorted.
    public var bugs: [BugSwitch] { (client.bugs + server.bugs).sorted() }

    /// The scenario with exactly these bug switches on (`imsim run/sweep --bugs B1,B13`): each
    /// goes to the core that carries it; the scenario's own switches are replaced.
    public func withBugs(_ list: [BugSwitch]) -> Scenario {
        var s = self
        s.client.bugs = list.filter { $0.side == .client }.sorted()
        s.server.bugs = list.filter { $0.side == .server }.sorted()
        return s
    }

    /// Parses the `--bugs` argument: `B1,B6`, `b1 b6`, or `none` (every switch off).
    public static func parseBugsArgument(_ text: String) throws(BugListError) -> [BugSwitch] {
        let t = String(text.filter { !$0.isWhitespace }).lowercased()
        if t == "none" || t == "off" || t.isEmpty { return [] }
        return try BugSwitch.parseList(text)
    }
}
