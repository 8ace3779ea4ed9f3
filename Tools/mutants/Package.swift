// swift-tools-version: 6.1
import PackageDescription

// The mutant generator for `imsim bench mutants` (Docs/mutants.md). A package of its own so that
// swift-syntax stays out of the root package's build and `swift test`.
let package = Package(
    name: "IMSimMutants",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "imsim-mutants", targets: ["imsim-mutants"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swiftlang/swift-syntax", exact: "603.0.1"),
    ],
    targets: [
        .target(name: "MutantsCore", dependencies: [
            .product(name: "SwiftSyntax", package: "swift-syntax"),
            .product(name: "SwiftParser", package: "swift-syntax"),
            .product(name: "SwiftOperators", package: "swift-syntax"),
        ]),
        .executableTarget(name: "imsim-mutants", dependencies: ["MutantsCore"]),
        .testTarget(name: "MutantsCoreTests", dependencies: ["MutantsCore"]),
    ]
)
