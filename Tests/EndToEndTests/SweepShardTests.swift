import Foundation
import Testing
@testable import IMSim

/// Sweeps split into shards (Docs/cluster.md): the shard arithmetic, the result file (resume after
/// a kill, disk full), and merging shard files that are duplicated, missing or damaged.
@Suite struct SweepShardTests {
    // MARK: - Shard arithmetic

    @Test(arguments: ["1..1", "5..17", "0..0,3..10,100", "1..1000", "18446744073709551610..18446744073709551615", "7,3,9..12"])
    func everySeedInExactlyOneShard(_ text: String) throws {
        let all = try SeedSelection(parsing: text).seeds
        for n in [1, 2, 3, 7, 13, all.count, all.count + 3] {
            var seen: [UInt64: Int] = [:]
            var sizes: [Int] = []
            for i in 0..<n {
                let part = try SeedSelection(parsing: text, shard: "\(i)/\(n)").seeds
                sizes.append(part.count)
                for s in part { seen[s, default: 0] += 1 }
                // A shard keeps the order of the whole list.
                let positions = part.map { s in all.firstIndex(of: s)! }
                #expect(positions == positions.sorted(), "\(text) shard \(i)/\(n) out of order")
            }
            #expect(seen.keys.sorted() == all.sorted(), "\(text) in \(n) shards: seeds lost or invented")
            #expect(seen.values.allSatisfy { $0 == 1 }, "\(text) in \(n) shards: a seed in two shards")
            #expect(sizes.max()! - sizes.min()! <= 1, "\(text) in \(n) shards: unbalanced \(sizes)")
        }
    }

    @Test(arguments: ["3/3", "-1/2", "0/0", "1", "a/4", "1/2/3", "env/4"])
    func badShardsAreRejected(_ shard: String) {
        #expect(throws: SeedSelectionError.self) { try SeedSelection(parsing: "1..10", shard: shard) }
    }

    // MARK: - Real seed lines (quickstart, B4 on, cut at 3 s: some seeds fail before, some pass)

    static let header = SweepHeader(scenario: "quickstart", scenarioArgument: "quickstart", scenarioDigest: "d", build: "test",
                                    bugs: ["B4"], swarm: true, until: "3s", seeds: "1..9", shard: 0, shards: 1)

    static let lines: [SweepSeedLine] = {
        var (sc, _) = try! Scenario.load(pathOrName: "quickstart")
        sc.swarm = true
        sc = sc.withBugs([.B4])
        return (1...9).map { seed in
            var opts = OracleOptions(scenarioArgument: "quickstart --swarm --bugs B4")
            opts.stopAtFirstViolation = true
            let run = try! ScenarioRun(scenario: sc, seed: UInt64(seed), scenarioArgument: "quickstart", oracles: opts)
            run.run(until: SimTime.zero + .seconds(3))
            return SweepSeedLine(SweepResult(seed: UInt64(seed), run: run, wallSeconds: 0))
        }
    }()

    static func shardFile(_ i: Int, of n: Int) -> (name: String, bytes: [UInt8]) {
        var h = header
        h.shard = i
        h.shards = n
        let want = Set(try! h.expectedSeeds())
        return (SweepHeader.fileName(shard: i, shards: n), SweepResultFile.render(header: h, lines: lines.filter { want.contains($0.seed) }))
    }

    @Test func seedLinesAreRealVerdicts() {
        // The fixture must hold both outcomes, or the merge tests below prove little.
        #expect(Self.lines.contains { $0.outcome == .fail })
        #expect(Self.lines.contains { $0.outcome == .pass })
        #expect(Set(Self.lines.map(\.digest)).count == Self.lines.count)
    }

    // MARK: - Merge

    @Test func mergeInAnyOrderWithDuplicatesEqualsTheUnshardedSweep() throws {
        let files = [Self.shardFile(2, of: 4), Self.shardFile(0, of: 4), Self.shardFile(3, of: 4), Self.shardFile(1, of: 4)]
        var copy = Self.shardFile(1, of: 4)
        copy.name = "shard-0001-of-0004 (copy).jsonl"
        let m = SweepMerge(files: files + [copy])
        #expect(m.complete)
        #expect(m.missing.isEmpty)
        #expect(m.duplicates == ["shard-0001-of-0004.jsonl"] || m.duplicates == ["shard-0001-of-0004 (copy).jsonl"])
        #expect(m.lines.map(\.seed) == Array(1...9))
        #expect(m.render() == SweepResultFile.render(header: Self.header, lines: Self.lines))
    }

    @Test func missingShardIsNamed() {
        let m = SweepMerge(files: [Self.shardFile(0, of: 3), Self.shardFile(2, of: 3)])
        #expect(!m.complete)
        #expect(m.missing == [1])
        #expect(m.render() == nil)
        // The manifest knows the count even when the last shards never wrote anything.
        var expected = Self.header
        expected.shards = 5
        let m2 = SweepMerge(files: [Self.shardFile(0, of: 5)], expected: expected)
        #expect(m2.missing == [1, 2, 3, 4])
    }

