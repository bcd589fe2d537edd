import Foundation
import Manifest
import Transport
import OrderedJSON
import ContentAddressing

extension StationConnection {
    /// Runs `body` against the current endpoint; when the station cannot be reached (connection
    /// refused, DNS failure, time-out, or a tunnel's 5xx), finds the station's new endpoint through
    /// its signed IPNS record and runs `body` once more there.
    ///
    /// Concurrent failures share one resolution; a failure that started on an endpoint that has
    /// since been replaced just retries on the new one; the retry itself never resolves again.
    /// When no verified new endpoint is found, the original unreachable error is thrown (the
    /// search's failure as its ``StationClientError/underlying``), so callers still fall back to
    /// the offline view. A pinned request refused for another key becomes `.keyChanged` with both
    /// fingerprints. A tunnel's 5xx reaches here as `.unreachable`, thrown by
    /// ``exchange(_:at:signing:transport:)``.
    func withEndpointMobility(
        operation: String, _ body: @Sendable (StationOrigin) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        let origin = self.origin
        var current = origin
        do {
            do {
                return try await body(origin)
            } catch let unreachable as StationClientError where unreachable.isEndpointFailure {
                guard configuration.followsEndpointChanges, !Task.isCancelled else { throw unreachable }
                configuration.log(.warning, "\(operation): the station at \(origin.url.absoluteString) is unreachable (\(unreachable.message))")
                do {
                    current = try await resolvedOrigin(after: origin)
                } catch {
                    if Task.isCancelled || (error as? StationClientError)?.kind == .cancelled || error is CancellationError {
                        throw error
                    }
                    let search = StationClientError.wrap(error, operation: "finding the station's new endpoint")
                    configuration.log(.warning, "\(operation): no new endpoint found (\(search))")
                    // The station is still unreachable: callers act on that (the listing falls back to
                    // its offline view), whatever the search ran into (a gateway's 404, a forged record).
                    throw unreachable.withFailedSearch(search)
                }
                return try await body(current)
            }
        } catch let error as StationClientError where error.kind == .keyChanged {
            throw await keyChanged(error, origin: current)
        }
    }

    /// `error` (a pinned request refused for its key) with the pin expected and the key the
    /// station presents now, when the transport can read it.
    func keyChanged(_ error: StationClientError, origin: StationOrigin) async -> StationClientError {
        var error = error
        if error.expectedFingerprint == nil { error.expectedFingerprint = origin.pins.first }
        if error.presentedFingerprint == nil {
            error.presentedFingerprint = await configuration.transport.readablePublicKey(at: origin.url)
        }
        configuration.log(.error, "\(error.operation): the station at \(origin.url.absoluteString) presents another TLS key; refused")
        return error
    }

    /// The signed IPNS record → the `public.json` it names → checks → `GET /health` → stored.
    ///
    /// Nothing is stored and nothing signed is sent unless every check passes: the record's
    /// signature under the station's own IPNS key (fixed after pairing), its validity, a sequence
    /// not below the highest seen, the document's uid, ML-KEM and ML-DSA keys equal to the stored
    /// ones, no `https` → `http` downgrade, and a healthy station at the new endpoint presenting
    /// the pinned key or a certificate a trusted authority signed for its host.
    func resolveEndpoint() async throws -> StationOrigin {
        let operation = "finding the station's new endpoint"
        guard let gateway = configuration.gateway else {
            throw StationClientError(.unreachable, operation: operation, message: "no IPFS gateway is configured")
        }
        let stored = credentials
        guard stored.ipnsName != nil || stored.ipfsPeerID != nil else {
            throw StationClientError(.unreachable, operation: operation, message: "the station's IPNS name is not known yet")
        }
        let anchor = try IPNSAnchor.peerID(ipnsName: stored.ipnsName, peerID: stored.ipfsPeerID, operation: operation,
                                           source: "the stored credentials")
        let resolved = try await gateway.resolveVerified(ipnsName: anchor.ipnsName)
        try IPNSFloors.refuseRollback(resolved.sequence, floor: stored.ipnsSequence, operation: operation)
        let document = resolved.document
        try Self.checkSameStation(stored, uid: document.uid, mlkemPublicKey: document.mlkemPublicKey,
                                  mldsaPublicKey: document.mldsaPublicKey, source: "the IPNS record", document: "public.json",
                                  operation: operation)
        guard let text = document.endpoint, let endpoint = URL(string: text), let scheme = endpoint.scheme?.lowercased(),
              ["http", "https"].contains(scheme), endpoint.host?.isEmpty == false else {
            throw StationClientError(.unreachable, operation: operation, message: "the station's public.json has no endpoint")
        }
        if stored.endpoint.scheme?.lowercased() == "https", scheme != "https" {
            throw StationClientError(.integrity, operation: operation,
                                     message: "the IPNS record names \(endpoint.absoluteString), plain http in place of https; refused")
        }
        guard endpoint != stored.endpoint else {
            // The station has not moved (a tunnel's passing 5xx): retry where it is, once.
            try await updateCredentials { credentials in
                guard resolved.sequence > credentials.ipnsSequence ?? 0 else { return false }
                credentials.ipnsSequence = resolved.sequence
                return true
            }
            return origin
        }
        let trust = try await verifiedTrust(of: endpoint, operation: operation)
        try await updateCredentials { credentials in
            credentials.endpoint = endpoint
            credentials.endpointTrust = trust
            credentials.ipnsSequence = max(resolved.sequence, credentials.ipnsSequence ?? 0)
            return true
        }
        configuration.log(.info, "the station moved to \(endpoint.absoluteString) (\(trust == .pinnedKey ? "its pinned key" : "a trusted certificate"))")
        return origin
    }

