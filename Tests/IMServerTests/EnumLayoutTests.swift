import Testing
@testable import IMServer

/// `ServerInput` stays small enough to be copied as a loaded value (at 41 bytes Swift copied it
/// whole through a value witness wherever it was switched over outside IMServer).
@Suite("Server enum layout")
struct ServerEnumLayoutTests {
    @Test func inputIsAtMostFiveWords() {
        #expect(MemoryLayout<ServerAPICall>.size <= 32)
        #expect(MemoryLayout<ServerInput>.size <= 40)
        let call = ServerAPICall.banChatroomUser(roomId: "r", userId: "u", durationMs: 5)
        guard case .banChatroomUser(let room, let user, let ms) = call else {
            Issue.record("pattern did not match")
            return
        }
        #expect(room == "r" && user == "u" && ms == 5)
        #expect(call == .banChatroomUser(roomId: "r", userId: "u", durationMs: 5))
    }
}
