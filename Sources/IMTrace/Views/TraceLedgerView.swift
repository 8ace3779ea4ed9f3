import Foundation
import IMWorld

/// The ledger a recorder stored at the end of a trace (`imsim trace ledger`).
public enum TraceLedgerView {
    public struct Found: Sendable {
        public var ledger: Ledger
        /// The run reached the end of its liveness phase (false: stopped early, e.g. `--until`
        /// or a violation; the ledger is the state at the stop).
        public var complete: Bool
    }

    /// Reads the ledger records (other records are skipped without decoding their bodies).
    public static func read(_ reader: TraceReader) throws(TraceViewError) -> Found {
        let epoch = reader.header.option("epochMs").flatMap { Int64($0) } ?? 0
        var parts: [[UInt8]] = []
        var expected: Int?
        var complete: Bool?
        do {
            while let r = try reader.next() {
                switch r.kind {
                case 195:
                    guard case .meta(.ledger(let p, let n, let json)) = try TraceEvent.decode(r, epochMs: epoch) else { continue }
                    if p == 0 { parts = []; expected = n }
                    guard p == parts.count, n == expected else {
                        throw TraceViewError.badLedger("ledger part \(p) of \(n) out of sequence at record \(r.index)")
                    }
                    parts.append(json)
                case 196:
                    if case .meta(.runEnd(_, _, let c, _)) = try TraceEvent.decode(r, epochMs: epoch) { complete = c }
                default:
                    continue
                }
            }
        } catch let e as TraceViewError {
            throw e
        } catch let e as TraceError {
            throw .trace(e)
        } catch {
            throw .badLedger("\(error)")
        }
        guard let n = expected else {
            let why = reader.footer == nil
                ? "the trace is unfinished (the run was killed or crashed before it ended)"
                : "the recorder did not write one"
            throw .noLedger(reason: why)
        }
        guard parts.count == n else { throw .badLedger("\(parts.count) of \(n) ledger parts present") }
        do {
            let ledger = try Ledger.parse(Data(parts.joined()))
            return Found(ledger: ledger, complete: complete ?? true)
        } catch {
            throw .badLedger("JSON: \(error)")
        }
    }
}
