import Testing
@testable import SimKernel

@Suite struct TimeTests {
    @Test func formatting() {
        #expect(SimTime(nanoseconds: 41_250_000_000).description == "41.250s")
        #expect(SimTime.zero.description == "0.000s")
        #expect(SimTime(nanoseconds: 1_500_000).description == "0.001s")
        #expect(SimTime(nanoseconds: 41_250_000_123).preciseDescription == "41.250000123s")
        #expect(SimDuration.milliseconds(250).description == "250ms")
        #expect(SimDuration.hours(2).description == "2h")
        #expect(SimDuration.seconds(90).description == "1m30s")
        #expect(SimDuration.milliseconds(41_250).description == "41.250s")
        #expect(SimDuration.microseconds(1500).description == "1.500ms")
        #expect(SimDuration.nanoseconds(7).description == "7ns")
        #expect(SimDuration.zero.description == "0s")
        #expect(SimTime(nanoseconds: 2_999_999).milliseconds == 2)
        #expect(SimTime(nanoseconds: -1).milliseconds == -1)
    }

    @Test(arguments: [
        ("250ms", 250_000_000), ("41.25s", 41_250_000_000), ("2h", 7_200_000_000_000),
        ("1h30m", 5_400_000_000_000), ("500us", 500_000), ("10ns", 10), ("1d", 86_400_000_000_000),
        ("0.5ms", 500_000), ("1m30s", 90_000_000_000), (" 3s ", 3_000_000_000), ("-2s", -2_000_000_000),
        ("0s", 0), (".5s", 500_000_000),
    ] as [(String, Int64)])
    func parsing(text: String, ns: Int64) throws {
        #expect(try SimDuration(parsing: text).nanoseconds == ns)
    }

    @Test(arguments: ["", "5", "5x", "ms", "1.s", "1.5ns", "99999999999999999999s", "1h-", "s5"])
    func parseErrorsNameThePosition(text: String) {
        #expect(throws: DurationParseError.self) { try SimDuration(parsing: text) }
    }

    @Test func parseErrorMessage() {
        do {
            _ = try SimDuration(parsing: "12parsecs")
            Issue.record("should fail")
        } catch {
            #expect(error.position == 2)
            #expect(error.description.contains("unknown unit 'parsecs'"))
        }
    }

    @Test func roundTripThroughDescription() throws {
        var r = RandomStream(seed: 1)
        for _ in 0..<2000 {
            let d = SimDuration(nanoseconds: r.uniform(0...86_400_000_000_000))
            #expect(try SimDuration(parsing: d.description) == d)
        }
    }
}
