import Foundation
import LoopbackHTTP
import StationEmulator
import Testing
import Transport

/// The in-process TLS simulation: LoopbackHTTP's rules (pins, self-signed, CA-trusted, probes, no
/// delivery on refusal) and the emulator's keys (self-signed, CA-trusted, changed, one per station).
@Suite("In process: simulated TLS")
struct SimulatedTLSTests {
    let key: PublicKeyFingerprint
    let otherKey: PublicKeyFingerprint
    let url: URL

    init() throws {
        key = try PublicKeyFingerprint(sha256: [UInt8](repeating: 0x01, count: 32))
        otherKey = try PublicKeyFingerprint(sha256: [UInt8](repeating: 0x02, count: 32))
        url = try #require(URL(string: "https://station.test:8443/health"))
    }

    /// A transport into a handler that answers 200 and counts what it is handed, presenting `certificate`.
    static func transport(presenting certificate: SimulatedCertificate?) -> (InProcessHTTPTransport, Locked<Int>) {
        let handled = Locked(0)
        let transport = InProcessHTTPTransport(handler: { _, response in
            handled.withLock { $0 += 1 }
            try response.send(status: 200, body: Array("ok".utf8))
        }, certificate: { certificate })
        return (transport, handled)
    }

    static func get(_ transport: some HTTPTransport, _ url: URL, pins: [PublicKeyFingerprint],
                    response: ResponseDestination = .memory(limit: 1 << 20)) async throws -> HTTPResponse {
        try await transport.send(HTTPRequest(method: .get, url: url), body: .none,
                                 options: TransferOptions(response: response, pinnedPublicKeys: pins))
    }

