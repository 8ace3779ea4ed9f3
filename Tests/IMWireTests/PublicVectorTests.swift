import Testing
@testable import IMWire

/// wire-protocol §5: the QUERY `pullMsg` captured from the public web SDK.
@Suite struct PublicVectorTests {
    static let vector: [UInt8] = [82, 0, 7, 112, 117, 108, 108, 77, 115, 103, 0, 6, 98, 49, 48, 56, 48, 54, 0, 1,
                                  8, 0, 16, 0, 32, 1]

    @Test func decodesToExactlyTheListedFields() throws {
        let frame = try MessageFraming.decode(Self.vector, direction: .clientToServer)
        guard case .query(let q) = frame else {
            Issue.record("expected QUERY, got \(frame)")
            return
        }
        #expect(frame.type == .query)
        #expect(q.flags == FrameFlags(dup: false, qos: .atLeastOnce, retain: false))
        #expect(q.topic == "pullMsg")
        #expect(q.knownTopic == .pullMsg)
        #expect(q.targetId == "b10806")
        #expect(q.messageId == 1)
        #expect(q.body == [8, 0, 16, 0, 32, 1])
        let sync = try q.decodeBody(RMTPSyncRequestMsg.self)
        #expect(sync.hasSyncTime && sync.syncTime == 0)
        #expect(sync.hasIspolling && sync.ispolling == false)
        #expect(sync.hasIsPullSend && sync.isPullSend == true)
        #expect(!sync.hasIsweb && !sync.hasIsKeeping && !sync.hasSendBoxSyncTime)
        #expect(sync.unknownFields.data.isEmpty)
    }

    @Test func reencodesToTheSameBytes() throws {
        let frame = try MessageFraming.decode(Self.vector, direction: .clientToServer)
        #expect(try MessageFraming.encode(frame, direction: .clientToServer) == Self.vector)
    }

    @Test func buildingItFromTypedValuesGivesTheSameBytes() throws {
        var sync = RMTPSyncRequestMsg()
        sync.syncTime = 0
        sync.ispolling = false
        sync.isPullSend = true
        let q = try Frame.Query(topic: .pullMsg, targetId: "b10806", messageId: 1, message: sync)
        #expect(try MessageFraming.encode(.query(q), direction: .clientToServer) == Self.vector)
    }

    @Test func streamFramingOfTheVector() throws {
        // byte0 · checksum (byte0 ^ length) · length 25 · the 25 payload bytes.
        let stream = try StreamFraming.encode(MessageFraming.decode(Self.vector, direction: .clientToServer),
                                              direction: .clientToServer)
        #expect(stream == [82, 82 ^ 25, 25] + Self.vector.dropFirst())
        var d = StreamDecoder(direction: .clientToServer)
        #expect(try d.feed(stream) == [try MessageFraming.decode(Self.vector, direction: .clientToServer)])
    }
}
