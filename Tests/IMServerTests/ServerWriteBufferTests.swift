import IMWire
import Testing
@testable import IMServer

/// The single-frame `write` and the effect buffer's initial room (issue 30) change no effect.
@Suite struct ServerWriteBufferTests {
    static let frames: [Frame] = [
        .pingResp(),
        .puback(Frame.Puback(messageId: 7, sentTime: 1_700_000_000_123, messageUId: "U1")),
        .publish(Frame.Publish(flags: .atLeastOnce, date: 1_700_000_000, topic: .s_msg, targetId: "bob", messageId: 9, body: [1, 2, 3])),
        .publish(Frame.Publish(flags: FrameFlags(dup: true, qos: .atLeastOnce), date: 1, topic: .s_ntf, targetId: "r", messageId: 2, body: [])),
        .connack(Frame.Connack(status: .accepted, session: .init(userId: "alice", sessionId: "S1-00000001", timestamp: 5))),
        .disconnect(Frame.Disconnect(status: .kickedByOtherDevice)),
    ]

    @Test(arguments: [false, true])
    func oneFrameWriteIsTheArrayWriteOfThatFrame(obfuscated: Bool) {
        var config = ServerConfig()
        config.obfuscatedStreams = obfuscated
        var one = ServerCore(config: config, directory: Harness.directory())
        var array = one
        let id = ConnectionID(3)
        for f in Self.frames {
            one.write(id, f)
            array.write(id, [f])
        }
        let a = one.takeEffects(), b = array.takeEffects()
        #expect(a == b)
        #expect(a.count == Self.frames.count)
        // Each input's effects get a buffer of their own: the next starts empty.
        #expect(one.effects.isEmpty)
        one.write(id, Self.frames[0])
        #expect(one.takeEffects() == [b[0]])
    }
}
