// Tests of the cipher command line, a macOS and Linux program that most of them start: iOS, tvOS,
// watchOS and visionOS start no programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
import ClassicalCrypto
import StationClient
import TestSupport

extension TemporaryDirectory {
    /// The least Argon2id cost a key store accepts: one pass over 8 KiB.
    static let cheapestUnlock = Argon2.Limits(operations: 1, memoryBytes: 8 << 10)

    /// A `cipher` home whose key store already exists under `passphrase`, made with
    /// ``cheapestUnlock``: `cipher` keeps the cost a store records, so each run of a test unlocks
    /// in microseconds instead of libsodium's `moderate` (3 passes over 256 MiB), and runs as it
    /// does for a user otherwise. Tests of creating a store start from an empty directory instead.
    static func cipherHome(passphrase: String = "correct horse battery staple") throws -> TemporaryDirectory {
        let home = try TemporaryDirectory(prefix: "cipher-cli")
        _ = try FileKeyStore(directory: home.url, passphrase: passphrase, limits: cheapestUnlock)
        return home
    }
}
#endif
