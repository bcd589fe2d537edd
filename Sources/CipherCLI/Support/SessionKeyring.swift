import Foundation
import ClassicalCrypto
import PQCrypto
import StationClient
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux)
import CKeyring
#endif

/// The unlocked key store, kept for a login session so that only the first command of a session
/// pays for Argon2id (about 0.5 s and 256 MiB at the store's `moderate` cost). The design
/// `bw lock` follows: what is kept can be taken back.
///
/// - The store key (the Argon2id output) is never kept anywhere shared. It is sealed (SecretBox)
///   under a fresh random *session key* into a copy written for this session only: the file
///   `session-<id>.sealed` in the store directory (mode 0600, written atomically), which records
///   when it expires.
/// - The session key (and the copy's id) is a `user` key in the Linux kernel's session keyring of
///   this login, possessor-only (other sessions of the same user cannot even see it), expiring
///   `CIPHER_KEEP_UNLOCKED` seconds after the passphrase was typed.
/// - `cipher lock` and the time-out delete the sealed copy (a small background process of the
///   command that kept it waits for the time-out; any later command deletes expired copies too),
///   so a session key read earlier opens nothing afterwards.
/// - A login without a session keyring of its own (ssh, cron, containers, systemd services: the
///   kernel then hands out the user's default session keyring `_uid_ses.<uid>`, which every
///   process of the user shares) keeps nothing: the command says so once and every command asks.
///
/// Where the keyring cannot be used at all (not Linux, a kernel without keys, a sandbox that
/// refuses the calls), every command unlocks with the passphrase, as before. On macOS the Keychain
/// would be the place; until that is written, Apple platforms take the plain unlock.
struct SessionKeyring: Sendable {
    /// The default time a kept key lives: 15 minutes.
    static let defaultLifetime: UInt32 = 900
    /// The longest time a key may be kept: 12 hours.
    static let maximumLifetime: UInt32 = 43_200
    /// The environment variable giving the lifetime in seconds (`0` or `off` keeps no key).
    static let lifetimeVariable = "CIPHER_KEEP_UNLOCKED"
    /// The length of a store key and of a session key.
    static let keyByteCount = 32
    /// The length of a session copy's id.
    static let idByteCount = 16
    /// The hidden first argument of the background process that deletes a copy at its time-out.
    static let expireCommand = "__expire-session-copy"

    /// What this process's session keyring is.
    enum Availability: Sendable, Equatable {
        /// A session keyring of this login's own (pam_keyinit, `keyctl session`): keys are kept.
        case own
        /// The user's default session keyring (`_uid_ses.<uid>`), shared by every process of the
        /// user that has no session keyring: nothing is kept there.
        case sharedUserDefault(String)
        /// No kernel keyring (not Linux, no keys, refused by a sandbox).
        case unavailable
    }

    /// The directory of the key store whose key is kept.
    let storeDirectory: URL
    /// The session key's name in the keyring: the tool's prefix and the store directory's absolute path.
    let description: String
    /// How long a key put now lives, in seconds (0: keep none).
    let lifetime: UInt32

    /// - Parameter lifetime: seconds, from ``lifetime(from:)``.
    init(storeDirectory: URL, lifetime: UInt32) {
        self.storeDirectory = storeDirectory
        let path = storeDirectory.standardizedFileURL.resolvingSymlinksInPath().path
        description = "cipher-station:session:" + path
        legacyDescription = "cipher-station:key-store:" + path
        self.lifetime = lifetime
    }

    /// Where earlier versions kept the store key itself (removed wherever it is found).
    private let legacyDescription: String

    /// `CIPHER_KEEP_UNLOCKED`: unset, 900 seconds; `0` or `off`, none (and a key kept earlier is
    /// forgotten); else whole seconds from 1 to ``maximumLifetime``.
    ///
    /// - Throws: `CLIError.usage` for anything else (never the default).
    static func lifetime(from environment: [String: String]) throws(CLIError) -> UInt32 {
        guard let raw = environment[lifetimeVariable] else { return defaultLifetime }
        let text = raw.trimmingCharacters(in: .whitespaces)
        if text == "off" { return 0 }
        guard !text.isEmpty, text.utf8.count <= 10, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let seconds = UInt32(text), seconds <= maximumLifetime else {
            throw .usage("\(lifetimeVariable)=\(raw.debugDescription) is not a lifetime: give whole seconds from 0 to "
                + "\(maximumLifetime) (12 hours), or off; 0 and off keep no unlocked key")
        }
        return seconds
    }

