import Foundation
import PQCrypto
import ClassicalCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``KeyStore`` that keeps each item in its own file, encrypted at rest with a passphrase.
///
/// Opening the store unlocks it once: Argon2id derives a key from the passphrase and a random salt
/// kept in `keystore.params` (created on first use, with a check value that detects a wrong
/// passphrase); each item is then sealed with SecretBox under that key, so saving and loading are
/// cheap. The key lives in memory that is zeroed when the store is dropped.
///
/// Writes are atomic: the sealed bytes go to a temporary file (mode 0600) in the same directory,
/// which is flushed (`F_FULLFSYNC` on Darwin, `fsync` elsewhere) and renamed over the old file, and
/// the directory is flushed too: a credential the app reported saved ("paired") survives a power
/// cut, since it cannot be rebuilt (the station keeps the device registered under its old keys).
/// A write interrupted at any point leaves the previous file intact. `keystore.params` is created
/// exclusively (written aside, then hard-linked into place), so when several processes create
/// one store at once, one salt wins and every process unlocks with it. Use it on Linux and for
/// command-line tools; on Apple platforms prefer a Keychain store (see ``KeyStore``).
///
/// Layouts: `keystore.params` = `CSKP` ‖ version `1` ‖ salt (16) ‖ Argon2 operations (u32 BE) ‖
/// memory KiB (u32 BE) ‖ SecretBox(check value); an item = `CSKS` ‖ version `1` ‖
/// SecretBox(`nonce ‖ tag ‖ ciphertext`).
public final class FileKeyStore: KeyStore {
    /// The directory holding the item files (created with mode 0700 when missing; an existing
    /// one is tightened to 0700).
    public let directory: URL
    /// The Argon2id cost of a new store: libsodium's `moderate` (3 passes, 256 MiB). Stores
    /// created with another cost (earlier versions used `interactive`) keep theirs.
    public static let defaultLimits = Argon2.Limits.moderate
    private let key: SymmetricKey
    private let beforeRename: @Sendable (URL) throws -> Void

    private static let magic: [UInt8] = Array("CSKS".utf8) + [1]
    /// The largest item file read back (16 MiB; credentials are a few kilobytes).
    static let maximumItemByteCount = 16 << 20
    private static let paramsMagic: [UInt8] = Array("CSKP".utf8) + [1]
    private static let paramsName = "keystore.params"
    private static let checkValue = Array("cipher-station key store".utf8)
    /// Where the Argon2 limits start in `keystore.params` (after the magic and the salt).
    private static let saltEnd = 5 + Argon2.saltByteCount
    /// The length of every valid `keystore.params`: limits and the sealed check value follow the salt.
    private static let parametersByteCount = saltEnd + 8 + SecretBox.overheadByteCount + checkValue.count
    /// The most a `keystore.params` may ask of an unlock, checked before Argon2 runs: the larger
    /// of ``defaultLimits`` and the `limits` the opener passes (what this store writes), so a
    /// rewritten file cannot make unlocking cost more time or memory than creating the store did.
    /// Cheaper parameters cost less than a normal unlock and derive another key (the check value
    /// then does not open: "wrong passphrase"), so only Argon2's own minimum bounds them below.
    static func acceptedLimits(opening limits: Argon2.Limits) -> (operations: ClosedRange<UInt32>, memoryKiB: ClosedRange<UInt32>) {
        let operations = min(maximumOperations, UInt32(clamping: max(defaultLimits.operations, limits.operations)))
        let memoryKiB = min(maximumMemoryKiB, UInt32(clamping: max(defaultLimits.memoryBytes, limits.memoryBytes) / 1024))
        return (1...max(1, operations), 8...max(8, memoryKiB))
    }
    /// Whatever the opener passes, a file never gets more than this (as before: 16 passes, 1 GiB).
    private static let maximumOperations: UInt32 = 16
    private static let maximumMemoryKiB: UInt32 = 1 << 20

