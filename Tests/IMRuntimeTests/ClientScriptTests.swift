import IMRuntime
import IMWire
import SimKernel
import Testing

@Suite("Client script format")
struct ClientScriptTests {
    @Test("steps: after is relative, at absolute; defaults filled in")
    func parses() throws {
        let s = try ClientScript.parse("""
            [{"after": "1s", "action": "send", "to": "private:bob", "text": "hi", "count": 3, "interval": "200ms"},
             {"after": "500ms", "action": "join", "room": "lobby"},
             {"at": "5s", "action": "network", "state": "none"},
             {"action": "network", "state": "wifi"},
             {"after": "1s", "action": "read", "conversation": "private:bob"},
             {"after": "1s", "action": "wait"}]
            """)
        #expect(s.steps.map(\.at) == [.seconds(1), .milliseconds(1900), .seconds(5), .seconds(5), .seconds(6), .seconds(7)])
        #expect(s.steps[0].action == .send(to: ConversationKey(.privateChat, "bob"), objectName: "RC:TxtMsg", text: "hi", content: nil,
                                           count: 3, interval: .milliseconds(200), mention: false))
        #expect(s.steps[1].action == .join(room: "lobby", count: 10))
        #expect(s.steps[2].action == .network("none"))
        #expect(s.duration == .seconds(7))
    }

    @Test("a send's repeats count in the duration, and \"after\" counts from the last repeat")
    func durationCountsRepeats() throws {
        let s = try ClientScript.parse("""
            [{"at": "1s", "action": "send", "to": "group:g1", "text": "x", "count": 11, "interval": "1s"},
             {"after": "500ms", "action": "wait"}]
            """)
        #expect(s.steps.map(\.at) == [.seconds(1), .milliseconds(11_500)])
        #expect(s.duration == .milliseconds(11_500))
        // "at" may fall inside the repeats of the step before.
        let t = try ClientScript.parse("""
            [{"at": "1s", "action": "send", "to": "group:g1", "text": "x", "count": 11, "interval": "1s"},
             {"at": "2s", "action": "wait"}]
            """)
        #expect(t.steps.map(\.at) == [.seconds(1), .seconds(2)])
        #expect(t.duration == .seconds(11))
    }

    @Test("bad input names the step and the field", arguments: [
        (#"[{"after": "1s", "action": "fly"}]"#, 0, "action"),
        (#"[{"action": "wait"}, {"after": "1x", "action": "wait"}]"#, 1, "after"),
        (#"[{"at": "5s", "action": "wait"}, {"at": "1s", "action": "wait"}]"#, 1, "at"),
        (#"[{"action": "send", "to": "bob", "text": "x"}]"#, 0, "to"),
        (#"[{"action": "send", "to": "private:bob", "txt": "x"}]"#, 0, "txt"),
        (#"[{"action": "send", "to": "private:bob", "count": 0}]"#, 0, "count"),
        (#"[{"action": "network", "state": "5g"}]"#, 0, "state"),
        (#"[{"action": "join"}]"#, 0, "room"),
        (#"[{"action": "wait", "after": "1s", "at": "2s"}]"#, 0, "at"),
        (#"[{"action": "send", "to": "private:bob", "mention": "yes"}]"#, 0, "mention"),
    ])
    func errors(text: String, step: Int, field: String) {
        #expect(throws: RuntimeError.self) { try ClientScript.parse(text, path: "s.json") }
        do {
            _ = try ClientScript.parse(text, path: "s.json")
        } catch {
            guard case .script(let path, let s, let f, _) = error else { Issue.record("wrong error \(error)"); return }
            #expect(path == "s.json")
            #expect(s == step)
            #expect(f == field)
        }
    }

    @Test("not JSON, or not an array: an error without a step")
    func notAScript() {
        // A repeated key is refused by the strict JSON parser (with its byte offset).
        for text in ["[{", "{\"steps\": []}", "", #"[{"action": "wait", "action": "wait"}]"#] {
            do {
                _ = try ClientScript.parse(text)
                Issue.record("parsed \(text)")
            } catch {
                guard case .script(_, let s, _, _) = error else { Issue.record("wrong error"); continue }
                #expect(s == nil)
            }
        }
    }
}
