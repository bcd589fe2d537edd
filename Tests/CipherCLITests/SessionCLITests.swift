// Tests of the cipher command line, a macOS and Linux program that most of them start: iOS, tvOS,
// watchOS and visionOS start no programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
import Foundation
import Manifest
import PQCrypto
import StationClient
import StationEmulator
import TestSupport
import Testing
import TransportTestSupport

/// The session unlock (a session key kept in the login's own kernel session keyring, opening a
/// copy of the store key sealed for the session), `cipher lock`, `CIPHER_KEEP_UNLOCKED`,
/// `cipher move`, the short words for an unreachable station, and `ls`'s order.
@Suite("cipher CLI: session, move, order", .serialized)
struct SessionCLITests {
    static let passphrase = "correct horse battery staple"

    /// `cipher` commands run one after another in one session keyring, as those of one login.
    struct Session: Sendable {
        let home: URL
        let keyring: TestKeyring
        /// The home this session made, removed with it.
        private let madeHome: TemporaryDirectory?

        /// A session in `keyring` (by default one of its own) for `home`, by default a fresh one
        /// whose store is made with the passphrase "pw".
        init(home: URL? = nil, keyring: TestKeyring = .own()) throws {
            if let home {
                madeHome = nil
                self.home = home
            } else {
                let made = try TemporaryDirectory.cipherHome(passphrase: "pw")
                madeHome = made
                self.home = made.url
            }
            self.keyring = keyring
        }

        /// Removes the keyring (when it is the session's own) and the home the session made.
        func cleanup() {
            keyring.remove()
            madeHome?.cleanup()
        }

        /// Runs `cipher` in `home` (or `directory`) keeping the unlocked key for `keep` seconds
        /// (`nil`: the variable unset), with `passphrase` if given.
        func cipher(_ arguments: String..., in directory: URL? = nil, passphrase: String? = nil,
                    keep: String? = "900") async throws -> CLIResult {
            var environment = ["CIPHER_KEEP_UNLOCKED": keep ?? CLIProcess.unset]
            if let passphrase { environment["CIPHER_PASSPHRASE"] = passphrase }
            return try await CLIProcess.run(arguments + ["--home", (directory ?? home).path], environment: environment,
                                            keyring: keyring)
        }

        /// Whether this system lets `cipher` keep a key in this keyring (a Linux kernel with keys,
        /// a keyring of the login's own not refused by a sandbox); elsewhere the plain unlock is
        /// the behaviour, tested everywhere else.
        func keepsKeys() async throws -> Bool {
            let lock = try await cipher("lock", "--json")
            guard lock.status == 0 else { return false }
            return try lock.json()["session_keyring"] as? Bool == true
        }
    }