    /// Opens (or creates) the store in `directory` and unlocks it with `passphrase`.
    ///
    /// - Parameters:
    ///   - directory: the directory for the item files and `keystore.params`.
    ///   - passphrase: the secret the items are encrypted with.
    ///   - limits: the Argon2id cost when the store is created (by default ``defaultLimits``,
    ///     libsodium's `moderate`: 3 passes, 256 MiB); an existing store keeps the cost recorded
    ///     in its `keystore.params`, whatever this says. It also bounds what an existing
    ///     `keystore.params` may ask for: Argon2 parameters above both these limits and
    ///     ``defaultLimits`` are refused before Argon2 runs (a rewritten file cannot make an
    ///     unlock slower or hungrier than creating the store was). A store created with costlier
    ///     limits than the default opens when the same limits are passed.
    /// - Throws: ``StationClientError`` (`.keyStore`) when the passphrase is empty or wrong, the
    ///   directory cannot be created or made private, or `keystore.params` is damaged or asks
    ///   for more than the limits above.
    public convenience init(directory: URL, passphrase: String, limits: Argon2.Limits = FileKeyStore.defaultLimits) throws {
        try self.init(directory: directory, passphrase: passphrase, limits: limits, beforeRename: { _ in })
    }

    /// The same, with hooks for tests: `beforeRename` runs after a temporary file is written and
    /// flushed and before it is renamed into place (to interrupt a write);
    /// `afterFindingNoParameters` runs when no `keystore.params` exists yet, before this creator
    /// makes one (to let another creator win the race).
    init(
        directory: URL, passphrase: String, limits: Argon2.Limits, beforeRename: @escaping @Sendable (URL) throws -> Void,
        afterFindingNoParameters: () -> Void = {}
    ) throws {
        let operation = "unlocking the key store"
        guard !passphrase.isEmpty else {
            throw StationClientError(.keyStore, operation: operation, message: "the passphrase is empty")
        }
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StationClientError(.keyStore, operation: operation, message: "cannot create \(directory.path)", underlying: error)
        }
        // An existing directory keeps its mode through createDirectory: others must not list or
        // replace the items (a 0777 directory lets anyone swap an item file).
        guard chmod(directory.path, 0o700) == 0 else {
            throw Self.failure("cannot make private (0700)", directory, operation: operation)
        }
        self.directory = directory
        self.beforeRename = beforeRename
        var password = Array(passphrase.utf8)
        defer { SecureMemory.zero(&password) }
        let paramsURL = directory.appendingPathComponent(Self.paramsName)
        if let stored = try Self.readParameters(at: paramsURL, operation: operation) {
            key = try Self.unlock(stored, password: password, accepting: limits, operation: operation)
            return
        }
        // Another process may create the store from here on; the exclusive link below finds out.
        afterFindingNoParameters()
        let salt = SecureRandom.bytes(count: Argon2.saltByteCount)
        let created = try Self.derive(password, salt: salt, limits: limits)
        var file = Self.paramsMagic + salt
        file += Self.uint32Bytes(UInt32(clamping: limits.operations))
        file += Self.uint32Bytes(UInt32(clamping: limits.memoryBytes / 1024))
        do {
            file += try SecretBox.seal(Self.checkValue, using: created)
        } catch {
            throw StationClientError(.keyStore, operation: operation, message: "cannot seal the check value", underlying: error)
        }
        // Power loss: without its salt no item of the store opens again.
        if try AtomicFile.createExclusively(file, at: paramsURL, need: .powerLoss, operation: operation) {
            key = created
            return
        }
        // Lost the race: the winner's salt is the store's, so derive from it as any later opener does.
        guard let stored = try Self.readParameters(at: paramsURL, operation: operation) else {
            throw StationClientError(.keyStore, operation: operation, message: "\(Self.paramsName) vanished while it was created")
        }
        key = try Self.unlock(stored, password: password, accepting: limits, operation: operation)
    }

    /// Opens the store in `directory` with a key unlocked earlier (``unlockedKey``, e.g. kept by a
    /// command-line session), without Argon2: the key must open the store's check value, so a key
    /// of another store, or of this directory before it was re-created, is refused.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when there is no store in `directory`, the
    ///   key does not open it, or `keystore.params` is damaged.
    package init(directory: URL, unlockedKey: SecretBytes) throws {
        let operation = "unlocking the key store with a kept key"
        let paramsURL = directory.appendingPathComponent(Self.paramsName)
        guard let bytes = try Self.readParameters(at: paramsURL, operation: operation) else {
            throw StationClientError(.keyStore, operation: operation, message: "no key store in \(directory.path)")
        }
        guard bytes.count == Self.parametersByteCount, Array(bytes[0..<5]) == Self.paramsMagic else {
            throw StationClientError(.keyStore, operation: operation, message: "\(Self.paramsName) is damaged")
        }
        let key = unlockedKey.withUnsafeBytes { SymmetricKey(data: $0) }
        guard let check = try? SecretBox.open(bytes[(Self.saltEnd + 8)...], using: key), [UInt8](check) == Self.checkValue else {
            throw StationClientError(.keyStore, operation: operation, message: "the kept key does not open this store")
        }
        guard chmod(directory.path, 0o700) == 0 else {
            throw Self.failure("cannot make private (0700)", directory, operation: operation)
        }
        self.directory = directory
        self.key = key
        self.beforeRename = { _ in }
    }

    /// The unlocked store key (the Argon2id output, not the passphrase), for a caller that keeps
    /// it for a session (the `cipher` tool, in the kernel keyring) and reopens the store with
    /// ``init(directory:unlockedKey:)``. Zeroed when the copy is dropped.
    package var unlockedKey: SecretBytes {
        key.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// The bytes of `keystore.params` (at most one more than a valid file has, so a longer file
    /// shows as damaged without being read whole), or `nil` when there is none.
    private static func readParameters(at url: URL, operation: String) throws -> [UInt8]? {
        do {
            return try BoundedFileRead.bytes(of: url, limit: parametersByteCount)
        } catch .missing {
            return nil
        } catch .tooLarge {
            // An extended file is damaged, as a truncated one is (neither reads as a wrong passphrase).
            throw StationClientError(.keyStore, operation: operation, message: "\(Self.paramsName) is damaged")
        } catch {
            throw StationClientError(.keyStore, operation: operation, message: "cannot read \(url.path): \(error)", underlying: error)
        }
    }

    /// Derives the key from a `keystore.params` file and checks it against the check value.
    /// Parameters above ``acceptedLimits(opening:)`` for `limits` are refused before Argon2 runs.
    private static func unlock(_ bytes: [UInt8], password: [UInt8], accepting limits: Argon2.Limits, operation: String) throws -> SymmetricKey {
        // A file of another length is damaged (a truncated one must not read as a wrong passphrase).
        guard bytes.count == parametersByteCount, Array(bytes[0..<5]) == Self.paramsMagic else {
            throw StationClientError(.keyStore, operation: operation, message: "\(Self.paramsName) is damaged")
        }
        let operations = Self.readUInt32(bytes, at: saltEnd)
        let memoryKiB = Self.readUInt32(bytes, at: saltEnd + 4)
        let accepted = acceptedLimits(opening: limits)
        guard accepted.operations.contains(operations), accepted.memoryKiB.contains(memoryKiB) else {
            throw StationClientError(
                .keyStore, operation: operation,
                message: "the Argon2 parameters in \(Self.paramsName) (\(operations) passes, \(memoryKiB) KiB) are outside what this "
                    + "store writes (at most \(accepted.operations.upperBound) passes, \(accepted.memoryKiB.upperBound) KiB): "
                    + "the file was altered")
        }
        let key = try Self.derive(password, salt: Array(bytes[5..<saltEnd]),
                                  limits: .init(operations: Int(operations), memoryBytes: Int(memoryKiB) * 1024))
        guard let check = try? SecretBox.open(bytes[(saltEnd + 8)...], using: key), [UInt8](check) == Self.checkValue else {
            throw StationClientError(.keyStore, operation: operation, message: "wrong passphrase")
        }
        return key
    }

    private static func derive(_ password: [UInt8], salt: [UInt8], limits: Argon2.Limits) throws -> SymmetricKey {
        do {
            return try Argon2.deriveKey(password: password, salt: salt, limits: limits)
        } catch {
            throw StationClientError(.keyStore, operation: "unlocking the key store", message: "cannot derive the key", underlying: error)
        }
    }

    /// The file that holds `name`.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) for a name outside `[A-Za-z0-9._-]` or
    ///   starting with a dot.
    public func fileURL(for name: String) throws -> URL {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-".utf8)
        guard !name.isEmpty, name.utf8.count <= 200, name.utf8.allSatisfy(allowed.contains), !name.hasPrefix(".") else {
            throw StationClientError(.keyStore, operation: "naming a key store item",
                                     message: "invalid item name \(name.debugDescription)")
        }
        return directory.appendingPathComponent(name + ".csks")
    }

    /// Reads and decrypts the item under `name`.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the file cannot be read, is not a key
    ///   store item, or does not open (damaged or written under another passphrase).
    public func load(_ name: String) async throws -> [UInt8]? {
        try await loadSecret(name).map { secret in secret.withUnsafeBytes { [UInt8]($0) } }
    }

    /// Reads and decrypts the item under `name` straight into zeroizable storage.
    ///
    /// - Throws: as ``load(_:)``.
    public func loadSecret(_ name: String) async throws -> SecretBytes? {
        let url = try fileURL(for: name)
        let operation = "loading \(name) from the key store"
        let bytes: [UInt8]
        do {
            bytes = try BoundedFileRead.bytes(of: url, limit: Self.maximumItemByteCount)
        } catch .missing {
            return nil
        } catch {
            throw StationClientError(.keyStore, operation: operation, message: "cannot read \(url.path): \(error)", underlying: error)
        }
        guard bytes.count >= 5 + SecretBox.overheadByteCount, Array(bytes[0..<5]) == Self.magic else {
            throw StationClientError(.keyStore, operation: operation, message: "\(url.lastPathComponent) is not a key store item")
        }
        do {
            return try SecretBox.openSecret(bytes[5...], using: key)
        } catch {
            throw StationClientError(.keyStore, operation: operation,
                                     message: "the item does not open: damaged, or written under another passphrase", underlying: error)
        }
    }

    /// Encrypts `secret` and writes it atomically under `name`.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the file cannot be written; the old
    ///   file, if any, is then unchanged.
    public func save(_ secret: [UInt8], as name: String) async throws {
        try await saveSecret(SecretBytes(copying: secret), as: name)
    }

    /// Encrypts the bytes of `secret` (read in place) and writes them atomically under `name`.
    ///
    /// - Throws: as ``save(_:as:)``.
    public func saveSecret(_ secret: SecretBytes, as name: String) async throws {
        let url = try fileURL(for: name)
        let operation = "saving \(name) to the key store"
        let sealed: Data
        do {
            let key = self.key
            sealed = try secret.withUnsafeBytes { bytes throws(ClassicalCryptoError) in try SecretBox.seal(bytes, using: key) }
        } catch {
            throw StationClientError(.keyStore, operation: operation, message: "cannot seal the item", underlying: error)
        }
        // Power loss: a credential cannot be rebuilt once the user was told it is saved.
        try AtomicFile.replace(url, with: Self.magic + sealed, need: .powerLoss, operation: operation, beforeRename: beforeRename)
    }

    /// Deletes the file under `name`.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the file exists and cannot be removed.
    public func delete(_ name: String) async throws {
        let url = try fileURL(for: name)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            try FileManager.default.removeItem(at: url)
            // Power loss, as the store's writes: a deleted credential does not come back.
            DurableWrite.flushDirectory(directory.path, need: .powerLoss)
        } catch {
            throw StationClientError(.keyStore, operation: "deleting \(name) from the key store",
                                     message: "cannot remove \(url.path)", underlying: error)
        }
    }

    /// A key-store error for a failed system call on `file`, with `errno`'s text.
    private static func failure(_ what: String, _ file: URL, operation: String) -> StationClientError {
        StationClientError(.keyStore, operation: operation, message: "\(what) \(file.path): \(String(cString: strerror(errno)))")
    }

    private static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { ($0 << 8) | UInt32($1) }
    }

    private static func uint32Bytes(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
