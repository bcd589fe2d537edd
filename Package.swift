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
        .executable(name: "cipher", targets: ["CipherCLI"]),
        .executable(name: "cipher-examples", targets: ["CipherExamples"]),
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
        // Layer 0: `ErrorKind`, the growable kind of every module's errors (PQCrypto and Transport re-export it).
        .target(name: "ErrorKinds"),
        // Layer 0: the getrandom(2) declaration (a header only; nothing is linked).
        .systemLibrary(name: "CSystemRandom", path: "Sources/CSystemRandom"),
        // Layer 0: add_key(2)/keyctl(2) wrappers for the `cipher` session unlock (Linux; empty elsewhere).
        .systemLibrary(name: "CKeyring", path: "Sources/CKeyring"),
        // Layer 0: libsodium (Linux and Android, with the SystemLibraries trait).
        .systemLibrary(
            name: "CSodium",
            path: "Sources/CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // Layer 0: OpenSSL's libcrypto, for SHA-256 with the CPU's SHA extensions (Linux and Android,
        // with the SystemLibraries trait; Apple platforms take SHA-256 from CommonCrypto).
        .systemLibrary(
            name: "CLibCrypto",
            path: "Sources/CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // Layer 0: libcurl, with fixed-arity shims for its variadic setopt/getinfo calls.
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),

        // Layer 1: pure-Swift post-quantum primitives (Keccak, ML-KEM-768, ML-DSA-65).
        .target(name: "PQCrypto", dependencies: ["CSystemRandom", "ErrorKinds"]),
        // Layer 1: SHA-256 (libcrypto where linked, CommonCrypto on Apple platforms, pure Swift otherwise).
        .target(
            name: "SHA2",
            dependencies: [
                .target(name: "CLibCrypto", condition: .when(platforms: [.linux, .android], traits: ["SystemLibraries"])),
            ]),
        // Layer 1: the order-preserving JSON reader and writer (Python's layouts), the wire coder and
        // RFC 3339 times.
        .target(name: "OrderedJSON"),

        // Layer 2: SecretBox, BLAKE2b, Argon2 and Ed25519 in pure Swift, run in libsodium where it is
        // linked; secret keys are `PQCrypto.SymmetricKey`, zeroed on drop.
        .target(
            name: "ClassicalCrypto",
            dependencies: [
                "PQCrypto", "SHA2",
                .target(name: "CSodium", condition: .when(platforms: [.linux, .android], traits: ["SystemLibraries"])),
            ],
            resources: [.copy("PrivacyInfo.xcprivacy")]),
        // Layer 2: the HTTPTransport protocol, request/response types, multipart bodies, key pins.
        .target(name: "Transport", dependencies: ["SHA2", "ErrorKinds"], resources: [.copy("PrivacyInfo.xcprivacy")]),

        // Layer 3: the KEM-DEM key envelope.
        .target(name: "Envelope", dependencies: ["PQCrypto", "ClassicalCrypto"]),
        // Layer 3: signed requests (the station-side verifier is the emulator's).
        .target(name: "Signing", dependencies: ["PQCrypto", "ClassicalCrypto", "SHA2"]),
        // Layer 3: CIDs, multibase, peer ids, Kubo-exact UnixFS CIDs, IPNS records.
        .target(name: "ContentAddressing", dependencies: ["ClassicalCrypto", "PQCrypto", "SHA2", "OrderedJSON"]),
        // Layer 3: HTTPTransport over libcurl; an empty module where libcurl is absent.
        .target(name: "CurlTransport", dependencies: ["Transport", .whereCurlIs("CCurl")], resources: [.copy("PrivacyInfo.xcprivacy")]),
        // Layer 3: HTTPTransport over URLSession (Darwin's, or FoundationNetworking on Linux).
        .target(name: "URLSessionTransport", dependencies: ["Transport"], resources: [.copy("PrivacyInfo.xcprivacy")]),
        // Layer 3: an HTTP/1.1 server on 127.0.0.1 for the emulator, the conformance suite and tests.
        .target(name: "LoopbackHTTP", dependencies: ["Transport"], resources: [.copy("PrivacyInfo.xcprivacy")]),

        // Layer 4: the station's wire models (profile, public.json, manifest, envelope sets, responses, errors).
        .target(name: "Manifest", dependencies: ["OrderedJSON", "ContentAddressing", "PQCrypto"]),
        // Layer 4: what every HTTPTransport promises, as cases any test runner can run.
        .target(name: "HTTPTransportConformance", dependencies: ["Transport", "LoopbackHTTP"], resources: [.copy("PrivacyInfo.xcprivacy")]),

        // Layer 5: the client. CurlTransport is its default transport on Linux.
        .target(
            name: "StationClient",
            dependencies: [
                "PQCrypto", "ClassicalCrypto", "SHA2", "Envelope", "Signing", "Manifest", "OrderedJSON", "ContentAddressing", "Transport", "URLSessionTransport",
                .target(name: "CurlTransport", condition: .when(platforms: [.linux], traits: ["SystemLibraries"])),
            ],
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        // Layer 5: a Cipher Station on loopback or in process, for tests (the testing product).
        .target(
            name: "StationEmulator",
            dependencies: ["PQCrypto", "ClassicalCrypto", "SHA2", "Envelope", "Signing", "Manifest", "OrderedJSON", "ContentAddressing", "Transport", "LoopbackHTTP"]
        ),

        // Layer 6: two-way sync of a local folder with a namespace of drive posts, on StationClient's
        // public API (its own target: an app that only publishes and lists links none of it).
        .target(
            name: "DriveSync",
            dependencies: ["StationClient", "Manifest", "OrderedJSON", "SHA2", "ClassicalCrypto", "PQCrypto", "Transport"],
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),

        // On top: the emulator as a program (`swift run cipher-station-emulator --port 8443`).
        .executableTarget(
            name: "CipherStationEmulator",
            dependencies: ["StationEmulator", "Signing", "Envelope", "Transport", "PQCrypto", "ClassicalCrypto", "Manifest", "OrderedJSON",
                           "LoopbackHTTP"]
        ),
        // On top: the `cipher` command-line drive (the `drive` namespace), on StationClient's public API.
        .executableTarget(
            name: "CipherCLI",
            dependencies: [
                "StationClient", "DriveSync", "StationEmulator", "Manifest", "OrderedJSON", "ContentAddressing", "Transport", "PQCrypto", "ClassicalCrypto",
                "CKeyring",
                .target(name: "CurlTransport", condition: .when(platforms: [.linux], traits: ["SystemLibraries"])),
            ]
        ),
        // On top: the examples, one runnable program per step of the guide, each a subcommand
        // (`swift run cipher-examples pair-device`; see Examples/CipherExamples/main.swift).
        // The benchmarks are a package of their own: Benchmarks/Package.swift.
        .executableTarget(
            name: "CipherExamples",
            dependencies: ["StationClient", "DriveSync", "StationEmulator", "Signing", "Envelope", "Manifest", "OrderedJSON", "ContentAddressing",
                           "ClassicalCrypto", "PQCrypto", "Transport", "URLSessionTransport", .whereCurlIs("CurlTransport")],
            path: "Examples"
        ),

        // Tests. TestSupport holds hex helpers, scratch directories and the runner for the Python
        // interop halves; it depends on PQCrypto alone, so a change above it rebuilds only the tests above it.
        .target(name: "TestSupport", dependencies: ["PQCrypto"], path: "Tests/TestSupport"),
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
        .testTarget(name: "ManifestTests", dependencies: ["Manifest", "OrderedJSON", "ContentAddressing", "ClassicalCrypto", "TestSupport"]),
        .testTarget(name: "OrderedJSONTests", dependencies: ["OrderedJSON"]),
        .testTarget(
            name: "ContentAddressingTests",
            dependencies: ["ContentAddressing", "OrderedJSON", "ClassicalCrypto", "TestSupport"],
            resources: [.copy("Resources")]
        ),
        .testTarget(name: "EnvelopeTests", dependencies: ["Envelope", "ClassicalCrypto", "PQCrypto", "TestSupport"]),
        .testTarget(name: "SigningTests", dependencies: ["Signing", "ClassicalCrypto", "SHA2", "PQCrypto", "TestSupport"]),
        .testTarget(
            name: "CipherCLITests",
            dependencies: ["CipherCLI", "PQCrypto", "ClassicalCrypto", "StationEmulator", "StationClient", "Manifest", "ContentAddressing", "Transport", "TransportTestSupport", "TestSupport"]
        ),
        .testTarget(
            name: "ExampleTests",
            dependencies: ["CipherExamples", "StationEmulator", "Manifest", "TransportTestSupport", "TestSupport"]
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
            dependencies: ["StationClient", "PQCrypto", "ClassicalCrypto", "SHA2", "Envelope", "Signing", "Manifest", "OrderedJSON", "ContentAddressing", "Transport",
                           .whereCurlIs("CurlTransport"), "URLSessionTransport", "StationEmulator", "LoopbackHTTP", "TransportTestSupport", "TestSupport"]
        ),
        // The emulator, and the station's halves of the protocols (the signed-request verifier, the
        // UnixFS DAG builder and block reader, the IPNS record writer) against the client's code, so
        // the Signing and ContentAddressing tests need no emulator.
        .testTarget(
            name: "StationEmulatorTests",
            dependencies: ["StationEmulator", "CipherStationEmulator", "Signing", "Envelope", "PQCrypto", "ClassicalCrypto", "SHA2", "Manifest", "OrderedJSON", "ContentAddressing",
                           "Transport", "LoopbackHTTP", "HTTPTransportConformance", "TestSupport"],
            resources: [.copy("Resources")]
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
            name: "DriveSyncTests",
            dependencies: ["DriveSync", "StationClient", "Manifest", "SHA2", "StationEmulator"]
        ),
        .testTarget(
            name: "URLSessionTransportTests",
            dependencies: ["URLSessionTransport", "Transport", "LoopbackHTTP", "HTTPTransportConformance", "TransportTestSupport", "TestSupport"]
        ),
    ]
)