    /// The session copies of the store key in `home`.
    static func sessionCopies(_ home: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0.hasPrefix("session-") }.sorted()
    }

    /// The name of the session key `cipher` keeps for the store in `home`.
    static func sessionKeyName(_ home: URL) -> String {
        "cipher-station:session:" + home.standardizedFileURL.resolvingSymlinksInPath().path
    }

    @Test("After one unlock, the next command needs no passphrase; cipher lock makes it ask again")
    func secondCommandNeedsNoPassphraseUntilLock() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false, cheapKeyStore: false)
        defer { paired.cleanup() }
        let home = paired.home.url
        let session = try Session(home: home)
        defer { session.cleanup() }
        guard try await session.keepsKeys() else { return }

        // No key kept yet (pairing ran with CIPHER_KEEP_UNLOCKED=0): asked, and refused without a terminal.
        let asked = try await session.cipher("status")
        #expect(asked.status == 2 && asked.stderr.contains("CIPHER_PASSPHRASE"), "\(asked.stderr)")
        let first = try await session.cipher("status", "--json", passphrase: Self.passphrase)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(!first.stderr.contains("session keyring"), "\(first.stderr)")
        // The same session: no passphrase, not even a wrong one is looked at.
        let second = try await session.cipher("status", "--json")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try second.json()["station_uid"] as? String == paired.emulator.uid)
        let listed = try await session.cipher("ls")
        #expect(listed.status == 0, "\(listed.stderr)")
        // Another login (another session keyring) is asked.
        let elsewhere = try Session(home: home)
        defer { elsewhere.cleanup() }
        let otherSession = try await elsewhere.cipher("status")
        #expect(otherSession.status == 2, "\(otherSession.stderr)")

        // The store's at-rest cost stays at least libsodium's "interactive" (2 passes, 64 MiB).
        let params = [UInt8](try Data(contentsOf: home.appendingPathComponent("keystore.params")))
        try #require(params.count >= 29)
        func limit(_ offset: Int) -> UInt32 { params[offset..<(offset + 4)].reduce(0) { ($0 << 8) | UInt32($1) } }
        #expect(limit(21) >= 2 && limit(25) >= 64 * 1024)
        // What is kept is a copy sealed for this session (mode 0600) and a session key: neither
        // is the store key.
        let copies = try Self.sessionCopies(home)
        #expect(copies.count == 1, "\(copies)")
        let copy = home.appendingPathComponent(try #require(copies.first))
        #expect((try FileManager.default.attributesOfItem(atPath: copy.path)[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let storeKey = try FileKeyStore(directory: home, passphrase: Self.passphrase).unlockedKey
        let sealed = try Data(contentsOf: copy)
        #expect(storeKey.withUnsafeBytes { sealed.range(of: Data($0)) } == nil)
        let payload = try [UInt8](hex: session.keyring.run("read", Self.sessionKeyName(home)))
        #expect(payload.count == 48)
        #expect(SecretBytes(copying: payload.suffix(32)) != storeKey)

        // CIPHER_KEEP_UNLOCKED=0 neither keeps nor uses a kept key, and forgets a key kept earlier.
        let unkept = try await session.cipher("status", keep: "0")
        #expect(unkept.status == 2, "\(unkept.stderr)")
        #expect(try Self.sessionCopies(home).isEmpty)
        let forgotten = try await session.cipher("status")
        #expect(forgotten.status == 2 && forgotten.stderr.contains("CIPHER_PASSPHRASE"), "\(forgotten.stderr)")

        _ = try await session.cipher("status", passphrase: Self.passphrase)
        #expect(try Self.sessionCopies(home).count == 1)
        let lock = try await session.cipher("lock", "--json")
        #expect(lock.status == 0, "\(lock.stderr)")
        #expect(try lock.json()["forgot"] as? Bool == true, "\(lock.stdout)")
        #expect(try Self.sessionCopies(home).isEmpty)
        let afterLock = try await session.cipher("status")
        #expect(afterLock.status == 2 && afterLock.stderr.contains("CIPHER_PASSPHRASE"), "\(afterLock.stderr)")
        let again = try await session.cipher("lock")
        #expect(again.status == 0 && again.stdout.contains("nothing to lock"), "\(again.stdout)")
    }

    @Test("A session key read while unlocked opens nothing after cipher lock or the time-out: the sealed copy is gone")
    func sessionKeyReadEarlierOpensNothingAfterwards() async throws {
        let session = try Session()
        defer { session.cleanup() }
        guard try await session.keepsKeys() else { return }
        let name = Self.sessionKeyName(session.home)
        func status(passphrase: String? = nil, keep: String = "900") async throws -> CLIResult {
            try await session.cipher("status", "--json", passphrase: passphrase, keep: keep)
        }
        func notPaired(_ result: CLIResult) -> Bool {
            (try? result.errorKind()) == "notPaired"
        }

        // Unlocked: a process of this session reads the session key, then `cipher lock` runs.
        #expect(notPaired(try await status(passphrase: "pw")))
        let stolen = try session.keyring.run("read", name)
        #expect(notPaired(try await status()))
        let copies = try Self.sessionCopies(session.home)
        #expect(copies.count == 1)
        #expect(try await session.cipher("lock").status == 0)
        #expect(try Self.sessionCopies(session.home).isEmpty)
        // The key read earlier, put back where `cipher` looks: it opens nothing, the passphrase is asked.
        _ = try session.keyring.run("add", name, stolen)
        let replayed = try await status()
        #expect(replayed.status == 2 && replayed.stderr.contains("CIPHER_PASSPHRASE"), "\(replayed.stderr)")
        // Nor is it the store key, which would open the store without any copy.
        let payload = try [UInt8](hex: stolen)
        #expect(throws: StationClientError.self) {
            try FileKeyStore(directory: session.home, unlockedKey: SecretBytes(copying: payload.suffix(32)))
        }

        // The time-out: kept for three seconds, the copy is deleted when it ends (by the process the
        // command left waiting for it), without any later command.
        #expect(notPaired(try await status(passphrase: "pw", keep: "3")))
        let timed = try session.keyring.run("read", name)
        #expect(try Self.sessionCopies(session.home).count == 1)
        #expect(await eventually(timeout: 60) { (try? Self.sessionCopies(session.home).isEmpty) == true })
        _ = try session.keyring.run("add", name, timed)
        let expired = try await status()
        #expect(expired.status == 2 && expired.stderr.contains("CIPHER_PASSPHRASE"), "\(expired.stderr)")
    }

    @Test("The user's shared default session keyring keeps nothing: said once, and every command asks")
    func sharedUserKeyringKeepsNothing() async throws {
        let session = try Session(keyring: .shared)
        defer { session.cleanup() }
        let first = try await session.cipher("status", "--json", passphrase: "pw")
        #expect(try first.errorKind() == "notPaired", "\(first.stderr)")
        #if os(Linux)
        let said = first.stderr.components(separatedBy: "no session keyring of its own").count - 1
        #expect(said == 1, "\(first.stderr)")
        #endif
        #expect(try Self.sessionCopies(session.home).isEmpty)
        let next = try await session.cipher("status")
        #expect(next.status == 2 && next.stderr.contains("CIPHER_PASSPHRASE"), "\(next.stderr)")
        // Nothing of it is in the shared keyring, under the name of this version or of earlier ones.
        let path = session.home.standardizedFileURL.resolvingSymlinksInPath().path
        for name in [Self.sessionKeyName(session.home), "cipher-station:key-store:" + path] {
            #expect(throws: (any Error).self) { try session.keyring.run("read", name) }
        }
        let lock = try await session.cipher("lock", "--json")
        #expect(try lock.json()["session_keyring"] as? Bool == false, "\(lock.stdout)")
        // No keeping asked for: nothing said.
        let quiet = try await session.cipher("status", passphrase: "pw", keep: "off")
        #expect(!quiet.stderr.contains("session keyring"), "\(quiet.stderr)")
    }

    @Test("CIPHER_KEEP_UNLOCKED takes whole seconds up to 43200, 0 or off; anything else is a usage error, never the default")
    func keepUnlockedIsStrict() async throws {
        let session = try Session()
        defer { session.cleanup() }
        for bad in ["no", "false", "5m", "-1", "+5", "1e3", "4294967295", "43201", "", " ", "9999999999999"] {
            let result = try await session.cipher("status", "--json", passphrase: "pw", keep: bad)
            #expect(result.status == 2, "\(bad.debugDescription): \(result.stderr)")
            #expect(result.stderr.contains("CIPHER_KEEP_UNLOCKED") && result.stderr.contains("43200"), "\(result.stderr)")
            #expect(try Self.sessionCopies(session.home).isEmpty, "\(bad.debugDescription)")
        }
        for good in ["0", "off", "1", "43200", " 60 "] {
            let result = try await session.cipher("status", "--json", passphrase: "pw", keep: good)
            #expect(try result.errorKind() == "notPaired", "\(good): \(result.stderr)")
        }
        let unset = try await session.cipher("status", "--json", passphrase: "pw", keep: nil)
        #expect(try unset.errorKind() == "notPaired", "\(unset.stderr)")
        // The help text documents what is accepted.
        let help = try await CLIProcess.run(["--help"])
        #expect(help.stdout.contains("43200") && help.stdout.contains("0 or off"), "\(help.stdout)")
        _ = try await session.cipher("lock")
    }

    @Test("An expired kept key, or one that does not open the store any more, falls back to asking")
    func expiredOrStaleKeyFallsBack() async throws {
        let session = try Session()
        defer { session.cleanup() }
        guard try await session.keepsKeys() else { return }
        // A store created with "pw" and its key kept for one second: gone after it.
        let created = try await session.cipher("status", "--json", passphrase: "pw", keep: "1")
        #expect(try created.errorKind() == "notPaired", "\(created.stderr)")
        try await Task.sleep(nanoseconds: 2_500_000_000)
        let expired = try await session.cipher("status")
        #expect(expired.status == 2 && expired.stderr.contains("CIPHER_PASSPHRASE"), "\(expired.stderr)")

        // Kept again, then the store is re-created under another passphrase: the kept key does
        // not open it, so the passphrase is asked (and the new one works).
        _ = try await session.cipher("status", passphrase: "pw")
        let kept = try await session.cipher("status", "--json")
        #expect(try kept.errorKind() == "notPaired", "\(kept.stderr)")
        let other = try TemporaryDirectory.cipherHome(passphrase: "other")
        defer { other.cleanup() }
        _ = try await session.cipher("status", in: other.url, passphrase: "other", keep: "0")
        let params = session.home.appendingPathComponent("keystore.params")
        try FileManager.default.removeItem(at: params)
        try FileManager.default.copyItem(at: other.file("keystore.params"), to: params)
        let stale = try await session.cipher("status")
        #expect(stale.status == 2 && stale.stderr.contains("CIPHER_PASSPHRASE"), "\(stale.stderr)")
        let rekeyed = try await session.cipher("status", "--json", passphrase: "other")
        #expect(try rekeyed.errorKind() == "notPaired", "\(rekeyed.stderr)")
        _ = try await session.cipher("lock")
    }

    @Test("A station gone from its address: a few words, what was tried and `cipher move`; --verbose for the details")
    func unreachableStationInWords() async throws {
        let paired = try await CipherCLITests.pairedHome()
        defer { paired.cleanup() }
        let port = try #require(paired.url.port)
        paired.emulator.stop()
        let short = try await paired.cipher("status", "--json")
        #expect(short.status == 4, "\(short.stderr)")
        #expect(short.stderr.contains("cannot reach the station at http://127.0.0.1:\(port) (no connection could be made)"), "\(short.stderr)")
        #expect(short.stderr.contains("Tried: finding its new address through its signed IPNS record"), "\(short.stderr)")
        #expect(short.stderr.contains("cipher move NEW-URL"), "\(short.stderr)")
        #expect(!short.stderr.contains("code "), "\(short.stderr)")
        #expect(try short.errorKind() == "unreachable")
        let verbose = try await paired.cipher("status", "--verbose")
        #expect(verbose.status == 4)
        #expect(verbose.stderr.contains("no new endpoint found"), "\(verbose.stderr)")
    }

    @Test("cipher move checks the station at the new address: another key is asked for, another station refused")
    func moveToANewAddress() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        let front = try TLSFront.start(backendPort: try #require(paired.url.port.map(UInt16.init)), certificate: .runPyStyle)
        defer { front.stop() }
        let frontURL = front.url("").absoluteString

        let untrusted = try await paired.cipher("move", frontURL, "--json")
        #expect(untrusted.status == 3, "\(untrusted.stderr)")
        #expect(untrusted.stderr.contains("cipher move \(frontURL) --fingerprint"), "\(untrusted.stderr)")
        #expect((try untrusted.jsonError())?["presented_fingerprint"] as? String == front.pin.pinString)

        let other = try StationEmulator()
        defer { other.stop() }
        let otherURL = try other.start()
        let elsewhere = try await paired.cipher("move", otherURL.absoluteString)
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("another station"), "\(elsewhere.stderr)")
        let unchanged = try await paired.cipherJSON("status")
        #expect(unchanged.1["endpoint"] as? String == paired.url.absoluteString)

        let (moved, movedJSON) = try await paired.cipherJSON("move", frontURL, "--fingerprint", front.pin.pinString)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(movedJSON["previous_endpoint"] as? String == paired.url.absoluteString)
        #expect(movedJSON["tls_pin"] as? String == front.pin.pinString)
        let (status, statusJSON) = try await paired.cipherJSON("status")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(statusJSON["endpoint"] as? String == frontURL)
        #expect(statusJSON["tls_pin"] as? String == front.pin.pinString)
    }

    @Test("ls lists newest first by date, ties in reverse manifest order; --manifest-order keeps the manifest's")
    func listNewestFirst() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        let device = try await paired.otherDevice()
        let now = Int(Date().timeIntervalSince1970)
        for (name, date) in [("middle.txt", now - 60), ("newest.txt", now), ("oldest.txt", now - 3600)] {
            _ = try await device.publish(data: Data(name.utf8), metadata: DriveFileMetadata(filename: name, createdAt: date),
                                         audience: .selfOnly)
        }
        // Two in the same second: the later published first.
        for name in ["tie-a.txt", "tie-b.txt"] {
            _ = try await device.publish(data: Data(name.utf8), metadata: DriveFileMetadata(filename: name, createdAt: now - 600),
                                         audience: .selfOnly)
        }
        let (_, listed) = try await paired.cipherJSON("ls")
        let names = (listed["posts"] as? [[String: Any]])?.map { $0["filename"] as? String }
        #expect(names == ["newest.txt", "middle.txt", "tie-b.txt", "tie-a.txt", "oldest.txt"])
        let (_, manifest) = try await paired.cipherJSON("ls", "--manifest-order")
        #expect((manifest["posts"] as? [[String: Any]])?.map { $0["filename"] as? String }
                == ["middle.txt", "newest.txt", "oldest.txt", "tie-a.txt", "tie-b.txt"])
    }
}
#endif
