// Tests of the cipher command line, a macOS and Linux program that most of them start: iOS, tvOS,
// watchOS and visionOS start no programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
import Foundation
import Manifest
import StationClient
import StationEmulator
import TestSupport
import Testing
import TransportTestSupport

/// `cipher pair --fingerprint`, the refusal without a terminal, `status`, a key change and
/// `cipher trust`, against the emulator behind a TLS front with run.py's kind of certificate.
@Suite("cipher CLI: TLS trust", .serialized)
struct TrustCLITests {
    let environment = ["CIPHER_PASSPHRASE": "correct horse battery staple"]

    func pair(_ emulator: StationEmulator, url: URL, home: TemporaryDirectory, extra: [String]) async throws -> CLIResult {
        let arguments = ["pair", url.absoluteString, "--name", "tls laptop", "--home", home.url.path, "--json"] + extra
        let before = emulator.log.pins.count
        return try await CLIProcess.run(arguments, environment: environment) {
            [await CipherCLITests.waitForPIN(emulator, after: before) ?? ""]
        }
    }

    @Test("pair --fingerprint pins without asking; without it and without a terminal, pairing is refused with the openssl line")
    func pairWithFingerprintOrRefuse() async throws {
        let emulator = try StationEmulator()
        let station = try emulator.start()
        defer { emulator.stop() }
        let front = try TLSFront.start(backendPort: try #require(station.port.map(UInt16.init)), certificate: .runPyStyle)
        defer { front.stop() }
        let home = try TemporaryDirectory.cipherHome()
        defer { home.cleanup() }

        let refused = try await CLIProcess.run(["pair", front.url("").absoluteString, "--home", home.url.path, "--json"],
                                               environment: environment)
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("openssl x509 -in cert.pem -pubkey -noout"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--fingerprint"))
        let error = try #require(try refused.jsonError())
        #expect(error["kind"] as? String == "untrustedKey")
        #expect(error["presented_fingerprint"] as? String == front.pin.pinString)
        #expect(emulator.requests.count(RequestRoute("POST", path: "/delegate/start")) == 0)

        let paired = try await pair(emulator, url: front.url(""), home: home, extra: ["--fingerprint", front.pin.pinString])
        #expect(paired.status == 0, "\(paired.stderr)")
        let output = try paired.json()
        #expect(output["tls_pin"] as? String == front.pin.pinString)
        #expect(output["endpoint_trust"] as? String == "pinned_key")

        let status = try await CLIProcess.run(["status", "--home", home.url.path, "--json"], environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try status.json()["tls_pin"] as? String == front.pin.pinString)
        let human = try await CLIProcess.run(["status", "--home", home.url.path], environment: environment)
        #expect(human.stdout.contains("pinned \(front.pin.pinString)"), "\(human.stdout)")

        let bad = try await CLIProcess.run(["pair", front.url("").absoluteString, "--fingerprint", "sha256//nope", "--home", home.url.path],
                                           environment: environment)
        #expect(bad.status == 2)
    }

    @Test("After a key change every command exits 3 naming both keys; cipher trust re-pins on purpose")
    func keyChangeAndTrust() async throws {
        let emulator = try StationEmulator()
        let station = try emulator.start()
        defer { emulator.stop() }
        let backend = try #require(station.port.map(UInt16.init))
        let front = try TLSFront.start(backendPort: backend, certificate: .runPyStyle)
        let home = try TemporaryDirectory.cipherHome()
        defer { home.cleanup() }
        let paired = try await pair(emulator, url: front.url(""), home: home, extra: ["--fingerprint", front.pin.pinString])
        #expect(paired.status == 0, "\(paired.stderr)")
        let port = front.port
        front.stop()
        let replaced = try TLSFront.start(backendPort: backend, certificate: .runPyStyle, port: port)
        defer { replaced.stop() }

        for command in [["status"], ["ls"]] {
            let result = try await CLIProcess.run(command + ["--home", home.url.path, "--json"], environment: environment)
            #expect(result.status == 3, "\(command): \(result.stderr)")
            #expect(result.stderr.contains(front.pin.pinString) && result.stderr.contains(replaced.pin.pinString), "\(result.stderr)")
            #expect(result.stderr.contains("cipher trust --fingerprint \(replaced.pin.pinString)"), "\(result.stderr)")
            let error = try #require(try result.jsonError())
            #expect(error["kind"] as? String == "keyChanged")
            #expect(error["expected_fingerprint"] as? String == front.pin.pinString)
            #expect(error["presented_fingerprint"] as? String == replaced.pin.pinString)
        }
        let wrong = try await CLIProcess.run(["trust", "--fingerprint", front.pin.pinString, "--home", home.url.path],
                                             environment: environment)
        #expect(wrong.status == 3, "\(wrong.stderr)")
        let trusted = try await CLIProcess.run(["trust", "--fingerprint", replaced.pin.pinString, "--home", home.url.path, "--json"],
                                               environment: environment)
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(try trusted.json()["previous_pin"] as? String == front.pin.pinString)
        let status = try await CLIProcess.run(["status", "--home", home.url.path, "--json"], environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try status.json()["tls_pin"] as? String == replaced.pin.pinString)
    }
}

/// `cipher follow URL --fingerprint` against a self-signed followed station (the emulator behind a
/// TLS front): the pin is kept in the home's `following.json`, `cipher read URL` uses it, and a
/// changed key is refused as pairing refuses one, until `cipher follow URL --fingerprint NEW`.
@Suite("cipher CLI: a followed station's TLS pin", .serialized)
struct FollowedStationPinCLITests {
    @Test("follow --fingerprint keeps the pin; read and read --get use it; a changed key is refused naming both keys")
    func followedStationPin() async throws {
        let paired = try await CipherCLITests.pairedHome()
        defer { paired.cleanup() }
        let other = try StationEmulator()
        defer { other.stop() }
        let otherURL = try other.start()
        let otherGateway = try #require(other.gatewayURL).absoluteString
        let backend = try #require(otherURL.port.map(UInt16.init))
        let front = try TLSFront.start(backendPort: backend, certificate: .runPyStyle)
        let frontURL = front.url("").absoluteString
        let owner = try await StationClient.pair(
            endpoint: otherURL, deviceName: "other owner",
            configuration: StationClientConfiguration(namespace: "drive", keyStore: InMemoryKeyStore(), transport: other.transport)
        ) { _ in other.log.latestPIN }

        // Without the key and without a terminal, following is refused with the follow command to run.
        let refused = try await paired.cipher("follow", frontURL, "--json")
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("cipher follow \(frontURL) --fingerprint"), "\(refused.stderr)")
        #expect(try refused.errorKind() == "untrustedKey")

        let (follow, followed) = try await paired.cipherJSON("follow", frontURL, "--fingerprint", front.pin.pinString)
        #expect(follow.status == 0, "\(follow.stderr)")
        #expect(followed["tls_pin"] as? String == front.pin.pinString)
        let followerUID = try #require(followed["follower_uid"] as? String)
        let kept = try JSONSerialization.jsonObject(with: Data(contentsOf: paired.home.file("following.json"))) as? [String: Any]
        let handles = try #require(kept?["following"] as? [[String: Any]])
        #expect(handles.map { $0["tls_public_key_pin"] as? String } == [front.pin.pinString])
        #expect(handles.map { $0["uid"] as? String } == [other.uid])

        _ = try await owner.approveFollower(uid: followerUID)
        _ = try await owner.publish(data: Data("shared".utf8), metadata: DriveFileMetadata(filename: "shared.txt"), audience: .allFollowers)
        let (read, readJSON) = try await paired.cipherJSON("read", frontURL, "--gateway", otherGateway)
        #expect(read.status == 0, "\(read.stderr)")
        #expect((readJSON["posts"] as? [[String: Any]])?.map { $0["filename"] as? String } == ["shared.txt"])
        let saved = paired.home.file("shared-copy.txt")
        let get = try await paired.cipher("read", frontURL, "--gateway", otherGateway, "--get", "shared.txt", "-o", saved.path)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(try Data(contentsOf: saved) == Data("shared".utf8))

        // The same address with another key: refused like a paired station's key change, nothing read.
        let port = front.port
        front.stop()
        let replaced = try TLSFront.start(backendPort: backend, certificate: .runPyStyle, port: port)
        defer { replaced.stop() }
        let profileReads = other.requests.count(RequestRoute("GET", path: "/profile"))
        let changed = try await paired.cipher("read", frontURL, "--gateway", otherGateway, "--json")
        #expect(changed.status == 3, "\(changed.stderr)")
        #expect(changed.stderr.contains("the station's TLS key changed: pinned \(front.pin.pinString), presented \(replaced.pin.pinString); refused"),
                "\(changed.stderr)")
        #expect(changed.stderr.contains("cipher follow \(frontURL) --fingerprint \(replaced.pin.pinString)"), "\(changed.stderr)")
        let error = try #require(try changed.jsonError())
        #expect(error["kind"] as? String == "keyChanged")
        #expect(error["expected_fingerprint"] as? String == front.pin.pinString)
        #expect(error["presented_fingerprint"] as? String == replaced.pin.pinString)
        #expect(other.requests.count(RequestRoute("GET", path: "/profile")) == profileReads)
        // Following again without a key expects the kept one, so it is refused too.
        let again = try await paired.cipher("follow", frontURL, "--json")
        #expect(again.status == 3, "\(again.stderr)")
        #expect(again.stderr.contains(replaced.pin.pinString), "\(again.stderr)")

        // Trusting the new key on purpose replaces the kept pin; reading works again.
        let (retrust, retrusted) = try await paired.cipherJSON("follow", frontURL, "--fingerprint", replaced.pin.pinString)
        #expect(retrust.status == 0, "\(retrust.stderr)")
        #expect(retrusted["tls_pin"] as? String == replaced.pin.pinString)
        let reread = try await paired.cipher("read", frontURL, "--gateway", otherGateway)
        #expect(reread.status == 0, "\(reread.stderr)")
        #expect(reread.stdout.contains("shared.txt"), "\(reread.stdout)")

        // Unfollowing forgets the kept handle.
        let unfollow = try await paired.cipher("unfollow", other.uid)
        #expect(unfollow.status == 0, "\(unfollow.stderr)")
        let remaining = try JSONSerialization.jsonObject(with: Data(contentsOf: paired.home.file("following.json"))) as? [String: Any]
        #expect((remaining?["following"] as? [[String: Any]])?.isEmpty == true)

        // Not followed any more, so no key is kept (and, under another name, no offline listing
        // either): read explains the self-signed key as follow does (exit 3, not a raw TLS
        // failure), and reads with the key given by --fingerprint.
        let unknownURL = "https://localhost:\(port)"
        let unpinned = try await paired.cipher("read", unknownURL, "--gateway", otherGateway, "--json")
        #expect(unpinned.status == 3, "\(unpinned.stderr)")
        #expect(unpinned.stderr.contains("cipher read \(unknownURL) --fingerprint"), "\(unpinned.stderr)")
        #expect(unpinned.stderr.contains("openssl x509 -in cert.pem -pubkey -noout"), "\(unpinned.stderr)")
        let unpinnedError = try #require(try unpinned.jsonError())
        #expect(unpinnedError["kind"] as? String == "untrustedKey")
        #expect(unpinnedError["presented_fingerprint"] as? String == replaced.pin.pinString)
        let pinned = try await paired.cipher("read", unknownURL, "--gateway", otherGateway, "--fingerprint", replaced.pin.pinString)
        #expect(pinned.status == 0, "\(pinned.stderr)")
        let wrongPin = try await paired.cipher("read", unknownURL, "--gateway", otherGateway, "--fingerprint", front.pin.pinString)
        #expect(wrongPin.status == 3, "\(wrongPin.stderr)")
    }
}
#endif
