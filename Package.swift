// swift-tools-version:6.0
// The Swift SDK for Cipher Station clients. See DESIGN in README.md for the module graph:
// data flows downward, and a target imports only from the layers below it.
import PackageDescription

let package = Package(
    name: "swift-cipher-station",
    products: [
        .library(name: "PQCrypto", targets: ["PQCrypto"]),
        .executable(name: "cipher-bench", targets: ["CipherBench"]),
        .executable(name: "post-quantum-tour", targets: ["PostQuantumTour"]),
    ],
    targets: [
        // Layer 1: pure-Swift post-quantum primitives (Keccak, ML-KEM-768, ML-DSA-65).
        .target(name: "PQCrypto"),

        // Benchmarks (run with `swift run -c release cipher-bench`).
        .executableTarget(
            name: "CipherBench",
            dependencies: ["PQCrypto"],
            path: "Benchmarks/CipherBench"
        ),

        // Examples: one runnable program per step (see Examples/).
        .executableTarget(name: "PostQuantumTour", dependencies: ["PQCrypto"], path: "Examples/PostQuantumTour"),

        // Tests. TestSupport holds hex helpers and the runner for the Python interop halves.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "PQCryptoTests",
            dependencies: ["PQCrypto", "TestSupport"],
            resources: [.copy("Resources")]
        ),
        .testTarget(name: "ExampleTests", dependencies: ["PostQuantumTour", "TestSupport"]),
    ]
)
