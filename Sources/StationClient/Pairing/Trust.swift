import Foundation
import Transport

extension StationClient {
    /// The TLS key pin the client's requests carry now: the app's override
    /// (``StationClientConfiguration/stationPublicKeyPins``) or the pin kept in the credentials
    /// when the current endpoint is trusted by it; empty when a trusted authority vouches for the
    /// endpoint (or it is plain `http`).
    public var activePins: [PublicKeyFingerprint] { connection.origin.pins }

    /// Pins the station's TLS key anew, on purpose: after the station changed its key (every
    /// request is refused with `StationClientError.Kind.keyChanged` until then), or to pin a
    /// station that was trusted through a certificate authority.
    ///
    /// The current endpoint must present exactly `fingerprint` (checked with a pinned
    /// `GET /health` before anything is stored); the credentials then keep it as
    /// ``DeviceCredentials/stationPublicKeyPin``, trusted by it. Never called by the SDK itself:
    /// a key change is never accepted automatically.
    ///
    /// - Throws: ``StationClientError``: `.untrustedKey` when the endpoint presents another key
    ///   (with both fingerprints), `.refused` for a plain `http` endpoint, `.unreachable` when it
    ///   does not answer, `.keyStore` when the credentials cannot be saved.
    public func trust(fingerprint: PublicKeyFingerprint) async throws {
        let operation = "trusting the station's TLS key"
        let endpoint = credentials.endpoint
        guard endpoint.scheme?.lowercased() == "https" else {
            throw StationClientError(.refused, operation: operation, message: "\(endpoint.absoluteString) is plain http: there is no key to pin")
        }
        do {
            _ = try await StationConnection.read(.health, at: StationOrigin(url: endpoint, pins: [fingerprint]),
                                                 transport: configuration.transport, timeouts: configuration.requestTimeouts)
        } catch let error as StationClientError where error.kind == .keyChanged {
            var refused = StationClientError(.untrustedKey, operation: operation,
                                             message: "the station presents another TLS key than the key to trust",
                                             transportError: error.transportError, underlying: error)
            refused.expectedFingerprint = fingerprint
            refused.presentedFingerprint = await configuration.transport.readablePublicKey(at: endpoint)
            throw refused
        }
        let previous = credentials.stationPublicKeyPin
        try await connection.updateCredentials { credentials in
            credentials.stationPublicKeyPin = fingerprint
            credentials.pinnedEndpoint = endpoint
            credentials.endpointTrust = .pinnedKey
            return true
        }
        configuration.log(.warning, "the station's TLS key is now trusted as \(fingerprint) (was \(previous.map(\.pinString) ?? "none"))")
    }

    /// The fingerprint of the TLS key the current endpoint presents, read without trusting it
    /// (for showing a user what changed), or `nil` for plain `http` or a transport that cannot
    /// read it (one whose `HTTPTransport.presentedPublicKey(at:)` answers `.probingUnsupported`).
    ///
    /// - Throws: ``StationClientError`` (`.unreachable`) when no TLS handshake completes.
    public func presentedFingerprint() async throws -> PublicKeyFingerprint? {
        let endpoint = credentials.endpoint
        guard endpoint.scheme?.lowercased() == "https" else { return nil }
        do {
            return try await configuration.transport.presentedPublicKey(at: endpoint)
        } catch let error as TransportError where error.kind == .probingUnsupported {
            return nil
        } catch {
            throw StationClientError.wrap(error, operation: "reading the station's TLS key")
        }
    }
}

extension HTTPTransport {
    /// The key `url`'s server presents, or `nil` when this transport cannot read one or no
    /// handshake completes: for naming the presented key in an error that is thrown anyway.
    func readablePublicKey(at url: URL) async -> PublicKeyFingerprint? {
        try? await presentedPublicKey(at: url)
    }
}
