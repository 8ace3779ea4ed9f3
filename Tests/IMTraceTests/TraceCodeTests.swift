import IMClient
import IMServer
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMTrace
@testable import IMTraceFormat

/// The stable codes a trace stores for core values live once, next to their types
/// (`ClientTimer.Code`, `AppCallback.TraceKind`, `WorldEventKind`, …): these tests hold the trace
/// format and the run digest to them.
@Suite struct TraceCodeTests {
    /// Every kind family a record can have, with the record kinds it declares.
    static let families: [(String, [UInt16])] = [
        ("WorldEventKind", WorldEventKind.allCases.map(\.rawValue)),
        ("ClientInput.TraceKind", ClientInput.TraceKind.allCases.map(\.rawValue)),
        ("ClientEffect.TraceKind", ClientEffect.TraceKind.allCases.map(\.rawValue)),
        ("AppCallback.TraceKind", AppCallback.TraceKind.allCases.map(\.rawValue)),
        ("ClientNote.TraceKind", ClientNote.TraceKind.allCases.map(\.rawValue)),
        ("ServerInput.TraceKind", ServerInput.TraceKind.allCases.map(\.rawValue)),
        ("ServerEffect.TraceKind", ServerEffect.TraceKind.allCases.map(\.rawValue)),
        ("ServerEvent.TraceKind", ServerEvent.TraceKind.allCases.map(\.rawValue)),
        ("WorldNoteKind", WorldNoteKind.allCases.map(\.rawValue)),
    ]

    @Test func kindFamiliesAreDisjointAndNamedAndLeaveOnlyMetaToTheTrace() {
        var seen: [UInt16: String] = [:]
        for (family, kinds) in Self.families {
            for k in kinds {
                #expect(seen[k] == nil, "kind \(k) is in both \(seen[k] ?? "") and \(family)")
                seen[k] = family
            }
        }
        let named = Set(TraceKinds.all.map(\.kind))
        #expect(Set(seen.keys).isSubset(of: named), "kinds without a name: \(Set(seen.keys).subtracting(named).sorted())")
        // What no core type declares is the trace's own meta records.
        #expect(named.subtracting(seen.keys).sorted() == [192, 193, 194, 195, 196])
    }

    @Test func everyKindOfEveryFamilyHasASampleThatRoundTrips() throws {
        let samples = Samples.all()
        let sampled = Set(samples.map(\.kind))
        for (family, kinds) in Self.families {
            let missing = Set(kinds).subtracting(sampled).sorted()
            #expect(missing.isEmpty, "\(family) kinds without a sample: \(missing)")
        }
        let decoded = try readEntries(try recordedTrace(samples)).dropFirst().map(\.event)
        #expect(decoded == samples)
    }

    @Test func everyTimerCodeRoundTripsThroughATrace() throws {
        #expect(Set(Samples.clientTimers.map(\.code)) == Set(ClientTimer.Code.allCases))
        #expect(Set(Samples.serverTimers.map(\.code)) == Set(ServerTimer.Code.allCases))
        let events: [TraceEvent] = Samples.clientTimers.map { .kernel(.clientTimer(device: 1, $0)) }
            + Samples.serverTimers.map { .kernel(.serverTimer($0)) }
        let decoded = try readEntries(try recordedTrace(events)).dropFirst().map(\.event)
        #expect(decoded == events)
    }

    @Test func aTimerCodeNoTimerHasIsATypedErrorNamingTheField() throws {
        // A kernel serverTimer record whose timer code is 0 (no `ServerTimer.Code`).
        let bytes = try recordedTrace([.unknown(kind: WorldEventKind.serverTimer.rawValue, body: [0])])
        do {
            _ = try readEntries(bytes)
            Issue.record("a timer code 0 decoded")
        } catch {
            #expect("\(error)".contains("server timer"), "\(error)")
        }
    }

    /// The digest and the trace fold the same kind for a kernel event (the trace gives a
    /// room-wide workload event its own kind).
    @Test func kernelRecordKindsAreTheWorldEventKinds() {
        let events: [WorldEvent] = [
            .appStart(device: 0), .script(step: 1, repeatIndex: 0), .deliver(connection: 3, toServer: true),
            .deliver(connection: 3, toServer: false), .connectArrive(connection: 3), .connectComplete(connection: 3),
            .closeNotice(connection: 3, toServer: true, reason: .reset), .closeNotice(connection: 3, toServer: false, reason: .reset),
            .clientTimer(device: 1, .heartbeat), .serverTimer(.offlineExpiry), .workload(user: 2, kind: .burstLike),
            .faultStart(.partition, device: 1), .faultEnd(.partition, device: 1), .serverRestart, .heal, .convergenceCheck, .end,
            .network(device: 1, up: true), .network(device: 1, up: false),
        ]
        #expect(Set(events.map(\.eventKind)) == Set(WorldEventKind.allCases).subtracting([.roomWorkload]))
        for e in events {
            #expect(KernelRecord(e, deviceOf: { _ in 0 }).kind == e.kind, "\(e.eventKind)")
        }
        let room = WorldEvent.workload(user: -1, kind: .burstStart)
        #expect(room.eventKind == .workload)
        #expect(KernelRecord(room, deviceOf: { _ in 0 }).eventKind == .roomWorkload)
    }
}
