// swift-tools-version:6.2
// The Swift SDK for Cipher Station clients. See "Architecture" in README.md for the module graph:
// data flows downward, and a target imports only from the layers below it.
import PackageDescription

// Where libcurl's header is: Linux and Android (libcurl4-openssl-dev and the like) and macOS, whose
// SDK ships /usr/include/curl. The iOS, tvOS, watchOS and visionOS SDKs have no <curl/curl.h>: there
// every edge to `CCurl` and `CurlTransport` is left out, `CurlTransport` compiles to an empty module,
// and what uses it is guarded by `#if canImport(CCurl)`, so the whole package (tests, examples and
// benchmarks included) builds for them. libsodium and libcrypto are in no Apple SDK (not even
// macOS's: Homebrew's would not ship in an app), so `CSodium` and `CLibCrypto` are Linux/Android only.
// scripts/check_apple_dependencies.py holds every target to this.
let curlPlatforms: [Platform] = [.linux, .android, .macOS]

// Every library target that calls a required-reason API of Apple's (the file-timestamp ones: fstat,
// attributesOfItem, .modificationDate) ships a privacy manifest, `PrivacyInfo.xcprivacy`, which
// travels into the app; scripts/check_privacy_manifests.py holds them to the code.

extension Target.Dependency {
    /// An edge to `CurlTransport` or `CCurl`, on the platforms where libcurl is (`curlPlatforms`).
    static func whereCurlIs(_ name: String) -> Target.Dependency {
        .target(name: name, condition: .when(platforms: curlPlatforms))
    }
}