    // MARK: Keeping and reading

    /// The kept store key, or `nil` when none is kept (never put, expired, locked), the
    /// session's keyring is not its own, or the copy does not open (then the stale session key is
    /// forgotten).
    func keptKey() -> SecretBytes? {
        guard lifetime > 0, Self.availability == .own, let session = readSessionKey() else { return nil }
        if let key = Self.openCopy(at: copyURL(id: session.id), with: session.key) { return key }
        forget()
        return nil
    }

    /// Keeps `storeKey` for ``lifetime`` seconds: a sealed copy for this session and its session
    /// key in this login's own session keyring. Does nothing when the lifetime is 0 or there is
    /// no such keyring (the next command then asks for the passphrase again).
    func keep(_ storeKey: SecretBytes) {
        #if os(Linux)
        guard lifetime > 0, Self.availability == .own, storeKey.count == Self.keyByteCount else { return }
        forget()
        let id = SecureRandom.bytes(count: Self.idByteCount)
        let sessionKey = SymmetricKey(randomByteCount: Self.keyByteCount)
        let expiry = UInt64(max(0, Date().timeIntervalSince1970)) + UInt64(lifetime)
        let url = copyURL(id: id)
        guard let sealed = Self.seal(storeKey, expiry: expiry, with: sessionKey) else { return }
        do {
            // Ordering: a copy lost to a power cut only means the passphrase is asked again (the
            // session key it needs lives in the kernel's keyring, which a restart empties anyway).
            try AtomicFile.replace(url, with: sealed, need: .ordering, operation: "keeping the unlocked key for this session")
        } catch {
            return
        }
        // The keyring's payload: the copy's id, then the session key.
        let payload = SecretBytes(count: Self.idByteCount + Self.keyByteCount) { buffer in
            buffer.copyBytes(from: id)
            sessionKey.withUnsafeBytes { key in
                UnsafeMutableRawBufferPointer(rebasing: buffer[Self.idByteCount...]).copyMemory(from: key)
            }
        }
        // The session keyring by its serial: adding to the special id in a process without a
        // session keyring would make a new one that ends with the process.
        let ring = cipher_keyring_id(cipher_keyring_session)
        guard ring > 0, let keyring = Int32(exactly: ring) else {
            unlink(url.path)
            return
        }
        let serial = payload.withUnsafeBytes { bytes in
            cipher_keyring_add(description, bytes.baseAddress, bytes.count, keyring)
        }
        guard serial > 0, let kept = Int32(exactly: serial) else {
            unlink(url.path)
            return
        }
        // Possessor only (view, read, write, search, link, setattr): other sessions of the same
        // user cannot even see it. Then the time-out; a key that cannot get one is not kept.
        let possessorOnly: UInt32 = 0x3f00_0000
        guard cipher_keyring_set_permissions(kept, possessorOnly) == 0,
              cipher_keyring_set_timeout(kept, lifetime) == 0 else {
            _ = cipher_keyring_invalidate(kept)
            unlink(url.path)
            return
        }
        Self.startExpiry(of: url, at: expiry)
        #endif
    }

    /// Forgets this session's kept key: the session key leaves the keyring and its sealed copy is
    /// deleted. `true` when one was kept.
    @discardableResult
    func forget() -> Bool {
        var forgot = false
        #if os(Linux)
        if let session = readSessionKey() {
            forgot = unlink(copyURL(id: session.id).path) == 0
        }
        for name in [description, legacyDescription] {
            let serial = cipher_keyring_search(cipher_keyring_session, name)
            if serial > 0, let key = Int32(exactly: serial), cipher_keyring_invalidate(key) == 0 { forgot = true }
        }
        #endif
        return forgot
    }

    /// `cipher lock`: forgets this session's key and deletes every session copy of this store
    /// (other terminals' too), so no session key, wherever it was read, opens anything.
    ///
    /// - Returns: whether anything was kept.
    func lockEverySession() -> Bool {
        var forgot = forget()
        for url in Self.copies(in: storeDirectory) where unlink(url.path) == 0 { forgot = true }
        // Ordering: a copy a power cut brought back opens nothing, its session key gone with the restart.
        if forgot { DurableWrite.flushDirectory(storeDirectory.path, need: .ordering) }
        return forgot
    }

    /// Deletes the session copies of this store whose time is up (their keyring key expired too).
    func removeExpiredCopies() {
        let now = UInt64(max(0, Date().timeIntervalSince1970))
        for url in Self.copies(in: storeDirectory) {
            if let expiry = Self.expiry(ofCopyAt: url), expiry > now { continue }
            unlink(url.path)
        }
    }

