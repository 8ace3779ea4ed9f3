#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SwiftProtobuf

/// Hand-written binary codec for the hot messages — UpStreamMessage (every send),
/// DownStreamMessage (every delivery), DownStreamMessages (every pull page), ChrmPullMsg (every
/// chatroom pull) and NotifyMsg (every `s_ntf`) — producing and
/// reading the same generated structs. `imsim bench codec` showed swift-protobuf's generic visitor
/// dominating the codec (≈70% of a delivery); this path is 3–4× faster.
///
/// It only handles the ordinary case and answers nil for anything else (unknown fields, unknown
/// enum values, non-canonical varints, truncation, missing required fields, invalid UTF-8), and
/// the caller then uses swift-protobuf, which decides and reports. So the generated code stays the
/// reference: tests and the fuzz harness check that whenever this path answers, its bytes/values
/// equal swift-protobuf's.
package enum FastProto {
    // MARK: Encoding

    package static func encode(_ m: RMTPUpStreamMessage) -> [UInt8]? {
        guard m.hasSessionID, m.hasClassname, m.hasContent, m.unknownFields.data.isEmpty else { return nil }
        var w = Writer()
        w.out.reserveCapacity(32 + m.classname.utf8.count + m.content.count)
        w.varint(1, UInt64(bitPattern: Int64(m.sessionID)))
        w.string(2, m.classname)
        w.bytes(3, m.content)
        if m.hasPushText { w.string(4, m.pushText) }
        if m.hasAppData { w.string(5, m.appData) }
        for u in m.userID { w.string(6, u) }
        if m.hasDelMsgTime { w.varint(7, UInt64(bitPattern: m.delMsgTime)) }
        if m.hasDelMsgID { w.string(8, m.delMsgID) }
        if m.hasConfigFlag { w.varint(9, UInt64(bitPattern: Int64(m.configFlag))) }
        if m.hasClientUniqueID { w.varint(10, UInt64(bitPattern: m.clientUniqueID)) }
        if m.hasExtraContent { w.string(11, m.extraContent) }
        return w.out
    }

    package static func encode(_ m: RMTPDownStreamMessage) -> [UInt8]? {
        guard downStreamEncodable(m) else { return nil }
        var w = Writer()
        w.out.reserveCapacity(downStreamSize(m))
        writeDownStream(m, into: &w)
        return w.out
    }

    package static func encode(_ m: RMTPDownStreamMessages) -> [UInt8]? {
        guard m.hasSyncTime, m.unknownFields.data.isEmpty, m.list.allSatisfy(downStreamEncodable) else { return nil }
        var sizes: [Int] = []
        sizes.reserveCapacity(m.list.count)
        var total = 16
        for d in m.list {
            let s = downStreamSize(d)
            sizes.append(s)
            total += 6 + s
        }
        var w = Writer()
        w.out.reserveCapacity(total)
        for (d, s) in zip(m.list, sizes) {
            w.tag(1, 2)
            w.raw(UInt64(s))
            writeDownStream(d, into: &w)
        }
        w.varint(2, UInt64(bitPattern: m.syncTime))
        if m.hasFinished { w.varint(3, m.finished ? 1 : 0) }
        return w.out
    }

    /// ChrmPullMsg (1 syncTime · 2 count, both required): every chatroom pull.
    package static func encode(_ m: RMTPChrmPullMsg) -> [UInt8]? {
        guard m.hasSyncTime, m.hasCount, m.unknownFields.data.isEmpty else { return nil }
        var w = Writer()
        w.out.reserveCapacity(24)
        w.varint(1, UInt64(bitPattern: m.syncTime))
        w.varint(2, UInt64(bitPattern: Int64(m.count)))
        return w.out
    }

    /// NotifyMsg (1 type required · 2 time · 3 chrmId): every `s_ntf` / `s_cmd`.
    package static func encode(_ m: RMTPNotifyMsg) -> [UInt8]? {
        guard m.hasType, m.unknownFields.data.isEmpty else { return nil }
        var w = Writer()
        w.out.reserveCapacity(24 + (m.hasChrmID ? m.chrmID.utf8.count : 0))
        w.varint(1, UInt64(bitPattern: Int64(m.type)))
        if m.hasTime { w.varint(2, UInt64(bitPattern: m.time)) }
        if m.hasChrmID { w.string(3, m.chrmID) }
        return w.out
    }

    // MARK: Pages from already-encoded items

    /// A DownStreamMessages page (1 list, repeated · 2 syncTime · 3 finished) from
    /// DownStreamMessages encoded once each at accept time: a pull or chatroom page only adds
    /// the envelope. Same bytes as swift-protobuf (`PullTests.pageEncodingMatchesSwiftProtobuf`).
    package static func downStreamMessages(encoded items: [[UInt8]], syncTime: Int64, finished: Bool) -> [UInt8] {
        var w = pageList(items)
        w.varint(2, UInt64(bitPattern: syncTime))
        w.varint(3, finished ? 1 : 0)
        return w.out
    }

    /// A HistoryMsgOuput page (1 list, repeated · 2 syncTime · 3 hasMsg) from encoded items.
    package static func historyOutput(encoded items: [[UInt8]], syncTime: Int64, hasMsg: Int32) -> [UInt8] {
        var w = pageList(items)
        w.varint(2, UInt64(bitPattern: syncTime))
        w.varint(3, UInt64(bitPattern: Int64(hasMsg)))
        return w.out
    }

    /// Field 1 (length-delimited) once per encoded item.
    private static func pageList(_ items: [[UInt8]]) -> Writer {
        var w = Writer()
        w.out.reserveCapacity(items.reduce(16) { $0 + $1.count + 3 })
        for item in items {
            w.tag(1, 2)
            w.raw(UInt64(item.count))
            w.out.append(contentsOf: item)
        }
        return w
    }

    static func downStreamEncodable(_ m: RMTPDownStreamMessage) -> Bool {
        m.hasFromUserID && m.hasType && m.hasClassname && m.hasContent && m.hasDataTime && m.hasStatus
            && m.unknownFields.data.isEmpty
    }

    static func writeDownStream(_ m: RMTPDownStreamMessage, into w: inout Writer) {
        w.string(1, m.fromUserID)
        w.varint(2, UInt64(bitPattern: Int64(m.type)))
        if m.hasGroupID { w.string(3, m.groupID) }
        w.string(4, m.classname)
        w.bytes(5, m.content)
        w.varint(6, UInt64(bitPattern: m.dataTime))
        w.varint(7, UInt64(bitPattern: m.status))
        if m.hasExtra { w.varint(8, UInt64(bitPattern: m.extra)) }
        if m.hasMsgID { w.string(9, m.msgID) }
        if m.hasDirection { w.varint(10, UInt64(bitPattern: Int64(m.direction))) }
        if m.hasClientUniqueID { w.varint(14, UInt64(bitPattern: m.clientUniqueID)) }
        if m.hasExtraContent { w.string(15, m.extraContent) }
    }

    /// Exact encoded size of a DownStreamMessage (for the length prefix inside a page).
    static func downStreamSize(_ m: RMTPDownStreamMessage) -> Int {
        func str(_ n: Int) -> Int { 1 + varintSize(UInt64(n)) + n }
        func v(_ x: UInt64) -> Int { 1 + varintSize(x) }
        var n = str(m.fromUserID.utf8.count) + v(UInt64(bitPattern: Int64(m.type))) + str(m.classname.utf8.count)
            + str(m.content.count) + v(UInt64(bitPattern: m.dataTime)) + v(UInt64(bitPattern: m.status))
        if m.hasGroupID { n += str(m.groupID.utf8.count) }
        if m.hasExtra { n += v(UInt64(bitPattern: m.extra)) }
        if m.hasMsgID { n += str(m.msgID.utf8.count) }
        if m.hasDirection { n += v(UInt64(bitPattern: Int64(m.direction))) }
        if m.hasClientUniqueID { n += v(UInt64(bitPattern: m.clientUniqueID)) }
        if m.hasExtraContent { n += str(m.extraContent.utf8.count) }
        return n
    }

    static func varintSize(_ v: UInt64) -> Int {
        v == 0 ? 1 : (64 - v.leadingZeroBitCount + 6) / 7
    }

    struct Writer {
        var out: [UInt8] = []

        mutating func raw(_ v: UInt64) { out.appendVarint(v) }

        mutating func tag(_ field: UInt64, _ wire: UInt64) { raw(field << 3 | wire) }

        mutating func varint(_ field: UInt64, _ v: UInt64) {
            tag(field, 0)
            raw(v)
        }

        mutating func string(_ field: UInt64, _ s: String) {
            tag(field, 2)
            var s = s
            s.withUTF8 { u in
                raw(UInt64(u.count))
                out.append(contentsOf: u)
            }
        }

        mutating func bytes(_ field: UInt64, _ d: Data) {
            tag(field, 2)
            raw(UInt64(d.count))
            d.withUnsafeBytes { out.append(contentsOf: $0) }   // memcpy, not Data's element iterator
        }
    }

    // MARK: Decoding

    package static func decodeUpStream(_ bytes: [UInt8]) -> RMTPUpStreamMessage? {
        bytes.withUnsafeBufferPointer { buf in
            var r = Reader(buf: buf, pos: 0, end: buf.count)
            return r.upStream()
        }
    }

    package static func decodeDownStream(_ bytes: [UInt8]) -> RMTPDownStreamMessage? {
        bytes.withUnsafeBufferPointer { buf in
            var r = Reader(buf: buf, pos: 0, end: buf.count)
            return r.downStream()
        }
    }

    package static func decodeDownStreamMessages(_ bytes: [UInt8]) -> RMTPDownStreamMessages? {
        bytes.withUnsafeBufferPointer { buf in
            var r = Reader(buf: buf, pos: 0, end: buf.count)
            var m = RMTPDownStreamMessages()
            while r.pos < r.end {
                guard let (field, wire) = r.tag() else { return nil }
                switch (field, wire) {
                case (1, 2):
                    guard let (s, e) = r.lengthDelimited() else { return nil }
                    var sub = Reader(buf: buf, pos: s, end: e)
                    guard let d = sub.downStream() else { return nil }
                    m.list.append(d)
                case (2, 0): guard let v = r.varint() else { return nil }; m.syncTime = Int64(bitPattern: v)
                case (3, 0): guard let v = r.varint() else { return nil }; m.finished = v != 0
                default: return nil
                }
            }
            guard m.hasSyncTime else { return nil }
            return m
        }
    }

    package static func decodeChrmPull(_ bytes: [UInt8]) -> RMTPChrmPullMsg? {
        bytes.withUnsafeBufferPointer { buf in
            var r = Reader(buf: buf, pos: 0, end: buf.count)
            var m = RMTPChrmPullMsg()
            while r.pos < r.end {
                guard let (field, wire) = r.tag() else { return nil }
                switch (field, wire) {
                case (1, 0): guard let v = r.varint() else { return nil }; m.syncTime = Int64(bitPattern: v)
                case (2, 0): guard let v = r.varint() else { return nil }; m.count = Int32(truncatingIfNeeded: v)
                default: return nil
                }
            }
            guard m.hasSyncTime, m.hasCount else { return nil }
            return m
        }
    }

    package static func decodeNotify(_ bytes: [UInt8]) -> RMTPNotifyMsg? {
        bytes.withUnsafeBufferPointer { buf in
            var r = Reader(buf: buf, pos: 0, end: buf.count)
            var m = RMTPNotifyMsg()
            while r.pos < r.end {
                guard let (field, wire) = r.tag() else { return nil }
                switch (field, wire) {
                case (1, 0): guard let v = r.varint() else { return nil }; m.type = Int32(truncatingIfNeeded: v)
                case (2, 0): guard let v = r.varint() else { return nil }; m.time = Int64(bitPattern: v)
                case (3, 2): guard let s = r.string() else { return nil }; m.chrmID = s
                default: return nil
                }
            }
            guard m.hasType else { return nil }
            return m
        }
    }

    struct Reader {
        let buf: UnsafeBufferPointer<UInt8>
        var pos: Int
        let end: Int

        /// A canonical varint (≤ 10 bytes, 10th byte ≤ 1) or nil.
        mutating func varint() -> UInt64? {
            var v: UInt64 = 0
            var shift: UInt64 = 0
            while pos < end {
                let b = buf[pos]
                pos += 1
                if shift == 63 {
                    guard b <= 1 else { return nil }
                    return v | UInt64(b) << 63
                }
                v |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return v }
                shift += 7
            }
            return nil
        }

        mutating func tag() -> (UInt64, UInt64)? {
            guard let t = varint() else { return nil }
            return (t >> 3, t & 7)
        }

        mutating func lengthDelimited() -> (Int, Int)? {
            guard let n = varint(), n <= UInt64(end - pos) else { return nil }
            let s = pos
            pos += Int(n)
            return (s, pos)
        }

        mutating func string() -> String? {
            guard let (s, e) = lengthDelimited() else { return nil }
            return FastUTF8.string(UnsafeBufferPointer(rebasing: buf[s..<e]))
        }

        mutating func data() -> Data? {
            guard let (s, e) = lengthDelimited() else { return nil }
            return Data(UnsafeBufferPointer(rebasing: buf[s..<e]))
        }

        mutating func upStream() -> RMTPUpStreamMessage? {
            var m = RMTPUpStreamMessage()
            while pos < end {
                guard let (field, wire) = tag() else { return nil }
                switch (field, wire) {
                case (1, 0): guard let v = varint() else { return nil }; m.sessionID = Int32(truncatingIfNeeded: v)
                case (2, 2): guard let s = string() else { return nil }; m.classname = s
                case (3, 2): guard let d = data() else { return nil }; m.content = d
                case (4, 2): guard let s = string() else { return nil }; m.pushText = s
                case (5, 2): guard let s = string() else { return nil }; m.appData = s
                case (6, 2): guard let s = string() else { return nil }; m.userID.append(s)
                case (7, 0): guard let v = varint() else { return nil }; m.delMsgTime = Int64(bitPattern: v)
                case (8, 2): guard let s = string() else { return nil }; m.delMsgID = s
                case (9, 0): guard let v = varint() else { return nil }; m.configFlag = Int32(truncatingIfNeeded: v)
                case (10, 0): guard let v = varint() else { return nil }; m.clientUniqueID = Int64(bitPattern: v)
                case (11, 2): guard let s = string() else { return nil }; m.extraContent = s
                default: return nil
                }
            }
            guard m.hasSessionID && m.hasClassname && m.hasContent else { return nil }
            return m
        }

        mutating func downStream() -> RMTPDownStreamMessage? {
            var m = RMTPDownStreamMessage()
            while pos < end {
                guard let (field, wire) = tag() else { return nil }
                switch (field, wire) {
                case (1, 2): guard let s = string() else { return nil }; m.fromUserID = s
                case (2, 0):
                    guard let v = varint() else { return nil }
                    m.type = Int32(truncatingIfNeeded: v)
                case (3, 2): guard let s = string() else { return nil }; m.groupID = s
                case (4, 2): guard let s = string() else { return nil }; m.classname = s
                case (5, 2): guard let d = data() else { return nil }; m.content = d
                case (6, 0): guard let v = varint() else { return nil }; m.dataTime = Int64(bitPattern: v)
                case (7, 0): guard let v = varint() else { return nil }; m.status = Int64(bitPattern: v)
                case (8, 0): guard let v = varint() else { return nil }; m.extra = Int64(bitPattern: v)
                case (9, 2): guard let s = string() else { return nil }; m.msgID = s
                case (10, 0): guard let v = varint() else { return nil }; m.direction = Int32(truncatingIfNeeded: v)
                case (14, 0): guard let v = varint() else { return nil }; m.clientUniqueID = Int64(bitPattern: v)
                case (15, 2): guard let s = string() else { return nil }; m.extraContent = s
                default: return nil
                }
            }
            guard downStreamComplete(m) else { return nil }
            // `consume`: without it the message was copied into the result and the local destroyed.
            return consume m
        }

        func downStreamComplete(_ m: RMTPDownStreamMessage) -> Bool {
            m.hasFromUserID && m.hasType && m.hasClassname && m.hasContent && m.hasDataTime && m.hasStatus
        }
    }
}

/// UTF-8 → String without the generic validation path: ASCII is copied as is, anything else is
/// validated by the standard library.
enum FastUTF8 {
    static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        if bytes.isEmpty { return "" }
        if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let n = bytes.count
        var i = 0
        var acc: UInt64 = 0
        while i + 8 <= n {
            acc |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < n {
            acc |= UInt64(bytes[i])
            i += 1
        }
        return acc & 0x8080_8080_8080_8080 == 0
    }
}