    @Test func partialShardIsMissingNotMerged() {
        var p = Self.shardFile(1, of: 3)
        let text = String(decoding: p.bytes, as: UTF8.self).split(separator: "\n")
        p = (p.name + ".partial", Array((text.dropLast(2).joined(separator: "\n") + "\n").utf8))
        let m = SweepMerge(files: [Self.shardFile(0, of: 3), Self.shardFile(2, of: 3), p])
        #expect(m.missing == [1])
        #expect(m.shards[1] == .partial)
        #expect(!m.lines.contains { $0.seed == 2 })
    }

    @Test func corruptShardsAreNamed() {
        let good0 = Self.shardFile(0, of: 3), good2 = Self.shardFile(2, of: 3)
        var torn = Self.shardFile(1, of: 3)
        torn.bytes = Array(torn.bytes.prefix(torn.bytes.count - 7))
        let m = SweepMerge(files: [good0, torn, good2])
        #expect(m.missing == [1])
        #expect(m.unreadable.map(\.name) == [torn.name])
        #expect(m.unreadable.first?.reason.contains("no newline") == true)

        // An edited seed line: the summary's digest no longer matches.
        var edited = Self.shardFile(1, of: 3)
        let s = String(decoding: edited.bytes, as: UTF8.self)
        let firstLine = Self.lines.first { $0.seed == 2 }!
        edited.bytes = Array(s.replacingOccurrences(of: firstLine.digest, with: String(firstLine.digest.reversed())).utf8)
        let m2 = SweepMerge(files: [good0, edited, good2])
        #expect(m2.unreadable.first?.reason.contains("does not match") == true)
        #expect(m2.missing == [1])

        // Not a result file at all.
        let m3 = SweepMerge(files: [good0, ("shard-0001-of-0003.jsonl", Array("hello\n".utf8)), good2])
        #expect(m3.unreadable.first?.reason.contains("line 1") == true)
    }

    @Test func sameSeedWithDifferentResultsIsAConflict() throws {
        var h = Self.header
        h.shard = 0
        h.shards = 2
        var lines = Self.lines.filter { try! Set(h.expectedSeeds()).contains($0.seed) }
        let a = SweepResultFile.render(header: h, lines: lines)
        lines[0].digest = "0000000000000000"
        let b = SweepResultFile.render(header: h, lines: lines)
        let m = SweepMerge(files: [("shard-0000-of-0002.jsonl", a), ("shard-0000-of-0002.jsonl.bak.jsonl", b), Self.shardFile(1, of: 2)])
        #expect(m.conflicts == [lines[0].seed])
        #expect(!m.complete)
    }

    @Test func anotherBuildIsNotMergedIn() {
        var f = Self.shardFile(1, of: 2)
        f.bytes = Array(String(decoding: f.bytes, as: UTF8.self).replacingOccurrences(of: "\"build\":\"test\"", with: "\"build\":\"other\"").utf8)
        let m = SweepMerge(files: [Self.shardFile(0, of: 2), f])
        #expect(m.missing == [1])
        #expect(m.unreadable.first?.reason.contains("another sweep") == true)
    }

    // MARK: - The result file: resume, kill, disk full

    static func tempDir(_ name: String) -> String {
        let d = NSTemporaryDirectory() + "imsim-sweep-test-\(ProcessInfo.processInfo.processIdentifier)-\(name)"
        try? FileManager.default.removeItem(atPath: d)
        return d
    }

