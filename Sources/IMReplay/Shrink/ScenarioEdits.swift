import IMWire
import IMWorld
import SimKernel

/// Edits of a scenario at the JSON level (so a shrunk scenario keeps the original's member
/// order and style). Each edit returns a new value; whether the result still loads is the
/// loader's business (a candidate that does not load is simply not kept).
enum ScenarioEdits {
    static func array(_ v: JSONValue, _ key: String) -> [JSONValue] { v[key]?.arrayValue ?? [] }

    static func objects(_ v: JSONValue) -> [JSONValue.Member] {
        if case .object(let m) = v { return m }
        return []
    }

    /// Users and their device ids.
    static func users(_ v: JSONValue) -> [(id: String, devices: [String])] {
        array(v, "users").compactMap { u in
            guard let id = u["id"]?.stringValue else { return nil }
            let devs = u["devices"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? ["\(id)-phone"]
            return (id, devs)
        }
    }

    private static func strings(_ v: JSONValue?) -> [String] { v?.arrayValue?.compactMap(\.stringValue) ?? [] }

    /// Removes a user and everything that names it (memberships, lists, the script steps of its
    /// devices and the steps that address it).
    static func removingUser(_ v: JSONValue, _ user: String) -> JSONValue { removingUsers(v, [user]) }

    /// Removes these users at once (one pass over each list: a 1,000-member room loses 900).
    static func removingUsers(_ v: JSONValue, _ gone: Set<String>) -> JSONValue {
        let devices = Set(users(v).filter { gone.contains($0.id) }.flatMap(\.devices))
        var out = v.setting("users", .array(array(v, "users").filter { !gone.contains($0["id"]?.stringValue ?? "") }))
        if v["groups"] != nil {
            out = out.setting("groups", .array(array(v, "groups").compactMap { g in
                let members = strings(g["members"]).filter { !gone.contains($0) }
                if members.isEmpty { return nil }
                var x = g.setting("members", .array(members.map { .string($0) }))
                if g["muted"] != nil { x = x.setting("muted", .array(strings(g["muted"]).filter { !gone.contains($0) }.map { .string($0) })) }
                return x
            }))
        }
        let keptGroups = Set(array(out, "groups").compactMap { $0["id"]?.stringValue })
        let droppedGroups = Set(array(v, "groups").compactMap { $0["id"]?.stringValue }).subtracting(keptGroups)
        if v["chatrooms"] != nil {
            out = out.setting("chatrooms", .array(array(v, "chatrooms").map { r in
                var x = r.setting("members", .array(strings(r["members"]).filter { !gone.contains($0) }.map { .string($0) }))
                if r["whitelist"] != nil { x = x.setting("whitelist", .array(strings(r["whitelist"]).filter { !gone.contains($0) }.map { .string($0) })) }
                return x
            }))
        }
        if let server = v["server"] {
            var s = server
            for key in ["blacklists", "whitelists"] {
                guard case .object(let m)? = server[key] else { continue }
                s = s.setting(key, .object(m.filter { !gone.contains($0.key) }.map {
                    .init($0.key, .array(strings($0.value).filter { !gone.contains($0) }.map { .string($0) }))
                }))
            }
            out = out.setting("server", s)
        }
        out = out.setting("script", .array(array(v, "script").filter { step in
            if let d = step["device"]?.stringValue, devices.contains(d) { return false }
            if let t = step["target"]?.stringValue, devices.contains(t) { return false }
            if let u = step["user"]?.stringValue, gone.contains(u) { return false }
            for key in ["to", "conversation"] {
                if let c = step[key]?.stringValue, let colon = c.firstIndex(of: ":"),
                   ["private", "system"].contains(c[..<colon]), gone.contains(String(c[c.index(after: colon)...])) { return false }
                if let c = step[key]?.stringValue, droppedGroups.contains(where: { c == "group:\($0)" }) { return false }
            }
            return true
        }))
        return out
    }

    /// Removes one device of a user that has several (and its script steps).
    static func removingDevice(_ v: JSONValue, user: String, device: String) -> JSONValue {
        var out = v.setting("users", .array(array(v, "users").map { u in
            guard u["id"]?.stringValue == user, let devs = u["devices"]?.arrayValue else { return u }
            return u.setting("devices", .array(devs.filter { $0["id"]?.stringValue != device }))
        }))
        out = out.setting("script", .array(array(v, "script").filter {
            $0["device"]?.stringValue != device && $0["target"]?.stringValue != device
        }))
        return out
    }

    /// The device's app starting at a whole second (`startAt`); nil when it already starts then
    /// or later.
    static func startingDevice(_ v: JSONValue, user: String, device: String, atSeconds seconds: Int64) -> JSONValue? {
        let at = SimDuration.seconds(seconds)
        var changed = false
        let list: [JSONValue] = array(v, "users").map { u in
            guard u["id"]?.stringValue == user else { return u }
            // A user without a device list has the one default device.
            let devs = u["devices"]?.arrayValue ?? [.object(["id": .string("\(user)-phone")])]
            return u.setting("devices", .array(devs.map { d in
                guard d["id"]?.stringValue == device else { return d }
                if let s = d["startAt"]?.stringValue, let t = try? SimDuration(parsing: s), t >= at { return d }
                changed = true
                return d.setting("startAt", .string(at.description))
            }))
        }
        return changed ? v.setting("users", .array(list)) : nil
    }

    /// A network setting made `value` everywhere it is in force: the scenario's `network`
    /// (added when the default is not `value`) and every device override that sets it.
    static func settingNetwork(_ v: JSONValue, _ key: String, _ value: JSONValue) -> JSONValue {
        var out = v.setting("network", (v["network"] ?? .object([])).setting(key, value))
        guard v["users"] != nil else { return out }
        out = out.setting("users", .array(array(v, "users").map { u in
            guard let devs = u["devices"]?.arrayValue else { return u }
            return u.setting("devices", .array(devs.map { d in
                guard let n = d["network"], n[key] != nil else { return d }
                return d.setting("network", n.setting(key, value))
            }))
        }))
        return out
    }

    /// Removes a group or chatroom and the steps that address it.
    static func removingPlace(_ v: JSONValue, key: String, id: String) -> JSONValue {
        let prefix = key == "groups" ? "group:" : "chatroom:"
        var out = v.setting(key, .array(array(v, key).filter { $0["id"]?.stringValue != id }))
        out = out.setting("script", .array(array(v, "script").filter { step in
            if step["room"]?.stringValue == id && key == "chatrooms" { return false }
            for k in ["to", "conversation"] where step[k]?.stringValue == prefix + id { return false }
            return true
        }))
        return out
    }

    /// Halves a rate string (`"10/min"` → `"5/1m"`); nil when it cannot go lower.
    static func halvedRate(_ text: String) -> String? {
        guard let r = try? RateValue(parsing: text), r.milliEvents > 1 else { return nil }
        return RateValue(milliEvents: r.milliEvents / 2, per: r.per).description
    }

    /// Sizes people care about.
    static func size(_ v: JSONValue) -> (steps: Int, users: Int, devices: Int, groups: Int, chatrooms: Int, workload: Int, faults: Int) {
        let us = users(v)
        var userCount = us.count
        var deviceCount = us.reduce(0) { $0 + $1.devices.count }
        if let p = v["population"], let n = p["users"]?.int64Value {
            userCount += Int(n)
            deviceCount += Int(n)
        }
        let groups = array(v, "groups").count + Int(v["population"]?["groups"]?.int64Value ?? 0)
        let rooms = array(v, "chatrooms").count + Int(v["population"]?["chatrooms"]?.int64Value ?? 0)
        let workload = objects(v["workload"] ?? .null).filter { $0.key.hasSuffix("Rate") || $0.key == "bursts" }.count
        let faults = objects(v["faults"]?["random"] ?? .null).count
        return (array(v, "script").count, userCount, deviceCount, groups, rooms, workload, faults)
    }
}
