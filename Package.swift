// swift-tools-version:6.0
// The Swift SDK for Cipher Station clients. See DESIGN in README.md for the module graph:
// data flows downward, and a target imports only from the layers below it.
import PackageDescription

let package = Package(
    name: "swift-cipher-station",
    products: [
        .library(name: "PQCrypto", targets: ["PQCrypto"]),
        .library(name: "Transport", targets: ["Transport"]),
        .library(name: "CurlTransport", targets: ["CurlTransport"]),
        .executable(name: "cipher-bench", targets: ["CipherBench"]),
    ],
    targets: [
        // Layer 1: pure-Swift post-quantum primitives (Keccak, ML-KEM-768, ML-DSA-65).
        .target(name: "PQCrypto"),

        // Layer 0: libcurl, with fixed-arity shims for its variadic setopt/getinfo calls.
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Layer 1: the HTTPTransport protocol, request/response types, multipart bodies.
        .target(name: "Transport"),
        // Layer 2: HTTPTransport over libcurl (multi loop on its own thread, TLS pinning).
        .target(name: "CurlTransport", dependencies: ["Transport", "CCurl"]),

        // Benchmarks (run with `swift run -c release cipher-bench`).
        .executableTarget(
            name: "CipherBench",
            dependencies: ["PQCrypto", "CurlTransport", "TransportTestSupport"],
            path: "Benchmarks/CipherBench"
        ),

        // Tests. TestSupport holds hex helpers and the runner for the Python interop halves.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "PQCryptoTests",
            dependencies: ["PQCrypto", "TestSupport"],
            resources: [.copy("Resources")]
        ),
        // A loopback HTTP/1.1 server over POSIX sockets, and openssl helpers, for transport tests.
        .target(name: "TransportTestSupport", path: "Tests/TransportTestSupport"),
        .testTarget(
            name: "TransportTests",
            dependencies: ["Transport", "TestSupport"],
            resources: [.copy("Resources")]
        ),
        .testTarget(
            name: "CurlTransportTests",
            dependencies: ["CurlTransport", "Transport", "TransportTestSupport", "TestSupport"]
        ),
    ]
)
