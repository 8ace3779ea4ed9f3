// swift-tools-version: 6.1
import PackageDescription

// Layout and dependency direction: see Docs/architecture.md (DESIGN.md).
// SimKernel ← IMWire ← IMStore ← IMClient/IMServer ← IMWorld ← IMTrace/IMReplay ← IMRuntime ← imsim
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
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CZstd", path: "Sources/CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CPcap", path: "Sources/CPcap", providers: [.apt(["libpcap-dev"])]),

        .target(name: "SimKernel", dependencies: [heap]),
        .target(name: "IMWire", dependencies: ["SimKernel", protobuf], exclude: ["Proto/rmtp.proto"]),
        // Simulated storage for SQLite (issue 28): a VFS with written vs synced state per device.
        .target(name: "CSimVFS", dependencies: ["CSQLite"]),
        .target(name: "IMStore", dependencies: ["IMWire", "CSQLite", "CSimVFS"]),
        .target(name: "IMClient", dependencies: ["IMWire", "IMStore"]),
        .target(name: "IMServer", dependencies: ["IMWire"]),
        .target(name: "IMWorld", dependencies: ["SimKernel", "IMWire", "IMStore", "IMClient", "IMServer"]),
        .target(name: "CCRC32C"),
        .target(name: "IMTrace", dependencies: ["SimKernel", "IMWorld", "CZstd", "CCRC32C"]),
        .target(name: "IMReplay", dependencies: ["IMWorld", "IMTrace", "CZstd"]),
        // The real runtime: the same cores over TCP (SwiftNIO), real clocks; outside the determinism rules.
        .target(name: "IMRuntime", dependencies: ["IMClient", "IMServer", "IMStore", "IMWire", "IMReplay", nioCore, nioPosix, crypto]),
        // Production traffic (pcap/pcapng via libpcap, browser HAR) → captures; only the CLI links it.
        .target(name: "IMImport", dependencies: ["IMWire", "IMClient", "IMStore", "IMReplay", "CPcap", protobuf]),
        .target(name: "IMSim", dependencies: ["SimKernel", "IMWire", "IMStore", "IMClient", "IMServer", "IMWorld", "IMTrace", "IMReplay", "IMRuntime"]),

        .executableTarget(
            name: "IMSimCLI",
            dependencies: ["IMSim", "IMImport", argumentParser, nioCore, nioPosix],
            path: "Tools/imsim"
        ),

        .testTarget(name: "SimKernelTests", dependencies: ["SimKernel", propertyBased]),
        .testTarget(name: "IMWireTests", dependencies: ["IMWire", propertyBased]),
        .testTarget(name: "IMStoreTests", dependencies: ["IMStore", propertyBased]),
        .testTarget(name: "IMClientTests", dependencies: ["IMClient"]),
        .testTarget(name: "IMServerTests", dependencies: ["IMServer"]),
        .testTarget(name: "IMWorldTests", dependencies: ["IMWorld", propertyBased]),
        .testTarget(name: "IMTraceTests", dependencies: ["IMTrace"]),
        .testTarget(name: "IMReplayTests", dependencies: ["IMReplay"]),
        .testTarget(name: "IMRuntimeTests", dependencies: ["IMRuntime", "IMReplay", "IMWorld"]),
        .testTarget(name: "IMImportTests", dependencies: ["IMImport", "IMReplay", "IMRuntime", "IMWire", "IMClient", "IMServer", "IMStore", "SimKernel", nioCore, nioPosix]),
        .testTarget(name: "EndToEndTests", dependencies: ["IMSim", propertyBased]),
    ]
)