    /// Refuses a station that is not the paired one: its uid, ML-KEM and ML-DSA public keys (as
    /// `source` gives them, in `document`) must equal the stored ones. The identity check of
    /// a move, automatic (an IPNS record) or on purpose (``move(to:trust:)``).
    private static func checkSameStation(
        _ credentials: DeviceCredentials, uid: String, mlkemPublicKey: String?, mldsaPublicKey: String?, source: String,
        document: String, operation: String
    ) throws {
        guard uid == credentials.stationUID else {
            throw StationClientError(.integrity, operation: operation, message: "\(source) names another station (uid \(uid))")
        }
        guard let kem = mlkemPublicKey, kem.lowercased() == credentials.stationKEMPublicKeyHex.lowercased() else {
            throw StationClientError(.integrity, operation: operation,
                                     message: "the station's \(document) does not carry its ML-KEM key")
        }
        guard let storedDSA = credentials.stationMLDSAPublicKeyHex else {
            throw StationClientError(.integrity, operation: operation,
                                     message: "the station's ML-DSA key is not known yet (adopt it with adoptIPNSKey())")
        }
        guard let dsa = mldsaPublicKey, dsa.lowercased() == storedDSA.lowercased() else {
            throw StationClientError(.integrity, operation: operation,
                                     message: "the station's \(document) does not carry its ML-DSA key")
        }
    }

    /// Points this device at `endpoint` on purpose (the `cipher move` command): the station there
    /// must present a TLS key `trust` accepts (or, with no expected key, a certificate a trusted
    /// authority signed; plain `http` only when the paired endpoint was `http`) and answer
    /// `GET /profile` with the paired station's uid, ML-KEM and ML-DSA keys (and its IPNS name or
    /// peer id, when both are known). Only then are the new endpoint and, for an accepted
    /// self-signed key, its pin stored.
    ///
    /// These public keys are public: what makes the new address trustworthy is the TLS key the
    /// user checked on the station, as at pairing; a move found through a signed IPNS record
    /// needs no such key.
    ///
    /// - Throws: ``StationClientError``: `.integrity` for another station or a downgrade to
    ///   `http`, `.untrustedKey` for a TLS key not accepted, `.unreachable` when it does not answer.
    func move(to endpoint: URL, trust: StationKeyTrust) async throws {
        let operation = "moving to \(endpoint.absoluteString)"
        guard let scheme = endpoint.scheme?.lowercased(), ["http", "https"].contains(scheme), endpoint.host?.isEmpty == false else {
            throw StationClientError(.refused, operation: operation, message: "\(endpoint.absoluteString) is not an http(s) URL")
        }
        let stored = credentials
        if stored.endpoint.scheme?.lowercased() == "https", scheme != "https" {
            throw StationClientError(.integrity, operation: operation, message: "plain http in place of https; refused")
        }
        let (pins, accepted) = try await StationClient.trustedPins(endpoint: endpoint, configuration: configuration, trust: trust,
                                                                   honoringOverride: false)
        let profile = try await Self.read(.profile, at: StationOrigin(url: endpoint, pins: pins), transport: configuration.transport,
                                          timeouts: configuration.requestTimeouts)
        try Self.checkSameStation(stored, uid: profile.uid, mlkemPublicKey: profile.mlkemPublicKey,
                                  mldsaPublicKey: profile.mldsaPublicKey, source: "\(endpoint.absoluteString)/profile",
                                  document: "/profile", operation: operation)
        if let name = stored.ipnsName, let given = profile.ipnsName, name != given {
            throw StationClientError(.integrity, operation: operation, message: "the station there has another IPNS name")
        }
        try await updateCredentials { credentials in
            credentials.endpoint = endpoint
            if let accepted {
                credentials.stationPublicKeyPin = accepted
                credentials.pinnedEndpoint = endpoint
                credentials.endpointTrust = .pinnedKey
            } else if scheme == "https" {
                credentials.endpointTrust = .certificateAuthority
            }
            return true
        }
        configuration.log(.info, "moved on purpose to \(endpoint.absoluteString)\(accepted.map { " (TLS key \($0) pinned)" } ?? "")")
    }

