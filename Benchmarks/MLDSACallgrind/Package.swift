// swift-tools-version:6.0
// A deterministic ML-DSA-65 workload for instruction counts under callgrind (see run.sh): fixed
// seeds and messages, deterministic signatures, so two runs of one build count the same.
import PackageDescription

let package = Package(
    name: "mldsa-callgrind",
    dependencies: [.package(name: "swift-cipher-station", path: "../..")],
    targets: [
        .executableTarget(
            name: "mldsa-callgrind",
            dependencies: [.product(name: "PQCrypto", package: "swift-cipher-station")]),
    ]
)