    static func refusal(_ body: () async throws -> Void) async -> TransportError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? TransportError
        }
    }

    // MARK: LoopbackHTTP's rules

    @Test("A self-signed server: pinned to its key (or a set holding it) delivered, other pins and no pins refused unsent")
    func selfSigned() async throws {
        let (transport, handled) = Self.transport(presenting: SimulatedCertificate(publicKey: key, isSignedByTrustedAuthority: false))
        #expect(try await Self.get(transport, url, pins: [key]).status == 200)
        #expect(try await Self.get(transport, url, pins: [otherKey, key]).status == 200)
        #expect(handled.value == 2)

        let mismatch = await Self.refusal { _ = try await Self.get(transport, url, pins: [otherKey]) }
        #expect(mismatch?.kind == .pinMismatch)
        #expect(mismatch?.method == .get && mismatch?.url == url)
        let unpinned = await Self.refusal { _ = try await Self.get(transport, url, pins: []) }
        #expect(unpinned?.kind == .tlsFailure)
        #expect(unpinned?.message.contains("self-signed") == true)
        #expect(unpinned?.url == url)
        #expect(handled.value == 2, "a refused request never reaches the handler")
    }

    @Test("A refused request to a file leaves no file, and its body is never read")
    func refusalWritesNothing() async throws {
        let (transport, handled) = Self.transport(presenting: SimulatedCertificate(publicKey: key, isSignedByTrustedAuthority: false))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("simulated-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("body")
        let read = Locked(false)
        let body = HTTPBodyStream(length: 3) {
            read.withLock { $0 = true }
            return nil
        }
        let error = await Self.refusal {
            _ = try await transport.send(HTTPRequest(method: .post, url: url), body: .stream(body),
                                         options: TransferOptions(response: .file(destination), pinnedPublicKeys: [otherKey]))
        }
        #expect(error?.kind == .pinMismatch)
        #expect(error?.method == .post)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(!read.value)
        #expect(handled.value == 0)
    }

    @Test("A CA-signed server: unpinned delivered, pinned only to its key")
    func caSigned() async throws {
        let (transport, handled) = Self.transport(presenting: SimulatedCertificate(publicKey: key, isSignedByTrustedAuthority: true))
        #expect(try await Self.get(transport, url, pins: []).status == 200)
        #expect(try await Self.get(transport, url, pins: [key]).status == 200)
        let mismatch = await Self.refusal { _ = try await Self.get(transport, url, pins: [otherKey]) }
        #expect(mismatch?.kind == .pinMismatch)
        #expect(handled.value == 2)
    }

    @Test("A probe answers the presented key, trusted or not, and delivers nothing; http is not probed")
    func probe() async throws {
        let (transport, handled) = Self.transport(presenting: SimulatedCertificate(publicKey: key, isSignedByTrustedAuthority: false))
        #expect(try await transport.presentedPublicKey(at: url) == key)
        let http = try #require(URL(string: "http://station.test/"))
        let plain = await Self.refusal { _ = try await transport.presentedPublicKey(at: http) }
        #expect(plain?.kind == .invalidRequest)
        #expect(plain?.method == .get && plain?.url == http)
        #expect(handled.value == 0)
    }

    @Test("A server presenting no certificate speaks no TLS: https refused and not probed, http delivered")
    func noCertificate() async throws {
        let (transport, handled) = Self.transport(presenting: nil)
        let refused = await Self.refusal { _ = try await Self.get(transport, url, pins: []) }
        #expect(refused?.kind == .tlsFailure)
        let probe = await Self.refusal { _ = try await transport.presentedPublicKey(at: url) }
        #expect(probe?.kind == .tlsFailure)
        #expect(handled.value == 0)
        let http = try #require(URL(string: "http://station.test/health"))
        #expect(try await Self.get(transport, http, pins: []).status == 200)
        let pinnedHTTP = await Self.refusal { _ = try await Self.get(transport, http, pins: [key]) }
        #expect(pinnedHTTP?.kind == .invalidRequest)
        #expect(handled.value == 1)
    }

    // MARK: The emulator's keys

    @Test("A new emulator presents a CA-trusted random key: unpinned https works, pins must name its key")
    func emulatorDefault() async throws {
        let emulator = try StationEmulator()
        let transport = emulator.transport
        #expect(!emulator.presentsSelfSignedKey)
        #expect(try await transport.presentedPublicKey(at: url) == emulator.serverKeyFingerprint)
        #expect(try await Self.get(transport, url, pins: []).status == 200)
        #expect(try await Self.get(transport, url, pins: [emulator.serverKeyFingerprint]).status == 200)
        let mismatch = await Self.refusal { _ = try await Self.get(transport, url, pins: [otherKey]) }
        #expect(mismatch?.kind == .pinMismatch)
        #expect(emulator.requests.entries.count == 2)
        #expect(try StationEmulator().serverKeyFingerprint != emulator.serverKeyFingerprint)
    }

    @Test("Self-signed: unpinned refused, pinned delivered; a key change reaches a transport made before it")
    func emulatorSelfSignedAndKeyChange() async throws {
        let emulator = try StationEmulator()
        let transport = emulator.transport
        let first = emulator.presentSelfSignedKey()
        #expect(emulator.presentsSelfSignedKey && emulator.serverKeyFingerprint == first)
        let unpinned = await Self.refusal { _ = try await Self.get(transport, url, pins: []) }
        #expect(unpinned?.kind == .tlsFailure)
        #expect(try await Self.get(transport, url, pins: [first]).status == 200)

        let second = emulator.changeServerKey()
        #expect(second != first && emulator.serverKeyFingerprint == second)
        #expect(emulator.presentsSelfSignedKey, "a key change keeps the kind of certificate")
        #expect(try await transport.presentedPublicKey(at: url) == second)
        let stale = await Self.refusal { _ = try await Self.get(transport, url, pins: [first]) }
        #expect(stale?.kind == .pinMismatch)
        #expect(try await Self.get(transport, url, pins: [second]).status == 200)
        #expect(emulator.requests.entries.count == 2)

        #expect(emulator.presentSelfSignedKey(key) == key)
        #expect(try await emulator.transport.presentedPublicKey(at: url) == key)
        let trusted = emulator.presentCATrustedKey()
        #expect(!emulator.presentsSelfSignedKey && trusted != key)
        #expect(try await Self.get(transport, url, pins: []).status == 200)
    }

    @Test("On a network each emulator presents its own key; a gateway host presents a CA-trusted one of its own")
    func networkKeys() async throws {
        let network = StationNetwork()
        let alice = try StationEmulator()
        let bob = try StationEmulator()
        network.attach(alice, host: "alice.test", gatewayHost: "gateway.test")
        network.attach(bob, host: "bob.test")
        let aliceKey = alice.presentSelfSignedKey()
        let bobKey = bob.presentSelfSignedKey()
        #expect(aliceKey != bobKey)
        let transport = network.transport
        let aliceURL = try #require(URL(string: "https://alice.test/health"))
        let bobURL = try #require(URL(string: "https://bob.test/health"))
        #expect(try await transport.presentedPublicKey(at: aliceURL) == aliceKey)
        #expect(try await transport.presentedPublicKey(at: bobURL) == bobKey)
        #expect(try await Self.get(transport, aliceURL, pins: [aliceKey]).status == 200)
        let crossed = await Self.refusal { _ = try await Self.get(transport, bobURL, pins: [aliceKey]) }
        #expect(crossed?.kind == .pinMismatch && crossed?.url == bobURL)
        #expect(bob.requests.entries.isEmpty)

        let gateway = try #require(URL(string: "https://gateway.test/ipns/\(alice.ipnsName)"))
        let gatewayKey = try await transport.presentedPublicKey(at: gateway)
        #expect(gatewayKey != aliceKey)
        #expect(try await Self.get(transport, gateway, pins: []).status == 404)
        // Alice's key change is hers alone.
        let changed = alice.changeServerKey()
        #expect(try await transport.presentedPublicKey(at: aliceURL) == changed)
        #expect(try await transport.presentedPublicKey(at: bobURL) == bobKey)
        #expect(try await transport.presentedPublicKey(at: gateway) == gatewayKey)
    }
}
