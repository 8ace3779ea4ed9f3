/// One entry of a user's inbox or sendbox.
struct MailEntry: Sendable {
    /// The message's dataTime and sequence, kept inline so ordering never dereferences the record.
    let dataTime: Int64
    let seq: UInt64
    let message: MessageRecord
    /// Which of the user's devices got it (a direct `s_msg` or a pull page): `MailEntry.nobody`,
    /// a device index, or `MailEntry.several`. Drives status bit 0x02 and "unseen" at expiry.
    var receivedBy: Int32 = MailEntry.nobody

    static let nobody: Int32 = -1
    static let several: Int32 = -2

    init(_ message: MessageRecord) {
        dataTime = message.dataTime
        seq = message.seq
        self.message = message
    }

    @inline(__always) func precedes(_ t: Int64, _ q: UInt64) -> Bool { dataTime != t ? dataTime < t : seq < q }

    mutating func markReceived(by device: Int32) {
        if receivedBy == MailEntry.nobody { receivedBy = device } else if receivedBy != device { receivedBy = MailEntry.several }
    }

    /// Status bit 0x02 for `device`: some *other* device of the user already got it.
    func receivedElsewhere(than device: Int32) -> Bool {
        receivedBy == MailEntry.several || (receivedBy >= 0 && receivedBy != device)
    }
}

/// A user's server-side inbox (what `pullMsg` returns) or sendbox (own messages, returned with
/// `isPullSend`): entries sorted by (dataTime, messageUId).
///
/// dataTime is strictly increasing per *conversation* only, so a message can arrive with a
/// dataTime below the newest entry of another conversation: insertion searches from the end
/// (almost always O(1)).
struct Mailbox: Sendable {
    private(set) var entries: [MailEntry] = []

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    var first: MailEntry? { entries.first }

    subscript(i: Int) -> MailEntry { entries[i] }

    /// Inserts in order; returns the entry's index.
    @discardableResult
    mutating func insert(_ message: MessageRecord) -> Int {
        let e = MailEntry(message)
        var i = entries.count
        while i > 0, !entries[i - 1].precedes(e.dataTime, e.seq) { i -= 1 }
        if i == entries.count { entries.append(e) } else { entries.insert(e, at: i) }
        return i
    }

    mutating func markReceived(_ i: Int, by device: Int32) { entries[i].markReceived(by: device) }

    /// Index of the first entry with dataTime > `time`.
    func firstIndex(after time: Int64) -> Int {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].dataTime > time { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    /// Removes and returns the entries with dataTime ≤ `cut`.
    mutating func removeExpired(upTo cut: Int64) -> ArraySlice<MailEntry> {
        let k = firstIndex(after: cut)
        guard k > 0 else { return [] }
        let removed = entries[0..<k]
        entries.removeFirst(k)
        return removed
    }
}
