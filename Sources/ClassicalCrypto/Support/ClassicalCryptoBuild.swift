/// Which implementation of the classical primitives this build runs.
package enum ClassicalCryptoBuild {
    /// `true` on Linux and Android with the `SystemLibraries` trait (the default there): SecretBox,
    /// BLAKE2b, Argon2 and Ed25519 run in libsodium and SHA-256 in libcrypto. `false` on Apple
    /// platforms and in Linux builds without the trait: everything runs in pure Swift (SHA-256 in
    /// CommonCrypto on Apple platforms). Differential tests compare the two where both exist.
    #if canImport(CSodium)
    package static let usesSystemLibraries = true
    #else
    package static let usesSystemLibraries = false
    #endif
}
