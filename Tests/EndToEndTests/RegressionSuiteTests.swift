import Testing
@testable import IMSim

/// The golden suite: every entry's ledger (what each device's user saw) must equal the blessed
/// one. A digest change with the same ledger is behaviour-neutral: reported, not a failure.
/// Re-bless deliberately with `imsim regress --bless`.
@Suite struct RegressionSuiteTests {
    @Test func goldenLedgersAreUnchanged() throws {
        let suite = try RegressionSuite()
        #expect(!suite.entries.isEmpty)
        for e in suite.entries {
            let r = suite.run(e)
            switch r.outcome {
            case .identical:
                break
            case .behaviourNeutral(let old, let new):
                print("≈ \(e.name): behaviour-neutral change (ledger identical, digest \(old) → \(new))")
            case .ledgerChanged(let lines):
                Issue.record(Comment(rawValue: "\(e.name): what users saw changed:\n\(lines.joined(separator: "\n"))"))
            case .newEntry:
                Issue.record("\(e.name): no blessed ledger; run `imsim regress --bless`")
            case .failed(let why):
                Issue.record("\(e.name): \(why)")
            }
        }
    }

    @Test func aChangedLedgerIsReported() throws {
        let suite = try RegressionSuite()
        var e = try #require(suite.entries.first { $0.name == "pair-reset" })
        // Same scenario, another seed: a different history is a ledger change, not "neutral".
        e.seed = 2
        if case .ledgerChanged(let lines) = suite.run(e).outcome {
            #expect(!lines.isEmpty)
        } else {
            Issue.record("expected a ledger change for a different seed")
        }
    }

    @Test("the summary names behaviour-neutral entries apart from the unchanged ones")
    func summaryCountsNeutralApart() {
        #expect(RegressionSuite.summary([.identical, .identical]) == "2 entries: 2 unchanged, 0 changed, 0 failed")
        #expect(RegressionSuite.summary([.identical, .behaviourNeutral(old: "a", new: "b"), .ledgerChanged(["x"]), .failed("y")])
                == "4 entries: 2 unchanged (1 behaviour-neutral: digest moved, --bless to accept), 1 changed, 1 failed")
    }
}
