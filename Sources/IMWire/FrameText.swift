import SwiftProtobuf

/// Frames as readable text (`imsim decode` without `--json`, short logs): one header line, then the
/// protobuf body in text format with field names and the decoded message content.
public enum FrameText {
    /// One line: type, direction, flags and variable header fields.
    public static func headerLine(_ frame: Frame, direction: WireDirection) -> String {
        var parts = [frame.type.description, direction.rawValue]
        let f = frame.flags
        parts.append("qos=\(f.qos.rawValue)")
        if f.dup { parts.append(frame.type == .publish && direction == .serverToClient ? "dup(sync echo)" : "dup") }
        if f.retain { parts.append("retain") }
        func q(_ s: String) -> String { JSONValue.string(s).serializedString }
        switch frame {
        case .connect(let c):
            parts += ["protocol=\(q(c.protocolName))/\(c.protocolVersion)", "cleanSession=\(c.cleanSession)",
                      "keepAlive=\(c.keepAlive)", "clientId=\(q(c.clientId))"]
            if let k = c.appKey { parts.append("appKey=\(q(k))") }
            if let t = c.token { parts.append("token=\(q(t))") }
            if c.isReconnect { parts.append("reconnect") }
            if c.reconnectKickEnable { parts.append("reconnectKickEnable") }
        case .connack(let c):
            parts.append("status=\(c.statusCode)\(c.status.map { "(\($0))" } ?? "")")
            if c.reserved != 0 { parts.append("reserved=\(c.reserved)") }
            if let s = c.session {
                parts += ["userId=\(q(s.userId))", "sessionId=\(q(s.sessionId))", "timestamp=\(s.timestamp)"]
            }
        case .publish(let p):
            if direction == .serverToClient { parts.append("date=\(p.date)") }
            parts += ["topic=\(q(p.topic))", "targetId=\(q(p.targetId))", "msgId=\(p.messageId)", "body=\(p.body.count)B"]
        case .puback(let p):
            parts.append("msgId=\(p.messageId)")
            if direction == .serverToClient {
                parts += ["date=\(p.date)", "status=\(p.status)", "millis=\(p.millis)", "messageUId=\(q(p.messageUId))",
                          "sentTime=\(p.sentTime)"]
            }
        case .query(let x):
            parts += ["topic=\(q(x.topic))", "targetId=\(q(x.targetId))", "msgId=\(x.messageId)", "body=\(x.body.count)B"]
        case .queryAck(let x):
            parts += ["msgId=\(x.messageId)", "date=\(x.date)", "status=\(x.status)", "body=\(x.body.count)B"]
        case .queryConfirm(let x):
            parts.append("msgId=\(x.messageId)")
        case .subscribeFamily(let r):
            parts.append("payload=\(Hex.encode(r.payload))")
        case .pingReq, .pingResp:
            break
        case .disconnect(let d):
            parts.append("status=\(d.statusCode)\(d.status.map { "(\($0))" } ?? "")")
            if d.reserved != 0 { parts.append("reserved=\(d.reserved)") }
        }
        return parts.joined(separator: " ")
    }

    /// Header line plus indented body and content lines.
    public static func describe(_ frame: Frame, direction: WireDirection, queryTopic: String? = nil) -> String {
        var lines = [headerLine(frame, direction: direction)]
        guard let body = frame.body, !body.isEmpty else { return lines[0] }
        guard let kind = frame.bodyKind(queryTopic: queryTopic) else {
            lines.append("  body (type unknown\(frame.type == .queryAck ? "; pass the QUERY's topic" : "")): \(Hex.encode(body))")
            return lines.joined(separator: "\n")
        }
        do {
            let msg = try kind.decode(body)
            lines.append("  \(kind.rawValue) {")
            for l in msg.textFormatString().split(separator: "\n", omittingEmptySubsequences: true) {
                lines.append("    " + l)
            }
            lines.append("  }")
            var contents: [(String, [UInt8])] = []
            if let up = msg as? RMTPUpStreamMessage { contents.append((up.classname, up.contentBytes)) }
            if let down = msg as? RMTPDownStreamMessage { contents.append((down.classname, down.contentBytes)) }
            let list = (msg as? RMTPDownStreamMessages)?.list ?? (msg as? RMTPHistoryMsgOuput)?.list ?? []
            contents += list.map { ($0.classname, $0.contentBytes) }
            for (i, c) in contents.enumerated() {
                let label = contents.count > 1 || !list.isEmpty ? "content[\(i)]" : "content"
                let text = (try? JSONValue.parse(c.1))?.serializedString ?? "hex \(Hex.encode(c.1))"
                lines.append("  \(label) \(c.0) \(text)")
            }
        } catch {
            lines.append("  \(kind.rawValue): \(error)")
            lines.append("  body hex: \(Hex.encode(body))")
        }
        return lines.joined(separator: "\n")
    }
}

extension Frame: CustomStringConvertible {
    /// The header line, read client→server for PUBLISH/PUBACK (use `FrameText` to choose).
    public var description: String {
        let dir: WireDirection
        switch self {
        case .connack, .queryAck, .disconnect: dir = .serverToClient
        default: dir = .clientToServer
        }
        return FrameText.headerLine(self, direction: dir)
    }
}
