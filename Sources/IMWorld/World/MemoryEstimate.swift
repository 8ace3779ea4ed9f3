import SimKernel

/// A rough upper estimate of a run's peak memory, computed from the scenario alone, so that
/// `imsim run` can refuse a world that would not fit (issue 23: 10^9 groups grew to many GB
/// before anything was said). Per-item costs are calibrated on mixed-1k (Docs/reliability.md);
/// the estimate errs high.
public struct MemoryEstimate: Sendable, Equatable, CustomStringConvertible {
    public var users: Int64 = 0
    public var devices: Int64 = 0
    /// Group and chatroom memberships.
    public var memberships: Int64 = 0
    /// Stored message copies (server inbox + every recipient device's store).
    public var messageCopies: Int64 = 0
    public var bytes: Int64 = 0

    /// Cost per item, bytes.
    public static let baseBytes: Int64 = 64 << 20
    public static let perDevice: Int64 = 192 << 10     // client core + SQLite store and its page cache
    public static let perUser: Int64 = 4 << 10
    public static let perMembership: Int64 = 256
    public static let perMessageCopy: Int64 = 1 << 10

    public var description: String {
        "\(bytes >> 20) MiB (\(users) users, \(devices) devices, \(memberships) memberships, ~\(messageCopies) stored message copies)"
    }
}

extension Scenario {
    /// See `MemoryEstimate`. Saturating arithmetic: any scenario gives a number.
    public var memoryEstimate: MemoryEstimate {
        func add(_ a: Int64, _ b: Int64) -> Int64 { a.addingReportingOverflow(b).overflow ? .max : a + b }
        func mul(_ a: Int64, _ b: Int64) -> Int64 { a.multipliedReportingOverflow(by: b).overflow ? .max : a * b }
        var e = MemoryEstimate()
        let popUsers = Int64(population?.users ?? 0)
        e.users = add(Int64(users.count), popUsers)
        let secondDevices = Int64((Double(popUsers) * min(1, max(0, population?.secondDeviceFraction ?? 0))).rounded(.up))
        e.devices = add(Int64(users.reduce(0) { $0 + $1.devices.count }), add(popUsers, secondDevices))
        var groupMembers = Int64(groups.reduce(0) { $0 + $1.members.count })
        var memberships = groupMembers
        memberships = add(memberships, Int64(chatrooms.reduce(0) { $0 + $1.members.count }))
        if let p = population {
            let generated = mul(Int64(p.groups), Int64(p.groupSize))
            groupMembers = add(groupMembers, generated)
            memberships = add(memberships, add(generated, mul(Int64(p.chatrooms), Int64(p.chatroomMembers))))
        }
        e.memberships = memberships
        // Messages: workload per active user over the active phase, private ones stored twice,
        // group ones once per member of an average group; scripted sends once per count.
        let seconds = max(1, duration.duration.nanoseconds / 1_000_000_000)
        func perUser(_ r: RateValue?) -> Int64 {
            guard let r, r.milliEvents > 0 else { return 0 }
            let wide = Int128(r.milliEvents) * Int128(seconds) * 1_000_000 / Int128(max(1, r.per.nanoseconds))
            return Int64(clamping: wide)
        }
        let groupCount = Int64(groups.count) + Int64(population?.groups ?? 0)
        let avgGroup = groupCount == 0 ? 0 : groupMembers / max(1, groupCount)
        if let w = workload {
            let privateCopies = mul(mul(perUser(w.privateRate), e.users), 2)
            let groupCopies = mul(mul(perUser(w.groupRate), e.users), max(1, avgGroup))
            e.messageCopies = add(privateCopies, groupCopies)
        }
        for step in script {
            if case .send(let s) = step.action { e.messageCopies = add(e.messageCopies, mul(Int64(s.count), 2)) }
        }
        var bytes = MemoryEstimate.baseBytes
        bytes = add(bytes, mul(e.devices, MemoryEstimate.perDevice))
        bytes = add(bytes, mul(e.users, MemoryEstimate.perUser))
        bytes = add(bytes, mul(e.memberships, MemoryEstimate.perMembership))
        bytes = add(bytes, mul(e.messageCopies, MemoryEstimate.perMessageCopy))
        e.bytes = bytes
        return e
    }
}
