import Foundation
import PQCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux)
import CKeyring
#endif

/// The unlocked key store key, kept for a terminal session so that only the first command of a
/// session pays for Argon2id (about 0.5 s and 256 MiB at the store's `moderate` cost).
///
/// What is kept is the store key (the Argon2id output), never the passphrase: a `user` key in the
/// Linux kernel's session keyring (where a login gives none, the user's default session keyring),
/// named after the key store's directory, readable only by processes that possess that keyring
/// (this login or terminal session and its children),
/// never written to disk, expiring `CIPHER_KEEP_UNLOCKED` seconds (900 by default; 0 keeps
/// nothing) after the passphrase was typed. `cipher lock` forgets it at once. A kept key that does
/// not open the store any more (the store was re-created) is forgotten, and the passphrase asked.
///
/// Where the keyring cannot be used (not Linux, a kernel without keys, a sandbox that refuses the
/// calls with `ENOSYS`, `EPERM` or `EACCES`), every command unlocks with the passphrase, as
/// before. On macOS the Keychain would be the place; until that is written, Apple platforms take
/// the plain unlock.
struct SessionKeyring: Sendable {
    /// The default time a kept key lives: 15 minutes.
    static let defaultLifetime: UInt32 = 900
    /// The environment variable giving the lifetime in seconds (`0` keeps no key).
    static let lifetimeVariable = "CIPHER_KEEP_UNLOCKED"
    /// The length of a store key.
    static let keyByteCount = 32

    /// The key's name in the keyring: the tool's prefix and the store directory's absolute path.
    let description: String
    /// How long a key put now lives, in seconds (0: keep none).
    let lifetime: UInt32

    init(storeDirectory: URL, environment: [String: String]) {
        description = "cipher-station:key-store:" + storeDirectory.standardizedFileURL.resolvingSymlinksInPath().path
        if let text = environment[Self.lifetimeVariable], let seconds = UInt32(text.trimmingCharacters(in: .whitespaces)) {
            lifetime = seconds
        } else {
            lifetime = Self.defaultLifetime
        }
    }

    /// The kept key, or `nil` when none is kept (never put, expired, forgotten) or the keyring is unavailable.
    func keptKey() -> SecretBytes? {
        #if os(Linux)
        guard lifetime > 0 else { return nil }
        let serial = cipher_keyring_search(cipher_keyring_session, description)
        guard serial > 0, let key = Int32(exactly: serial) else { return nil }
        let read = try? SecretBytes(count: Self.keyByteCount) { (buffer: UnsafeMutableRawBufferPointer) throws(KeyringFailure) in
            guard let base = buffer.baseAddress,
                  cipher_keyring_read(key, base, buffer.count) == Self.keyByteCount else { throw KeyringFailure() }
        }
        return read
        #else
        return nil
        #endif
    }

    /// Keeps `key` for ``lifetime`` seconds; does nothing when the lifetime is 0 or the keyring
    /// is unavailable (the next command then asks for the passphrase again).
    func keep(_ key: SecretBytes) {
        #if os(Linux)
        guard lifetime > 0 else { return }
        // The session keyring by its serial: adding to the special id in a process without a
        // session keyring would make a new one that ends with the process.
        let ring = cipher_keyring_id(cipher_keyring_session)
        guard ring > 0, let keyring = Int32(exactly: ring) else { return }
        let serial = key.withUnsafeBytes { bytes in
            cipher_keyring_add(description, bytes.baseAddress, bytes.count, keyring)
        }
        guard serial > 0, let kept = Int32(exactly: serial) else { return }
        // Possessor only (view, read, write, search, link, setattr): other sessions of the same
        // user cannot even see it. Then the time-out; a key that cannot get one is not kept.
        let possessorOnly: UInt32 = 0x3f00_0000
        guard cipher_keyring_set_permissions(kept, possessorOnly) == 0,
              cipher_keyring_set_timeout(kept, lifetime) == 0 else {
            _ = cipher_keyring_invalidate(kept)
            return
        }
        #endif
    }

    /// Forgets the kept key; `true` when one was kept.
    @discardableResult
    func forget() -> Bool {
        #if os(Linux)
        let serial = cipher_keyring_search(cipher_keyring_session, description)
        guard serial > 0, let key = Int32(exactly: serial) else { return false }
        return cipher_keyring_invalidate(key) == 0
        #else
        return false
        #endif
    }

    /// Whether this process can keep keys at all (the session keyring answers).
    static var isAvailable: Bool {
        #if os(Linux)
        // Searching for a name nobody uses answers ENOKEY when the keyring works.
        let serial = cipher_keyring_search(cipher_keyring_session, "cipher-station:probe")
        return serial > 0 || errno == ENOKEY
        #else
        return false
        #endif
    }

    private struct KeyringFailure: Error {}
}
