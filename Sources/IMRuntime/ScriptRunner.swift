import IMClient
import IMWire
import NIOCore
import SimKernel

/// Runs a `ClientScript` on a client's event loop: each step at the script's start + its time.
enum ScriptRunner {
    static func run(_ script: ClientScript, host: ClientHost) -> EventLoopFuture<Void> {
        let loop = host.loop.assumeIsolated()
        let done = host.loop.makePromise(of: Void.self)
        var remaining = 0
        func finishOne() {
            remaining -= 1
            if remaining == 0 { done.succeed(()) }
        }
        for step in script.steps {
            let times: Int
            var interval = SimDuration.zero
            if case .send(_, _, _, _, let count, let i, _) = step.action { times = count; interval = i } else { times = 1 }
            for k in 0..<times {
                remaining += 1
                let at = step.at + interval * Int64(k)
                loop.scheduleTask(in: .nanoseconds(at.nanoseconds)) { [weak host] in
                    if let host { perform(step.action, repeatIndex: k, host: host) }
                    finishOne()
                }
            }
        }
        if remaining == 0 { done.succeed(()) }
        return done.futureResult
    }

    static func perform(_ action: ClientScript.Action, repeatIndex k: Int, host: ClientHost) {
        guard !host.stopped else { return }
        func call(_ c: ClientAPICall) { host.feed(.api(c)) }
        func latest(_ conv: ConversationKey) -> Int64 { (try? host.store.conversation(conv))??.latestTime ?? 0 }
        switch action {
        case .connect(let limit): call(.connect(token: host.options.token, timeLimitSeconds: limit))
        case .disconnect: call(.disconnect)
        case .logout: call(.logout)
        case .send(let to, let objectName, let text, let content, let count, _, let mention):
            let body = content ?? (count > 1 ? "{\"content\":\(JSONText.string("\(text ?? "") #\(k + 1)"))}"
                                             : "{\"content\":\(JSONText.string(text ?? ""))}")
            call(.send(conversation: to, objectName: objectName, content: body, pushText: nil, mentioned: mention))
        case .resend:
            if let id = host.lastFailedMessageId { call(.resend(messageId: id)) }
        case .recall:
            if let id = host.lastSentOk { call(.recall(messageId: id)) }
        case .read(let conv):
            let t = latest(conv)
            if conv.type == .privateChat { call(.sendReadReceipt(conversation: conv, lastMessageSentTime: t)) }
            call(.clearUnread(conversation: conv, upToSentTime: t))
        case .clearUnread(let conv): call(.clearUnread(conversation: conv, upToSentTime: latest(conv)))
        case .join(let room, let count): call(.joinChatroom(roomId: room, messageCount: count))
        case .joinExist(let room, let count): call(.joinExistChatroom(roomId: room, messageCount: count))
        case .quit(let room): call(.quitChatroom(roomId: room))
        case .setKV(let room, let key, let value, let autoDelete, let force):
            call(.setChatroomKV(roomId: room, key: key, value: value, autoDelete: autoDelete, force: force))
        case .removeKV(let room, let key, let force): call(.removeChatroomKV(roomId: room, key: key, force: force))
        case .history(let conv, let count): call(.getHistory(conversation: conv, beforeMessageId: -1, count: count))
        case .remoteHistory(let conv, let count):
            call(.getRemoteHistory(conversation: conv, beforeTime: 0, count: count))
        case .background: host.feed(.lifecycle(.background))
        case .foreground: host.feed(.lifecycle(.foreground))
        case .network(let state): host.setNetwork(up: state != "none", changeInterface: state != "none")
        case .wait: break
        }
    }
}
