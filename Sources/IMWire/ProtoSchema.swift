import SwiftProtobuf

/// The field table of `rmtp.proto`, used to say *where* a body is wrong (swift-protobuf only says
/// *that* it is). A test checks this table against the checked-in `.proto`.
enum ProtoSchema {
    enum Kind: Equatable {
        case int32, int64, bool, enumeration, string, bytes
        case message(BodyKind)

        var wireType: UInt64 {
            switch self {
            case .int32, .int64, .bool, .enumeration: 0
            case .string, .bytes, .message: 2
            }
        }
    }

    enum Label: Equatable { case required, optional, repeated }

    struct Field {
        let number: Int
        let name: String
        let kind: Kind
        let label: Label
        init(_ number: Int, _ name: String, _ kind: Kind, _ label: Label = .optional) {
            self.number = number
            self.name = name
            self.kind = kind
            self.label = label
        }
    }

    /// Valid `ChannelType` numbers.
    static let channelTypes: ClosedRange<UInt64> = 1...8

    static func fields(_ kind: BodyKind) -> [Field] {
        switch kind {
        case .upStreamMessage:
            [Field(1, "sessionId", .int32, .required), Field(2, "classname", .string, .required),
             Field(3, "content", .bytes, .required), Field(4, "pushText", .string), Field(5, "appData", .string),
             Field(6, "userId", .string, .repeated), Field(7, "delMsgTime", .int64), Field(8, "delMsgId", .string),
             Field(9, "configFlag", .int32), Field(10, "clientUniqueId", .int64), Field(11, "extraContent", .string)]
        case .downStreamMessage:
            [Field(1, "fromUserId", .string, .required), Field(2, "type", .int32, .required),   // any ChannelType number
             Field(3, "groupId", .string), Field(4, "classname", .string, .required),
             Field(5, "content", .bytes, .required), Field(6, "dataTime", .int64, .required),
             Field(7, "status", .int64, .required), Field(8, "extra", .int64), Field(9, "msgId", .string),
             Field(10, "direction", .int32), Field(14, "clientUniqueId", .int64), Field(15, "extraContent", .string)]
        case .downStreamMessages:
            [Field(1, "list", .message(.downStreamMessage), .repeated), Field(2, "syncTime", .int64, .required),
             Field(3, "finished", .bool)]
        case .syncRequestMsg:
            [Field(1, "syncTime", .int64, .required), Field(2, "ispolling", .bool, .required), Field(3, "isweb", .bool),
             Field(4, "isPullSend", .bool), Field(5, "isKeeping", .bool), Field(6, "sendBoxSyncTime", .int64)]
        case .notifyMsg:
            [Field(1, "type", .int32, .required), Field(2, "time", .int64), Field(3, "chrmId", .string)]
        case .chrmInput, .chrmOutput:
            [Field(1, "nothing", .int32, .required)]
        case .chrmPullMsg:
            [Field(1, "syncTime", .int64, .required), Field(2, "count", .int32, .required)]
        case .historyMsgInput:
            [Field(1, "targetId", .string), Field(2, "time", .int64), Field(3, "count", .int32), Field(4, "order", .int32)]
        case .historyMsgOuput:
            [Field(1, "list", .message(.downStreamMessage), .repeated), Field(2, "syncTime", .int64, .required),
             Field(3, "hasMsg", .int32, .required)]
        case .chrmKVEntity:
            [Field(1, "key", .string, .required), Field(2, "value", .string, .required), Field(3, "status", .int32),
             Field(4, "timestamp", .int64), Field(5, "uid", .string)]
        case .setChrmKV, .deleteChrmKV:
            [Field(1, "entry", .message(.chrmKVEntity), .required), Field(2, "bNotify", .bool),
             Field(3, "notification", .message(.upStreamMessage)), Field(4, "type", .enumeration)]
        case .chrmKVOutput:
            [Field(1, "entries", .message(.chrmKVEntity), .repeated), Field(2, "bFullUpdate", .bool),
             Field(3, "syncTime", .int64)]
        case .queryChrmKV:
            [Field(1, "timestamp", .int64, .required)]
        case .sessionMsgReadInput:
            [Field(1, "type", .enumeration, .required), Field(2, "msgTime", .int64, .required),
             Field(3, "channelId", .string, .required)]
        }
    }

    /// Walks `bytes` as `kind` and returns the first problem, or nil if the walker finds none.
    static func locateError(_ bytes: [UInt8], kind: BodyKind) -> WireError? {
        bytes.withUnsafeBufferPointer { buf in
            walk(buf, start: 0, end: buf.count, kind: kind, top: kind.rawValue, path: "")
        }
    }

