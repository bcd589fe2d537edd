import Foundation
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
        let home = try TemporaryDirectory(prefix: "cipher-cli")
        defer { home.cleanup() }

        let refused = try await CLIProcess.run(["pair", front.url("").absoluteString, "--home", home.url.path, "--json"],
                                               environment: environment)
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("openssl x509 -in cert.pem -pubkey -noout"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--fingerprint"))
        let error = try #require(try refused.json()["error"] as? [String: Any])
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
        let home = try TemporaryDirectory(prefix: "cipher-cli")
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
            let error = try #require(try result.json()["error"] as? [String: Any])
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
