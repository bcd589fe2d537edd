// swift-tools-version:6.2
// The SDK's benchmarks, a package of their own (as swift-nio and swift-crypto keep theirs) so the
// SDK's root package builds only what an app or its tests need. They depend on the SDK by path:
//
//   swift build -c release --package-path Benchmarks
//   swift build -c release --package-path Benchmarks --product cipher-station-emulator  # (the SDK's)
//   Benchmarks/.build/release/cipher-bench                   # the hot paths, median per operation
//   Benchmarks/.build/release/station-client-bench           # the client against the emulator
//
// See README.md here for what each measures and the figures.
import Foundation
import PackageDescription

// The benchmarks time the SDK's internals too (the pure-Swift primitives against libsodium, the
// UnixFS and wire coders, the loopback server's handlers), which are `package` declarations, so
// they compile as part of the SDK's Swift package: `-package-name` is the SDK's identity, the
// name of the folder holding it (`..`), and `packageAccess: false` keeps SwiftPM from passing
// this package's own.
// SwiftPM makes the identity a C99 identifier (`wt-bench` → `wt_bench`).
let sdkIdentity = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent.lowercased()
let sdkPackageName = String(sdkIdentity.unicodeScalars.enumerated().map { index, scalar in
    let allowed = scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "_")
    return allowed && !(index == 0 && CharacterSet.decimalDigits.contains(scalar)) ? Character(scalar) : "_"
})
let asPartOfTheSDK: [SwiftSetting] = [.unsafeFlags(["-package-name", sdkPackageName])]

// `CIPHER_APPLE_CONFIGURATION=1` builds the SDK as Apple platforms get it (without its default
// `SystemLibraries` trait: pure-Swift primitives, URLSessionTransport), for Benchmarks/portable.sh.
let appleConfiguration = ProcessInfo.processInfo.environment["CIPHER_APPLE_CONFIGURATION"] == "1"

let curlPlatforms: [Platform] = [.linux, .android, .macOS]

func sdk(_ product: String) -> Target.Dependency { .product(name: product, package: "swift-cipher-station") }

let package = Package(
    name: "swift-cipher-station-benchmarks",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    dependencies: [.package(name: "swift-cipher-station", path: "..", traits: appleConfiguration ? [] : [.defaults])],
    targets: [
        // What both benchmarks read of their own process (CPU time, peak memory).
        .target(name: "BenchmarkSupport", path: "BenchmarkSupport"),
        // The hot paths (post-quantum, classical, manifest, transport), median time per operation.
        .executableTarget(
            name: "cipher-bench",
            dependencies: ["PQCrypto", "ClassicalCrypto", "SHA2", "Envelope", "Signing", "Manifest", "OrderedJSON", "ContentAddressing",
                           "Transport", "LoopbackHTTP"].map(sdk)
                + ["BenchmarkSupport"]
                + [.product(name: "CurlTransport", package: "swift-cipher-station", condition: .when(platforms: curlPlatforms))],
            path: "CipherBench",
            packageAccess: false,
            swiftSettings: asPartOfTheSDK
        ),
        // The client against `cipher-station-emulator` in its own process (see its main.swift).
        .executableTarget(
            name: "station-client-bench",
            dependencies: ["StationClient", "DriveSync", "URLSessionTransport", "Transport", "Envelope", "Signing", "ClassicalCrypto", "SHA2", "PQCrypto",
                           "Manifest", "OrderedJSON", "ContentAddressing"].map(sdk)
                + ["BenchmarkSupport"]
                + [.product(name: "CurlTransport", package: "swift-cipher-station", condition: .when(platforms: curlPlatforms))],
            path: "StationClientBench",
            packageAccess: false,
            swiftSettings: asPartOfTheSDK
        ),
    ]
)
