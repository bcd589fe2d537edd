import CurlTransport
import Foundation
import StationClient
import StationEmulator
import Transport

/// The station an example runs against: an embedded ``StationEmulator`` served on loopback (the
/// default), or a real station given with `--station URL` (and optionally `--gateway URL` and,
/// for a self-signed `https` station such as one `run.py` starts, `--fingerprint sha256//…`).
///
/// Either way the example talks HTTP through ``CurlTransport``, exactly as an app would.
public final class ExampleStation: Sendable {
    /// The station's URL.
    public let endpoint: URL
    /// The embedded emulator, or `nil` against a real station.
    public let emulator: StationEmulator?
    /// The transport every call goes through.
    public let transport: CurlTransport
    /// The IPFS gateway (the emulator's, or `--gateway`), if any.
    public let gateway: IPFSGateway?
    /// The station's TLS key as given with `--fingerprint`, if any: pairing pins it without asking.
    public let fingerprint: PublicKeyFingerprint?

    /// Reads `--station URL`, `--gateway URL` and `--fingerprint sha256//…` from the command line;
    /// without `--station`, starts an emulator on loopback.
    ///
    /// - Throws: ``ExampleError`` for a malformed URL or fingerprint; the emulator's errors when it
    ///   cannot start.
    public init(arguments: [String] = CommandLine.arguments) throws {
        transport = CurlTransport()
        if let text = Self.option("--fingerprint", in: arguments) {
            guard let parsed = try? PublicKeyFingerprint(pin: text) else {
                throw ExampleError("\(text) is not a fingerprint (sha256//<base64>)")
            }
            fingerprint = parsed
        } else {
            fingerprint = nil
        }
        if let station = Self.option("--station", in: arguments) {
            guard let url = URL(string: station), url.host != nil else { throw ExampleError("\(station) is not a URL") }
            endpoint = url
            emulator = nil
            if let given = Self.option("--gateway", in: arguments) {
                guard let gatewayURL = URL(string: given), gatewayURL.host != nil else { throw ExampleError("\(given) is not a URL") }
                gateway = IPFSGateway(baseURL: gatewayURL, transport: transport)
            } else {
                gateway = nil
            }
        } else {
            let emulator = try StationEmulator()
            endpoint = try emulator.start()
            guard let gatewayURL = emulator.gatewayURL else { throw ExampleError("the emulator's gateway did not start") }
            gateway = IPFSGateway(baseURL: gatewayURL, transport: transport)
            self.emulator = emulator
        }
    }

    /// `true` when running against the embedded emulator.
    public var isEmbedded: Bool { emulator != nil }

    /// A client configuration for `namespace` with an in-memory key store.
    public func configuration(namespace: String = "drive") -> StationClientConfiguration {
        StationClientConfiguration(namespace: namespace, keyStore: InMemoryKeyStore(), transport: transport, gateway: gateway)
    }

    /// Pairs a new device. The PIN comes from the emulator's log, or is asked on the terminal
    /// for a real station (the station prints it in its log). A self-signed `https` station's key
    /// is pinned when it is the `--fingerprint` given; without one it is shown and asked about.
    ///
    /// - Throws: ``StationClientError`` when pairing fails (`.untrustedKey` for a key not accepted).
    public func pair(deviceName: String, namespace: String = "drive") async throws -> StationClient {
        let emulator = self.emulator
        return try await StationClient.pair(endpoint: endpoint, deviceName: deviceName,
                                            configuration: configuration(namespace: namespace), trust: keyTrust) { prompt in
            if let emulator { return emulator.log.latestPIN }
            FileHandle.standardError.write(Data("PIN shown by the station (\(prompt.attemptsLeft) attempts left): ".utf8))
            return readLine(strippingNewline: true)
        }
    }

    /// How this station's TLS key is trusted (pairing with it, or following it): the
    /// `--fingerprint` given, else shown on the terminal and asked about.
    public var keyTrust: StationKeyTrust {
        if let fingerprint { return .expected(fingerprint) }
        return .confirm { prompt in
            FileHandle.standardError.write(Data("""
                The station presents a self-signed TLS key: \(prompt.fingerprint.pinString)
                (on the station: openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der \
                | openssl dgst -sha256 -binary | base64). Trust it? [y/N] 
                """.utf8))
            return readLine(strippingNewline: true)?.lowercased().hasPrefix("y") == true
        }
    }

    /// Stops the embedded emulator, if any.
    public func stop() { emulator?.stop() }

    private static func option(_ name: String, in arguments: [String]) -> String? {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }
}

/// A failure in an example's own setup.
public struct ExampleError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    /// Creates an error with a message.
    public init(_ description: String) { self.description = description }
}

/// Runs an example's body, printing any error and exiting with status 1 on failure.
public func runExample(_ body: @Sendable (ExampleStation) async throws -> Void) async {
    do {
        let station = try ExampleStation()
        defer { station.stop() }
        try await body(station)
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        exit(1)
    }
}