    /// The dotted path of the first required field `message` lacks (for encode errors).
    static func firstMissingRequired(_ message: any SwiftProtobuf.Message, kind: BodyKind) -> String? {
        guard let bytes: [UInt8] = try? message.serializedBytes(partial: true),
              case .protobuf(_, let field, _, _)? = locateError(bytes, kind: kind) else { return nil }
        return field
    }

    private static func varint(_ buf: UnsafeBufferPointer<UInt8>, _ pos: Int, _ end: Int) -> (UInt64, Int)? {
        var v: UInt64 = 0
        var i = pos
        var shift: UInt64 = 0
        while i < end, shift < 64 {
            let b = buf[i]
            v |= UInt64(b & 0x7F) << shift
            i += 1
            if b & 0x80 == 0 { return (v, i - pos) }
            shift += 7
        }
        return nil
    }

    private static func walk(_ buf: UnsafeBufferPointer<UInt8>, start: Int, end: Int, kind: BodyKind,
                             top: String, path: String) -> WireError? {
        let fields = fields(kind)
        var seen = Set<Int>()
        var counts: [Int: Int] = [:]
        var pos = start
        func fail(_ field: String?, _ reason: String, _ at: Int) -> WireError {
            .protobuf(message: top, field: field, reason: reason, offset: at)
        }
        while pos < end {
            let tagAt = pos
            guard let (tag, n) = varint(buf, pos, end) else { return fail(nil, "truncated or overlong tag", tagAt) }
            pos += n
            let number = tag >> 3, wire = tag & 7
            guard number >= 1, number <= 536_870_911 else { return fail(nil, "invalid field number \(number)", tagAt) }
            let field = fields.first { $0.number == Int(number) }
            var name = field.map { path + $0.name }
            if let f = field, f.label == .repeated, case .message = f.kind {
                name = "\(path)\(f.name)[\(counts[f.number, default: 0])]"
            }
            if wire == 4 || wire > 5 { return fail(name, "invalid wire type \(wire)", tagAt) }
            if let f = field, f.kind.wireType != wire {
                return fail(name, "wire type \(wire), expected \(f.kind.wireType)", tagAt)
            }
            let valueAt = pos
            switch wire {
            case 0:
                guard let (v, m) = varint(buf, pos, end) else { return fail(name, "truncated varint", valueAt) }
                pos += m
                if let f = field, f.kind == .enumeration, !channelTypes.contains(v) {
                    continue    // proto2: an unknown enum value is an unknown field (not "seen")
                }
            case 1, 5:
                let size = wire == 1 ? 8 : 4
                guard end - pos >= size else { return fail(name, "truncated fixed\(size * 8)", valueAt) }
                pos += size
            case 2:
                guard let (len, m) = varint(buf, pos, end) else { return fail(name, "truncated length", valueAt) }
                pos += m
                guard len <= UInt64(end - pos) else {
                    return fail(name, "length \(len) exceeds the \(end - pos) bytes left", valueAt)
                }
                let s = pos, e = pos + Int(len)
                pos = e
                if let f = field {
                    switch f.kind {
                    case .string:
                        if String(validating: UnsafeBufferPointer(rebasing: buf[s..<e]), as: UTF8.self) == nil {
                            return fail(name, "invalid UTF-8", s)
                        }
                    case .message(let inner):
                        if let err = walk(buf, start: s, end: e, kind: inner, top: top, path: (name ?? "") + ".") {
                            return err
                        }
                        counts[f.number, default: 0] += 1
                    default:
                        break
                    }
                }
            case 3:
                // Unknown group: skip to its matching end tag.
                var depth = 1
                while depth > 0 {
                    guard pos < end, let (t, m) = varint(buf, pos, end) else { return fail(name, "unterminated group", tagAt) }
                    pos += m
                    switch t & 7 {
                    case 0: guard let (_, k) = varint(buf, pos, end) else { return fail(name, "truncated varint", pos) }; pos += k
                    case 1: guard end - pos >= 8 else { return fail(name, "truncated fixed64", pos) }; pos += 8
                    case 5: guard end - pos >= 4 else { return fail(name, "truncated fixed32", pos) }; pos += 4
                    case 2:
                        guard let (l, k) = varint(buf, pos, end), l <= UInt64(end - pos - k) else {
                            return fail(name, "truncated length", pos)
                        }
                        pos += k + Int(l)
                    case 3: depth += 1
                    case 4: depth -= 1
                    default: return fail(name, "invalid wire type \(t & 7)", pos - m)
                    }
                }
            default:
                return fail(name, "invalid wire type \(wire)", tagAt)
            }
            if let f = field { seen.insert(f.number) }
        }
        for f in fields where f.label == .required && !seen.contains(f.number) {
            return fail(path + f.name, "required field missing", start)
        }
        return nil
    }
}