    // MARK: The session's keyring

    /// Whether this process's session keyring is one of its own, the user's shared default, or none.
    static var availability: Availability {
        #if os(Linux)
        // Without creating: a process with no session keyring gets the user's default one.
        let ring = cipher_keyring_id(cipher_keyring_session)
        guard ring > 0, let keyring = Int32(exactly: ring) else { return .unavailable }
        var buffer = [CChar](repeating: 0, count: 512)
        let length = buffer.withUnsafeMutableBufferPointer { cipher_keyring_describe(keyring, $0.baseAddress, $0.count) }
        guard length > 0, length <= buffer.count else { return .unavailable }
        // "type;uid;gid;perm;description": the description may itself hold semicolons.
        let text = String(decoding: buffer.prefix(Int(length)).prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fields = text.split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0] == "keyring" else { return .unavailable }
        let name = String(fields[4])
        // `_uid_ses.<uid>` (and, were it ever the session keyring, `_uid.<uid>`): the user's shared keyrings.
        if name.hasPrefix("_uid_ses.") || name.hasPrefix("_uid.") {
            return .sharedUserDefault(name)
        }
        return .own
        #else
        return .unavailable
        #endif
    }

    /// The session key and its copy's id, read from this session's keyring.
    private func readSessionKey() -> (id: [UInt8], key: SymmetricKey)? {
        #if os(Linux)
        let serial = cipher_keyring_search(cipher_keyring_session, description)
        guard serial > 0, let key = Int32(exactly: serial) else { return nil }
        let count = Self.idByteCount + Self.keyByteCount
        guard let payload = try? SecretBytes(count: count, initialize: { (buffer: UnsafeMutableRawBufferPointer) throws(KeyringFailure) in
            guard let base = buffer.baseAddress, cipher_keyring_read(key, base, buffer.count) == count else { throw KeyringFailure() }
        }) else { return nil }
        return payload.withUnsafeBytes { bytes in
            (Array(bytes[0..<Self.idByteCount]), SymmetricKey(data: UnsafeRawBufferPointer(rebasing: bytes[Self.idByteCount...])))
        }
        #else
        return nil
        #endif
    }

    private struct KeyringFailure: Error {}

    // MARK: The sealed copy

    /// The copy of the store key written for the session whose keyring holds `id`.
    func copyURL(id: [UInt8]) -> URL {
        storeDirectory.appendingPathComponent(Self.copyPrefix + Hex.encode(id) + Self.copySuffix)
    }

    static let copyPrefix = "session-"
    static let copySuffix = ".sealed"
    /// `CSSC` ‖ version 1.
    private static let copyMagic: [UInt8] = Array("CSSC".utf8) + [1]
    /// Magic, expiry (u64 BE, Unix seconds).
    private static let copyHeaderByteCount = 5 + 8
    /// Header, then SecretBox(expiry ‖ store key).
    private static let copyByteCount = copyHeaderByteCount + SecretBox.overheadByteCount + 8 + keyByteCount