    /// How the new `endpoint` is trusted: it must answer a healthy `GET /health` presenting the
    /// station's pinned key, or (failing that, or with no pin) a certificate the transport trusts.
    private func verifiedTrust(of endpoint: URL, operation: String) async throws -> EndpointTrust {
        let pins = requestPins(for: .pinnedKey)
        var failures: [String] = []
        var last: StationClientError?
        var candidates: [(EndpointTrust, [PublicKeyFingerprint])] = endpoint.scheme?.lowercased() == "https" && !pins.isEmpty
            ? [(.pinnedKey, pins), (.certificateAuthority, [])] : [(.certificateAuthority, [])]
        // The server the pin was accepted for is trusted by the pin alone: a move back to it keeps
        // the pin, and a certificate an authority signed for it since (its host changed hands) is
        // not enough.
        if let pinned = credentials.pinnedEndpoint, Endpoints.sameServer(pinned, endpoint) {
            candidates = candidates.filter { $0.0 == .pinnedKey }
            if candidates.isEmpty {
                throw StationClientError(.integrity, operation: operation,
                                         message: "\(endpoint.absoluteString) is the server the TLS key was pinned for, and its pin cannot be used there")
            }
        }
        for (trust, candidatePins) in candidates {
            do {
                let health = try await Self.read(.health, at: StationOrigin(url: endpoint, pins: candidatePins),
                                                 transport: configuration.transport, timeouts: configuration.requestTimeouts)
                guard health.status == "healthy" || health.status == "degraded" else {
                    throw StationClientError(.unreachable, operation: operation, message: "the new endpoint is not a healthy station")
                }
                return trust
            } catch let error as StationClientError {
                failures.append("\(trust == .pinnedKey ? "pinned key" : "trusted certificate"): \(error.message)")
                last = error
            }
        }
        throw StationClientError(.unreachable, operation: operation,
                                 message: "\(endpoint.absoluteString) does not answer /health as the station (\(failures.joined(separator: "; ")))",
                                 status: last?.status, stationMessage: last?.stationMessage,
                                 transportError: last?.transportError, underlying: last)
    }
}

extension StationClient {
    /// Points this device at `endpoint` on purpose (the `cipher move` command); see
    /// ``StationConnection/move(to:trust:)``.
    package func move(to endpoint: URL, trust: StationKeyTrust) async throws {
        try await connection.move(to: endpoint, trust: trust)
    }
}

extension StationClientError {
    /// This unreachable error with a failed endpoint search attached: its text appended to
    /// ``message`` and the error itself as ``underlying``.
    func withFailedSearch(_ searchError: any Error) -> StationClientError {
        var error = self
        error.message += "; no new endpoint found: \(searchError)"
        error.underlying = searchError
        return error
    }

    /// Connection, DNS and tunnel failures: the kind that a new endpoint may fix, and where the
    /// request certainly never reached the station (so resending it cannot duplicate a write). A
    /// lost answer or a time-out is not one: the station may have acted on the request.
    var isEndpointFailure: Bool {
        guard kind == .unreachable else { return false }
        if let transportError {
            switch transportError.kind {
            case .cannotConnect, .dnsFailure: return true
            default: return false
            }
        }
        return status != nil
    }
}
