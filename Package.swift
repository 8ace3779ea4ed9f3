// swift-tools-version: 6.1
import PackageDescription

// Layout and dependency direction: the graph is in Docs/architecture.md. In short: SimKernel and
// IMWire (neither imports the other) ← IMStore ← IMClient; IMServer needs no store; the cores ←
// IMWorld ← IMTrace, IMReplay; IMCapture (no simulator) ← IMReplay, IMRuntime, IMImport;
// the cores and IMWorldValues ← IMTraceFormat (no simulator) ← IMTrace, IMRuntime;
// everything ← IMSim, Benchmarks ← imsim.
let heap = Target.Dependency.product(name: "HeapModule", package: "swift-collections")
let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let protobuf = Target.Dependency.product(name: "SwiftProtobuf", package: "swift-protobuf")
let propertyBased = Target.Dependency.product(name: "PropertyBased", package: "swift-property-based")
// Only the two NIO products the runtime needs (CI builds on 2 cores).
let nioCore = Target.Dependency.product(name: "NIOCore", package: "swift-nio")
let nioPosix = Target.Dependency.product(name: "NIOPosix", package: "swift-nio")
// HMAC-SHA256 login tokens in the runtime (issue 23); not in the cores.
let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")

let package = Package(
    name: "IMSim",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "imsim", targets: ["IMSimCLI"]),
        .library(name: "IMSim", targets: ["IMSim"]),
        .library(name: "SimKernel", targets: ["SimKernel"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // SQLite itself, a pinned release built with the project (Docs/store.md "Which SQLite"):
        // Tools/setup.sh fetches the amalgamation. Debian's build options that change what SQLite
        // does (the extensions IMSim does not use are left out); -O2 in debug builds too, so tests
        // do not run an unoptimised database.
        .target(name: "CSQLite", cSettings: sqliteSettings),
        .systemLibrary(name: "CZstd", path: "Sources/CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CPcap", path: "Sources/CPcap", providers: [.apt(["libpcap-dev"])]),

        .target(name: "SimKernel"),
        .target(name: "IMWire", dependencies: [protobuf], exclude: ["Proto/rmtp.proto"]),
        // Simulated storage for SQLite (issue 28): a VFS with written vs synced state per device.
        .target(name: "CSimVFS", dependencies: ["CSQLite"]),
        .target(name: "IMStore", dependencies: ["SimKernel", "IMWire", "CSQLite", "CSimVFS"]),
        .target(name: "IMClient", dependencies: ["SimKernel", "IMWire", "IMStore"]),
        .target(name: "IMServer", dependencies: ["SimKernel", "IMWire"]),
        // The world's value types that traces and reports name (fault kinds, phases, verdicts): no simulator.
        .target(name: "IMWorldValues"),
        .target(name: "IMWorld", dependencies: ["SimKernel", "IMWire", "IMStore", "IMClient", "IMServer", "IMWorldValues"],
                // Issue 30: the oracles' per-event dynamic exclusivity checks were 7% of a quickstart
                // sweep's instructions (release only: debug builds and tests keep checking).
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        .target(name: "CCRC32C"),
        // The one zstd wrapper: the trace's one-shot blocks and the capture's stream.
        .target(name: "IMZstd", dependencies: ["CZstd"]),
        // Trace container, records, reader, writer, the core-value recorder and the views: no simulator.
        .target(name: "IMTraceFormat", dependencies: ["SimKernel", "IMWire", "IMStore", "IMClient", "IMServer", "IMWorldValues", "IMZstd", "CCRC32C"]),
        // The world observer that records a run, and the views that read the ledger.
        .target(name: "IMTrace", dependencies: ["SimKernel", "IMWorld", "IMTraceFormat"]),
        // Capture format, reader, writer and the recording sink: no simulator, so the runtime can record.
        .target(name: "IMCapture", dependencies: ["SimKernel", "IMWire", "IMStore", "IMClient", "IMZstd"]),
        .target(name: "IMReplay", dependencies: ["SimKernel", "IMWire", "IMStore", "IMClient", "IMWorld", "IMCapture"]),
        // The real runtime: the same cores over TCP (SwiftNIO), real clocks; outside the determinism rules.
        .target(name: "IMRuntime", dependencies: ["SimKernel", "IMClient", "IMServer", "IMStore", "IMWire", "IMCapture", "IMTraceFormat", nioCore, nioPosix, crypto]),
        // Production traffic (pcap/pcapng via libpcap, browser HAR) → captures; only the CLI links it.
        .target(name: "IMImport", dependencies: ["SimKernel", "IMWire", "IMClient", "IMStore", "IMCapture", "CPcap", protobuf]),
        .target(name: "IMSim", dependencies: ["SimKernel", "IMWire", "IMStore", "IMClient", "IMServer", "IMWorld", "IMTrace", "IMCapture", "IMReplay", "IMRuntime"]),

        // `imsim bench` workloads and `imsim fuzz` targets: out of the library targets, so the cores
        // carry no benchmark or fuzz code (and the kernel no swift-collections, wanted only by the heap
        // comparison).
        .target(name: "Benchmarks",
                dependencies: ["SimKernel", "IMWire", "IMStore", "IMClient", "IMServer", "IMWorld", "IMTrace", "IMCapture",
                               "IMReplay", "IMRuntime", "IMImport", "IMZstd", heap, protobuf],
                path: "Tools/Benchmarks"),
        .executableTarget(
            name: "IMSimCLI",
            dependencies: ["IMSim", "IMImport", "Benchmarks", argumentParser, nioCore, nioPosix],
            path: "Tools/imsim"
        ),

        // What the tests that run the `imsim` binary or need a private directory share.
        .target(name: "IMSimTestSupport", path: "Tests/Support"),
        .testTarget(name: "SimKernelTests", dependencies: ["SimKernel", "Benchmarks", "IMSimTestSupport", propertyBased]),
        .testTarget(name: "IMWireTests", dependencies: ["IMWire", "SimKernel", "Benchmarks", propertyBased]),
        .testTarget(name: "IMStoreTests", dependencies: ["IMStore", "Benchmarks", "IMSimTestSupport", propertyBased]),
        .testTarget(name: "IMClientTests", dependencies: ["IMClient"]),
        .testTarget(name: "IMServerTests", dependencies: ["IMServer", "Benchmarks"]),
        .testTarget(name: "IMWorldTests", dependencies: ["IMWorld", "IMSimTestSupport", propertyBased]),
        .testTarget(name: "IMTraceTests", dependencies: ["IMTrace", "IMTraceFormat", "IMSimTestSupport"]),
        .testTarget(name: "IMReplayTests", dependencies: ["IMReplay", "IMCapture"]),
        .testTarget(name: "IMRuntimeTests", dependencies: ["IMRuntime", "IMCapture", "IMReplay", "IMWorld"]),
        .testTarget(name: "IMImportTests", dependencies: ["IMImport", "Benchmarks", "IMCapture", "IMReplay", "IMRuntime", "IMWire", "IMClient", "IMServer", "IMStore", "SimKernel", nioCore, nioPosix]),
        .testTarget(name: "EndToEndTests", dependencies: ["IMSim", propertyBased]),
    ]
)

/// Debian bookworm's libsqlite3 options that matter to IMSim (`PRAGMA compile_options`), so the
/// move from the system library changed the version and nothing else.
var sqliteSettings: [CSetting] { [
    .define("SQLITE_THREADSAFE", to: "1"),
    .define("SQLITE_SECURE_DELETE"),
    .define("SQLITE_OMIT_LOOKASIDE"),
    .define("SQLITE_USE_URI", to: "1"),
    .define("SQLITE_MAX_SCHEMA_RETRY", to: "25"),
    .define("SQLITE_MAX_VARIABLE_NUMBER", to: "250000"),
    .define("SQLITE_LIKE_DOESNT_MATCH_BLOBS"),
    .define("SQLITE_DEFAULT_SECTOR_SIZE", to: "4096"),
    .define("SQLITE_DEFAULT_PCACHE_INITSZ", to: "20"),
    .define("SQLITE_ENABLE_MATH_FUNCTIONS"),
    .define("SQLITE_ENABLE_COLUMN_METADATA"),
    .define("HAVE_ISNAN"),
    .define("SQLITE_TEMP_STORE", to: "1"),
    .unsafeFlags(["-O2", "-fno-strict-aliasing", "-w"]),
] }
