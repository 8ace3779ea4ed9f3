import IMWire

/// Pull and history responses built from already-encoded DownStreamMessages: every message is
/// encoded once at accept time, and a page only adds its envelope (protobuf field 1, length-
/// delimited, per item; then the scalar fields). Checked against swift-protobuf by the tests.
enum PageEncoding {
    /// DownStreamMessages: 1 list (repeated) · 2 syncTime · 3 finished.
    static func downStreamMessages(_ items: [[UInt8]], syncTime: Int64, finished: Bool) -> [UInt8] {
        var out = envelope(items)
        out.append(0x10)
        out.appendVarint(UInt64(bitPattern: syncTime))
        out.append(0x18)
        out.append(finished ? 1 : 0)
        return out
    }

    /// HistoryMsgOuput: 1 list (repeated) · 2 syncTime · 3 hasMsg.
    static func historyOutput(_ items: [[UInt8]], syncTime: Int64, hasMsg: Int32) -> [UInt8] {
        var out = envelope(items)
        out.append(0x10)
        out.appendVarint(UInt64(bitPattern: syncTime))
        out.append(0x18)
        out.appendVarint(UInt64(bitPattern: Int64(hasMsg)))
        return out
    }

    private static func envelope(_ items: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(items.reduce(16) { $0 + $1.count + 3 })
        for item in items {
            out.append(0x0A)
            out.appendVarint(UInt64(item.count))
            out.append(contentsOf: item)
        }
        return out
    }
}