    /// The session copies in `directory` (`session-<32 hex>.sealed`).
    static func copies(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix(copyPrefix) && $0.hasSuffix(copySuffix) }.map { directory.appendingPathComponent($0) }
    }

    /// The file's bytes: magic, expiry, and the store key with the expiry sealed under the session key.
    private static func seal(_ storeKey: SecretBytes, expiry: UInt64, with sessionKey: SymmetricKey) -> [UInt8]? {
        let stamp = (0..<8).map { UInt8((expiry >> (56 - 8 * UInt64($0))) & 0xFF) }
        let plain = SecretBytes(count: 8 + keyByteCount) { (buffer: UnsafeMutableRawBufferPointer) throws(Never) in
            buffer.copyBytes(from: stamp)
            storeKey.withUnsafeBytes { key in UnsafeMutableRawBufferPointer(rebasing: buffer[8...]).copyMemory(from: key) }
        }
        guard let sealed = try? plain.withUnsafeBytes({ bytes throws(ClassicalCryptoError) in try SecretBox.seal(bytes, using: sessionKey) })
        else { return nil }
        return copyMagic + stamp + [UInt8](sealed)
    }

    /// The expiry a copy's header records, or `nil` when the file is not a session copy.
    static func expiry(ofCopyAt url: URL) -> UInt64? {
        readCopy(at: url)?.expiry
    }

    /// The bytes of the copy at `url` and the expiry its header records, or `nil` when the file
    /// is not a session copy (read bounded by a copy's exact size).
    private static func readCopy(at url: URL) -> (bytes: [UInt8], expiry: UInt64)? {
        guard let bytes = try? BoundedFileRead.bytes(of: url, limit: copyByteCount), bytes.count == copyByteCount,
              Array(bytes[0..<5]) == copyMagic else { return nil }
        return (bytes, bytes[5..<13].reduce(0) { ($0 << 8) | UInt64($1) })
    }

    /// The store key in the copy at `url`, when `sessionKey` opens it, the sealed expiry matches
    /// the header's (compared in constant time) and has not passed.
    private static func openCopy(at url: URL, with sessionKey: SymmetricKey) -> SecretBytes? {
        guard let (bytes, expiry) = readCopy(at: url),
              let plain = try? SecretBox.openSecret(bytes[copyHeaderByteCount...], using: sessionKey),
              plain.count == 8 + keyByteCount else { return nil }
        let matches = plain.withUnsafeBytes { opened in
            bytes[5..<13].withContiguousStorageIfAvailable { header in
                SecureMemory.constantTimeEquals(UnsafeRawBufferPointer(rebasing: opened[0..<8]), UnsafeRawBufferPointer(header))
            } ?? false
        }
        guard matches, expiry > UInt64(max(0, Date().timeIntervalSince1970)) else { return nil }
        return plain.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[8...])) }
    }

    // MARK: The time-out

    /// Starts a background copy of this tool that deletes the copy at `url` when `expiry` comes
    /// (or exits as soon as the copy is gone: `cipher lock`). Its standard streams are
    /// `/dev/null`, in a session of its own, so it holds no terminal or pipe of the caller.
    private static func startExpiry(of url: URL, at expiry: UInt64) {
        #if os(Linux)
        let executable = "/proc/self/exe"
        let arguments = [executable, expireCommand, url.path, String(expiry)]
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        guard posix_spawn_file_actions_init(&actions) == 0 else { return }
        defer { posix_spawn_file_actions_destroy(&actions) }
        guard posix_spawnattr_init(&attributes) == 0 else { return }
        defer { posix_spawnattr_destroy(&attributes) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // No signal blocked (this process blocks some for its interruption handling), the default
        // action for those it catches, and a session of its own (POSIX_SPAWN_SETSID, glibc 2.26,
        // which Swift's Glibc does not import).
        var none = sigset_t(), caught = sigset_t()
        sigemptyset(&none)
        sigemptyset(&caught)
        for caughtSignal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&caught, caughtSignal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &caught)
        let spawnSetSID: Int16 = 0x80
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK) | Int16(POSIX_SPAWN_SETSIGDEF) | spawnSetSID)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var environment: [UnsafeMutablePointer<CChar>?] = [nil]
        var pid = pid_t()
        _ = posix_spawn(&pid, executable, &actions, &attributes, &argv, &environment)
        #else
        // Apple platforms keep no session key (no kernel keyring), so there is no copy to expire.
        _ = (url, expiry)
        #endif
    }

    /// The background process started by ``startExpiry(of:at:)``: waits until `expiry`, checking
    /// each second that the copy is still there, then deletes it.
    ///
    /// - Returns: the exit status (0; 2 for arguments that are not a copy and a time).
    static func runExpiry(_ arguments: [String]) -> Int32 {
        // Descriptors the parent left open without close-on-exec (a caller's pipe or socket
        // would otherwise stay open until the time-out): only the three /dev/null ones stay.
        #if os(Linux)
        let descriptors = "/proc/self/fd"
        #else
        let descriptors = "/dev/fd"
        #endif
        let open = (try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []
        for descriptor in open.compactMap(Int32.init) where descriptor > 2 { close(descriptor) }
        signal(SIGHUP, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        guard arguments.count == 2, let expiry = UInt64(arguments[1]) else { return 2 }
        let url = URL(fileURLWithPath: arguments[0])
        guard url.lastPathComponent.hasPrefix(copyPrefix), url.lastPathComponent.hasSuffix(copySuffix) else { return 2 }
        while FileManager.default.fileExists(atPath: url.path) {
            let now = UInt64(max(0, Date().timeIntervalSince1970))
            // The copy there now is this one (the same expiry) or a later one another command kept.
            if now >= expiry, self.expiry(ofCopyAt: url).map({ $0 <= now }) ?? true {
                unlink(url.path)
                DurableWrite.flushDirectory(url.deletingLastPathComponent().path, need: .ordering)
                return 0
            }
            sleep(1)
        }
        return 0
    }
}
