import PQCrypto

/// Cryptographically secure random bytes from the operating system (`getrandom` on Linux,
/// `arc4random_buf` on Apple platforms).
///
/// Use it for keys, nonces and request nonces; never for test data that must be reproducible.
public enum SecureRandom {
    /// Fills `buffer` with random bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        SystemRandom.fill(buffer)
    }

    /// Returns `count` random bytes (none when `count` is zero or negative).
    public static func bytes(count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Returns a fresh random key of `byteCount` bytes (32 for a SecretBox post key), generated
    /// straight into storage that is zeroed when the key is dropped.
    public static func symmetricKey(byteCount: Int = 32) -> SymmetricKey {
        SymmetricKey.makeSecure(byteCount: max(byteCount, 0)) { fill($0) }
    }
}
