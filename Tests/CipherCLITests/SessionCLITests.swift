import Foundation
import Manifest
import StationClient
import StationEmulator
import TestSupport
import Testing
import TransportTestSupport

/// The session unlock (the store key kept in the kernel keyring), `cipher lock`, `cipher move`,
/// the short words for an unreachable station, and `ls`'s order.
@Suite("cipher CLI: session, move, order", .serialized)
struct SessionCLITests {
    static let passphrase = "correct horse battery staple"

    /// Runs `cipher` in `home` keeping the unlocked key for `keep` seconds, with `passphrase` if given.
    static func cipher(_ arguments: [String], home: URL, passphrase: String?, keep: String = "900") async throws -> CLIResult {
        var environment = ["CIPHER_KEEP_UNLOCKED": keep]
        if let passphrase { environment["CIPHER_PASSPHRASE"] = passphrase }
        return try await CLIProcess.run(arguments + ["--home", home.path], environment: environment)
    }

    /// Whether this system lets `cipher` keep a key (a Linux kernel with keys, a keyring not
    /// refused by a sandbox); elsewhere the plain unlock is the behaviour, tested everywhere else.
    static func keyringAvailable(home: URL) async throws -> Bool {
        let lock = try await cipher(["lock", "--json"], home: home, passphrase: nil)
        #expect(lock.status == 0, "\(lock.stderr)")
        return try lock.json()["session_keyring"] as? Bool == true
    }

    @Test("After one unlock, the next command needs no passphrase; cipher lock makes it ask again")
    func secondCommandNeedsNoPassphraseUntilLock() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        let home = paired.home.url
        guard try await Self.keyringAvailable(home: home) else { return }

        // No key kept yet (pairing ran with CIPHER_KEEP_UNLOCKED=0): asked, and refused without a terminal.
        let asked = try await Self.cipher(["status"], home: home, passphrase: nil)
        #expect(asked.status == 2 && asked.stderr.contains("CIPHER_PASSPHRASE"), "\(asked.stderr)")
        let first = try await Self.cipher(["status", "--json"], home: home, passphrase: Self.passphrase)
        #expect(first.status == 0, "\(first.stderr)")
        // The same session: no passphrase, not even a wrong one is looked at.
        let second = try await Self.cipher(["status", "--json"], home: home, passphrase: nil)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try second.json()["station_uid"] as? String == paired.emulator.uid)
        let listed = try await Self.cipher(["ls"], home: home, passphrase: nil)
        #expect(listed.status == 0, "\(listed.stderr)")
        // CIPHER_KEEP_UNLOCKED=0 neither keeps nor uses a kept key.
        let unkept = try await Self.cipher(["status"], home: home, passphrase: nil, keep: "0")
        #expect(unkept.status == 2, "\(unkept.stderr)")

        // The store's at-rest cost stays at least libsodium's "interactive" (2 passes, 64 MiB).
        let params = [UInt8](try Data(contentsOf: home.appendingPathComponent("keystore.params")))
        try #require(params.count >= 29)
        func limit(_ offset: Int) -> UInt32 { params[offset..<(offset + 4)].reduce(0) { ($0 << 8) | UInt32($1) } }
        #expect(limit(21) >= 2 && limit(25) >= 64 * 1024)
        // Nothing of the key is on disk: the home holds what it held before.
        let names = try FileManager.default.contentsOfDirectory(atPath: home.path).sorted()
        #expect(!names.contains { $0.localizedCaseInsensitiveContains("session") }, "\(names)")

        let lock = try await Self.cipher(["lock", "--json"], home: home, passphrase: nil)
        #expect(lock.status == 0, "\(lock.stderr)")
        #expect(try lock.json()["forgot"] as? Bool == true, "\(lock.stdout)")
        let afterLock = try await Self.cipher(["status"], home: home, passphrase: nil)
        #expect(afterLock.status == 2 && afterLock.stderr.contains("CIPHER_PASSPHRASE"), "\(afterLock.stderr)")
        let again = try await Self.cipher(["lock"], home: home, passphrase: nil)
        #expect(again.status == 0 && again.stdout.contains("nothing to lock"), "\(again.stdout)")
    }

    @Test("An expired kept key, or one that does not open the store any more, falls back to asking")
    func expiredOrStaleKeyFallsBack() async throws {
        let home = try TemporaryDirectory(prefix: "cipher-cli")
        defer { home.cleanup() }
        guard try await Self.keyringAvailable(home: home.url) else { return }
        // A store created with "pw" and its key kept for one second: gone after it.
        let created = try await Self.cipher(["status", "--json"], home: home.url, passphrase: "pw", keep: "1")
        #expect((try created.json()["error"] as? [String: Any])?["kind"] as? String == "notPaired", "\(created.stderr)")
        try await Task.sleep(nanoseconds: 2_500_000_000)
        let expired = try await Self.cipher(["status"], home: home.url, passphrase: nil)
        #expect(expired.status == 2 && expired.stderr.contains("CIPHER_PASSPHRASE"), "\(expired.stderr)")

        // Kept again, then the store is re-created under another passphrase: the kept key does
        // not open it, so the passphrase is asked (and the new one works).
        _ = try await Self.cipher(["status"], home: home.url, passphrase: "pw")
        let kept = try await Self.cipher(["status", "--json"], home: home.url, passphrase: nil)
        #expect((try kept.json()["error"] as? [String: Any])?["kind"] as? String == "notPaired", "\(kept.stderr)")
        let other = try TemporaryDirectory(prefix: "cipher-cli")
        defer { other.cleanup() }
        _ = try await Self.cipher(["status"], home: other.url, passphrase: "other", keep: "0")
        let params = home.file("keystore.params")
        try FileManager.default.removeItem(at: params)
        try FileManager.default.copyItem(at: other.file("keystore.params"), to: params)
        let stale = try await Self.cipher(["status"], home: home.url, passphrase: nil)
        #expect(stale.status == 2 && stale.stderr.contains("CIPHER_PASSPHRASE"), "\(stale.stderr)")
        let rekeyed = try await Self.cipher(["status", "--json"], home: home.url, passphrase: "other")
        #expect((try rekeyed.json()["error"] as? [String: Any])?["kind"] as? String == "notPaired", "\(rekeyed.stderr)")
        _ = try await Self.cipher(["lock"], home: home.url, passphrase: nil)
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
        #expect((try short.json()["error"] as? [String: Any])?["kind"] as? String == "unreachable")
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
        #expect((try untrusted.json()["error"] as? [String: Any])?["presented_fingerprint"] as? String == front.pin.pinString)

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