let package = Package(
    name: "swift-cipher-station",
    // The floor: iOS 16 / macOS 13, where apps still need a pure-Swift ML-KEM and ML-DSA (CryptoKit
    // has them from OS 26). scripts/check_availability.py holds the sources to it.
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "PQCrypto", targets: ["PQCrypto"]),
        .library(name: "SHA2", targets: ["SHA2"]),
        .library(name: "ClassicalCrypto", targets: ["ClassicalCrypto"]),
        .library(name: "Envelope", targets: ["Envelope"]),
        .library(name: "Signing", targets: ["Signing"]),
        .library(name: "OrderedJSON", targets: ["OrderedJSON"]),
        .library(name: "ContentAddressing", targets: ["ContentAddressing"]),
        .library(name: "Manifest", targets: ["Manifest"]),
        .library(name: "Transport", targets: ["Transport"]),
        .library(name: "CurlTransport", targets: ["CurlTransport"]),
        .library(name: "URLSessionTransport", targets: ["URLSessionTransport"]),
        .library(name: "StationClient", targets: ["StationClient"]),
        .library(name: "DriveSync", targets: ["DriveSync"]),
        .library(name: "StationEmulator", targets: ["StationEmulator"]),
        .library(name: "LoopbackHTTP", targets: ["LoopbackHTTP"]),
        .library(name: "HTTPTransportConformance", targets: ["HTTPTransportConformance"]),
        .executable(name: "cipher-station-emulator", targets: ["CipherStationEmulator"]),
        .executable(name: "cipher-bench", targets: ["CipherBench"]),
        .executable(name: "station-client-bench", targets: ["StationClientBench"]),
        .executable(name: "post-quantum-tour", targets: ["PostQuantumTour"]),
        .executable(name: "cipher", targets: ["CipherCLI"]),
        .executable(name: "pair-device", targets: ["PairDevice"]),
        .executable(name: "sign-request", targets: ["SignRequest"]),
        .executable(name: "read-manifest", targets: ["ReadManifest"]),
        .executable(name: "open-envelope", targets: ["OpenEnvelope"]),
        .executable(name: "publish-post", targets: ["PublishPost"]),
        .executable(name: "two-clients", targets: ["TwoClients"]),
        .executable(name: "read-followed", targets: ["ReadFollowed"]),
    ],
    traits: [
        // On by default. On Linux (and Android) the classical primitives then run in the system's
        // libsodium and libcrypto, and the default transport is libcurl's. Without it
        // (`--disable-default-traits`) the package builds as Apple platforms always get it: the
        // pure-Swift primitives and `URLSessionTransport`, linking no system library.
        .trait(
            name: "SystemLibraries",
            description: "On Linux and Android: libsodium and libcrypto for the classical primitives, libcurl as the default transport."
        ),
        .default(enabledTraits: ["SystemLibraries"]),
    ],
    targets: [
        // Layer 0: the getrandom(2) declaration (a header only; nothing is linked).
        .systemLibrary(name: "CSystemRandom", path: "Sources/CSystemRandom"),
        // add_key(2)/keyctl(2) wrappers for the `cipher` session unlock (Linux; empty elsewhere).
        .systemLibrary(name: "CKeyring", path: "Sources/CKeyring"),
        // Layer 1: pure-Swift post-quantum primitives (Keccak, ML-KEM-768, ML-DSA-65).
        .target(name: "PQCrypto", dependencies: ["CSystemRandom"]),

        // Layer 0: libcurl, with fixed-arity shims for its variadic setopt/getinfo calls.
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Layer 2: the HTTPTransport protocol, request/response types, multipart bodies (TLS key
        // fingerprints hash with SHA2).
        .target(name: "Transport", dependencies: ["SHA2"], resources: [.copy("PrivacyInfo.xcprivacy")]),
        // Layer 3: an HTTP/1.1 server on 127.0.0.1 (POSIX sockets, a thread per connection) with
        // deterministic test content, for the emulator, the conformance suite, tests and benchmarks.
        .target(name: "LoopbackHTTP", dependencies: ["Transport"], resources: [.copy("PrivacyInfo.xcprivacy")]),
        // Layer 2: HTTPTransport over libcurl (multi loop on its own thread, TLS pinning); an empty
        // module where libcurl is absent (iOS, tvOS, watchOS, visionOS).
        .target(name: "CurlTransport", dependencies: ["Transport", .whereCurlIs("CCurl")], resources: [.copy("PrivacyInfo.xcprivacy")]),
        // Layer 2: HTTPTransport over URLSession (Darwin's, or FoundationNetworking on Linux).
        .target(name: "URLSessionTransport", dependencies: ["Transport"], resources: [.copy("PrivacyInfo.xcprivacy")]),

        // Layer 0, Linux/Android with the SystemLibraries trait: the system libsodium. Layer 1:
        // `ClassicalCrypto`, pure-Swift SecretBox, BLAKE2b, Argon2 and Ed25519 (SHA-256 from SHA2),
        // which runs them in libsodium where it is linked (it takes `PQCrypto.SymmetricKey`
        // for secret keys, so keys are zeroed on drop).
        .systemLibrary(
            name: "CSodium",
            path: "Sources/CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // Layer 0, Linux/Android with the SystemLibraries trait: OpenSSL's libcrypto, for SHA-256
        // with the CPU's SHA extensions (Apple platforms take SHA-256 from CommonCrypto).
        .systemLibrary(
            name: "CLibCrypto",
            path: "Sources/CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // Layer 1: SHA-256, the package's one implementation (libcrypto where linked, CommonCrypto on
        // Apple platforms, pure Swift otherwise).
        .target(
            name: "SHA2",
            dependencies: [
                .target(name: "CLibCrypto", condition: .when(platforms: [.linux, .android], traits: ["SystemLibraries"])),
            ]),
        .target(
            name: "ClassicalCrypto",
            dependencies: [
                "PQCrypto", "SHA2",
                .target(name: "CSodium", condition: .when(platforms: [.linux, .android], traits: ["SystemLibraries"])),
            ],
            resources: [.copy("PrivacyInfo.xcprivacy")]),

        // Layer 2: the KEM-DEM key envelope; signed requests (the station-side verifier is the emulator's).
        .target(name: "Envelope", dependencies: ["PQCrypto", "ClassicalCrypto"]),
        .target(name: "Signing", dependencies: ["PQCrypto", "ClassicalCrypto"]),

        // Layer 1: the order-preserving JSON reader and writer (Python's layouts), the wire coder, and
        // the package's one RFC 3339 reader and writer.
        .target(name: "OrderedJSON"),
        // Layer 2: content addresses: CIDs, multibase, peer ids, varints, Kubo-exact UnixFS CIDs,
        // IPNS records (SHA-256 and Ed25519 from ClassicalCrypto, RFC 3339 times from OrderedJSON).
        .target(name: "ContentAddressing", dependencies: ["ClassicalCrypto", "PQCrypto", "OrderedJSON"]),
        // Layer 3: the station's wire models (profile, public.json, manifest, envelope sets,
        // responses, errors).
        .target(name: "Manifest", dependencies: ["OrderedJSON", "ContentAddressing", "ClassicalCrypto", "PQCrypto"]),

        // Layer 3: the high-level client (pairing, signed calls, listing, publishing, following,
        // endpoint mobility, offline cache). CurlTransport is only its default transport.
        .target(
            name: "StationClient",
            dependencies: [
                "PQCrypto", "ClassicalCrypto", "Envelope", "Signing", "Manifest", "OrderedJSON", "ContentAddressing", "Transport", "URLSessionTransport",
                // The default transport on Linux; Apple platforms default to URLSessionTransport.
                .target(name: "CurlTransport", condition: .when(platforms: [.linux], traits: ["SystemLibraries"])),
            ],
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),

        // Layer 6: two-way sync of a local folder with a namespace of drive posts, on StationClient's
        // public API (its own target: an app that only publishes and lists links none of it).
        .target(
            name: "DriveSync",
            dependencies: ["StationClient", "Manifest", "OrderedJSON", "SHA2", "ClassicalCrypto", "PQCrypto", "Transport"],
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        .testTarget(
            name: "DriveSyncTests",
            dependencies: ["DriveSync", "StationClient", "Manifest", "SHA2", "StationEmulator"]
        ),

        // Layer 3: a Cipher Station on loopback (HTTP/1.1 over POSIX sockets, or in process) for tests.
        .target(
            name: "StationEmulator",
            dependencies: ["PQCrypto", "ClassicalCrypto", "Envelope", "Signing", "Manifest", "OrderedJSON", "ContentAddressing", "Transport", "LoopbackHTTP"]
        ),
        // Layer 3: the behaviour every HTTPTransport promises, as cases any test runner can run
        // against a transport (served by LoopbackHTTP; no test framework, no station).
        .target(name: "HTTPTransportConformance", dependencies: ["Transport", "LoopbackHTTP"], resources: [.copy("PrivacyInfo.xcprivacy")]),
        .executableTarget(
            name: "CipherStationEmulator",
            dependencies: ["StationEmulator", "Signing", "Envelope", "Transport", "PQCrypto", "ClassicalCrypto", "Manifest", "OrderedJSON",
                           "LoopbackHTTP"]
        ),

        // Benchmarks (run with `swift run -c release cipher-bench`).
        .executableTarget(
            name: "CipherBench",
            dependencies: ["PQCrypto", "ClassicalCrypto", "SHA2", "Envelope", "Signing", "Manifest", "OrderedJSON", "ContentAddressing", "Transport",
                           .whereCurlIs("CurlTransport"), "LoopbackHTTP"],
            path: "Benchmarks/CipherBench"
        ),

        // The client against `cipher-station-emulator` in its own process (see its main.swift).
        .executableTarget(
            name: "StationClientBench",
            dependencies: ["StationClient", "DriveSync", .whereCurlIs("CurlTransport"), "URLSessionTransport", "Transport", "Envelope", "Signing",
                           "ClassicalCrypto", "PQCrypto", "Manifest", "OrderedJSON", "ContentAddressing"],
            path: "Benchmarks/StationClientBench"
        ),

        // The `cipher` command-line drive (the `drive` namespace), on StationClient's public API.
        .executableTarget(
            name: "CipherCLI",
            dependencies: [
                "StationClient", "DriveSync", "StationEmulator", "Manifest", "OrderedJSON", "ContentAddressing", "Transport", "PQCrypto", "ClassicalCrypto",
                "CKeyring",
                .target(name: "CurlTransport", condition: .when(platforms: [.linux], traits: ["SystemLibraries"])),
            ]
        ),

        // Examples: one runnable program per step (see Examples/).
        .executableTarget(name: "PostQuantumTour", dependencies: ["ExampleSupport", "PQCrypto"], path: "Examples/PostQuantumTour"),
        // ExampleSupport: the examples' one argument parser (`--help`), the embedded emulator or `--station URL`, and clean-up.
        .target(
            name: "ExampleSupport",
            dependencies: ["StationClient", "StationEmulator", .whereCurlIs("CurlTransport"), "URLSessionTransport", "Transport"],
            path: "Examples/ExampleSupport"
        ),
        .executableTarget(
            name: "PairDevice",
            dependencies: ["ExampleSupport", "StationClient"],
            path: "Examples/PairDevice"
        ),
        .executableTarget(
            name: "SignRequest",
            dependencies: ["ExampleSupport", "StationClient", "Signing", "Transport"],
            path: "Examples/SignRequest"
        ),
        .executableTarget(
            name: "ReadManifest",
            dependencies: ["ExampleSupport", "StationClient", "Manifest", "ContentAddressing"],
            path: "Examples/ReadManifest"
        ),
        .executableTarget(
            name: "OpenEnvelope",
            dependencies: ["ExampleSupport", "StationClient", "Manifest", "OrderedJSON", "Signing", "Envelope", "ClassicalCrypto", "Transport", "PQCrypto"],
            path: "Examples/OpenEnvelope"
        ),
        .executableTarget(
            name: "PublishPost",
            dependencies: ["ExampleSupport", "StationClient", "Manifest"],
            path: "Examples/PublishPost"
        ),
        .executableTarget(
            name: "TwoClients",
            dependencies: ["ExampleSupport", "StationClient", "Manifest"],
            path: "Examples/TwoClients"
        ),
        .executableTarget(
            name: "ReadFollowed",
            dependencies: ["ExampleSupport", "StationClient", "Manifest", "ContentAddressing"],
            path: "Examples/ReadFollowed"
        ),

        // Tests. TestSupport holds hex helpers and the runner for the Python interop halves.
        .target(name: "TestSupport", dependencies: ["LoopbackHTTP", "PQCrypto"], path: "Tests/TestSupport"),
        .testTarget(
            name: "PQCryptoTests",
            dependencies: ["PQCrypto", "TestSupport"],
            resources: [.copy("Resources")]
        ),
        .testTarget(
            name: "ClassicalCryptoTests",
            dependencies: ["ClassicalCrypto", "SHA2", "PQCrypto", "TestSupport"],
            resources: [.copy("Resources")]
        ),
        .testTarget(name: "ManifestTests", dependencies: ["Manifest", "OrderedJSON", "ContentAddressing", "ClassicalCrypto", "StationEmulator", "TestSupport"]),
        .testTarget(name: "OrderedJSONTests", dependencies: ["OrderedJSON"]),
        .testTarget(
            name: "ContentAddressingTests",
            dependencies: ["ContentAddressing", "OrderedJSON", "ClassicalCrypto", "StationEmulator", "TestSupport"],
            resources: [.copy("Resources")]
        ),
        .testTarget(name: "EnvelopeTests", dependencies: ["Envelope", "ClassicalCrypto", "PQCrypto", "TestSupport"]),
        .testTarget(name: "SigningTests", dependencies: ["Signing", "StationEmulator", "ClassicalCrypto", "PQCrypto", "TestSupport"]),
        .testTarget(
            name: "CipherCLITests",
            dependencies: ["CipherCLI", "PQCrypto", "StationEmulator", "StationClient", "Manifest", "ContentAddressing", "Transport", "TransportTestSupport", "TestSupport"]
        ),
        .testTarget(
            name: "ExampleTests",
            dependencies: ["PostQuantumTour", "PairDevice", "SignRequest", "ReadManifest", "OpenEnvelope", "PublishPost",
                           "TwoClients", "ReadFollowed", "StationEmulator", "Manifest", "TransportTestSupport", "TestSupport"]
        ),
        // Openssl helpers, TLS fronts (scripts/tls-front.py, nghttpx) and waiting helpers for transport tests.
        .target(name: "TransportTestSupport", dependencies: ["LoopbackHTTP", "Transport"], path: "Tests/TransportTestSupport"),
        .testTarget(
            name: "TransportTests",
            dependencies: ["Transport", "SHA2", "LoopbackHTTP", "TransportTestSupport", "TestSupport"],
            resources: [.copy("Resources")]
        ),
        .testTarget(
            name: "StationClientTests",
            dependencies: ["StationClient", "PQCrypto", "ClassicalCrypto", "Envelope", "Signing", "Manifest", "OrderedJSON", "ContentAddressing", "Transport",
                           .whereCurlIs("CurlTransport"), "URLSessionTransport", "StationEmulator", "LoopbackHTTP", "TransportTestSupport", "TestSupport"]
        ),
        .testTarget(
            name: "StationEmulatorTests",
            dependencies: ["StationEmulator", "CipherStationEmulator", "Signing", "Envelope", "PQCrypto", "ClassicalCrypto", "Manifest", "OrderedJSON", "ContentAddressing",
                           "Transport", "LoopbackHTTP", "HTTPTransportConformance", "TestSupport"]
        ),
        .testTarget(
            name: "CurlTransportTests",
            dependencies: [.whereCurlIs("CurlTransport"), "Transport", "LoopbackHTTP", "HTTPTransportConformance", "TransportTestSupport", "TestSupport",
                           .whereCurlIs("CCurl")]
        ),
        // Every Swift snippet of the README and the documentation, written here by
        // scripts/check_snippets.py (Tests/SnippetTests/Generated, not in git) and compiled with the
        // tests; the snippets' own `@Test`s run with the others.
        .testTarget(
            name: "SnippetTests",
            dependencies: ["PQCrypto", "SHA2", "ClassicalCrypto", "Envelope", "Signing", "Manifest", "OrderedJSON", "ContentAddressing", "Transport",
                           .whereCurlIs("CurlTransport"),
                           "URLSessionTransport", "StationClient", "DriveSync", "StationEmulator", "LoopbackHTTP", "HTTPTransportConformance"],
            path: "Tests/SnippetTests"
        ),
        .testTarget(
            name: "URLSessionTransportTests",
            dependencies: ["URLSessionTransport", "Transport", "LoopbackHTTP", "HTTPTransportConformance", "TransportTestSupport", "TestSupport"]
        ),
    ]
)