    @Test func resumeAfterAKillRunsNoSeedTwiceAndLosesNone() throws {
        let dir = Self.tempDir("resume")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let w = try SweepResultWriter(directory: dir, header: Self.header)
            for l in Self.lines.prefix(4) { try w.record(l) }
            // Killed here: no finish; a write cut in the middle of the fifth line.
        }
        let partial = dir + "/results.jsonl.partial"
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: partial))
        h.seekToEndOfFile()
        h.write(Data(SweepResultFile.jsonLine(Self.lines[4]).utf8.prefix(25)))
        try h.close()

        let w = try SweepResultWriter(directory: dir, header: Self.header)
        #expect(w.done.keys.sorted() == Self.lines.prefix(4).map(\.seed))
        #expect(w.note?.contains("torn") == true)
        #expect(!w.alreadyComplete)
        for l in Self.lines { try w.record(l) }   // the first four again: ignored
        let bytes = try w.finish()
        let onDisk = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/results.jsonl")))
        #expect(onDisk == bytes)
        #expect(bytes == SweepResultFile.render(header: Self.header, lines: Self.lines))
        #expect(!FileManager.default.fileExists(atPath: partial))
        let parsed = try SweepResultFile.parse(onDisk, partial: false)
        #expect(parsed.lines.map(\.seed) == Array(1...9))

        // Run again: the shard is finished, nothing to do, same bytes.
        let again = try SweepResultWriter(directory: dir, header: Self.header)
        #expect(again.alreadyComplete)
        #expect(try again.finish() == bytes)
    }

    @Test func anotherSweepInTheSameDirectoryStartsOver() throws {
        let dir = Self.tempDir("other")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let w = try SweepResultWriter(directory: dir, header: Self.header)
            try w.record(Self.lines[0])
        }
        var other = Self.header
        other.seeds = "1..20"
        let w = try SweepResultWriter(directory: dir, header: other)
        #expect(w.done.isEmpty)
        #expect(w.note?.contains("starting over") == true)
    }

    @Test func diskFullIsAnErrorAndTheFileStaysResumable() throws {
        let dir = Self.tempDir("full")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var budget = 1500
        let full: SweepResultWriter.WriteCall = { fd, buf in
            guard budget > 0 else { return -Int(ENOSPC) }
            let n = min(budget, buf.count)
            budget -= n
            return SweepResultWriter.posixWrite(fd, UnsafeRawBufferPointer(rebasing: buf[..<n]))
        }
        var recorded = 0
        var caught: SweepIOError?
        do {
            let w = try SweepResultWriter(directory: dir, header: Self.header, write: full)
            for l in Self.lines {
                try w.record(l)
                recorded += 1
            }
            try w.finish()
        } catch {
            caught = error
        }
        #expect(caught?.description.contains("No space left on device") == true)
        #expect(caught?.description.contains("results.jsonl.partial") == true)
        #expect(recorded < Self.lines.count)
        #expect(!FileManager.default.fileExists(atPath: dir + "/results.jsonl"))

        // Space again: the next run keeps the whole lines and finishes.
        let w = try SweepResultWriter(directory: dir, header: Self.header)
        #expect(w.done.count == recorded)
        for l in Self.lines { try w.record(l) }
        #expect(try w.finish() == SweepResultFile.render(header: Self.header, lines: Self.lines))
    }

    @Test func diskFullWhileFinishingLeavesNoHalfFile() throws {
        let dir = Self.tempDir("full-finish")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var calls = 0
        // Lines go through; the finished file's write fails.
        let failLate: SweepResultWriter.WriteCall = { fd, buf in
            calls += 1
            return calls > 1 + Self.lines.count ? -Int(ENOSPC) : SweepResultWriter.posixWrite(fd, buf)
        }
        let w = try SweepResultWriter(directory: dir, header: Self.header, write: failLate)
        for l in Self.lines { try w.record(l) }
        #expect(throws: SweepIOError.self) { try w.finish() }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(names == ["results.jsonl.lock", "results.jsonl.partial"])
    }

    @Test func outThatIsNotADirectory() throws {
        let dir = Self.tempDir("notdir")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SweepResultWriter.makeDirectory(dir)
        let file = dir + "/plain"
        FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        #expect { try SweepResultWriter(directory: file, header: Self.header) } throws: { e in
            (e as? SweepIOError)?.description == "--out \(file): not a directory"
        }
        #expect { try SweepResultWriter(directory: file + "/sub", header: Self.header) } throws: { e in
            (e as? SweepIOError)?.description.contains("\(file) is not a directory") == true
        }
    }

    @Test func oneWriterPerShard() throws {
        let dir = Self.tempDir("lock")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try SweepResultWriter(directory: dir, header: Self.header)
        #expect { try SweepResultWriter(directory: dir, header: Self.header) } throws: { e in
            (e as? SweepIOError)?.description.contains("another process") == true
        }
        _ = first
    }

    // MARK: - Seed bank

    @Test func bankKeepsFailuresAndCountsPasses() {
        var b = SeedBank()
        b.absorb(header: Self.header, lines: Self.lines)
        let fails = Self.lines.filter { $0.outcome == .fail }
        let passes = Self.lines.filter { $0.outcome == .pass }
        #expect(b.entries.map(\.seed).sorted() == fails.map(\.seed).sorted())
        #expect(b.entries.allSatisfy { $0.bugs == ["B4"] && $0.build == "test" && $0.swarm })
        let key = SeedBank.passKey(scenario: "quickstart", scenarioDigest: "d", swarm: true, bugs: ["B4"], until: "3s")
        #expect((b.passed ?? [:])[key, default: 0] == passes.count)
        // The same failures again: kept once.
        b.absorb(header: Self.header, lines: Self.lines)
        #expect(b.entries.count == fails.count)
        // A failing seed that passes later (a fix) leaves the bank.
        if let f = fails.first {
            var fixed = f
            fixed.outcome = .pass
            b.absorb(header: Self.header, lines: [fixed])
            #expect(!b.entries.contains { $0.seed == f.seed })
        }
    }
}
