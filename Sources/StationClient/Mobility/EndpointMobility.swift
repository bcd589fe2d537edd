import Foundation
import Manifest
import Transport

extension StationClient {
    /// Runs `body` against the current endpoint; when the station cannot be reached (connection
    /// refused, DNS failure, time-out, or a tunnel's 5xx), finds the station's new endpoint through
    /// IPNS and runs `body` once more there.
    ///
    /// Concurrent failures share one resolution; a failure that started on an endpoint that has
    /// since been replaced just retries on the new one; the retry itself never resolves again.
    /// Runs off the actor (it is entered only to resolve), with `endpoint` when the caller has
    /// already read it.
    nonisolated func withEndpointMobility<T: Sendable>(
        operation: String, endpoint known: URL? = nil, _ body: @Sendable (URL) async throws -> T
    ) async throws -> T {
        let endpoint: URL
        if let known { endpoint = known } else { endpoint = await credentials.endpoint }
        do {
            return try await Self.failOnTunnelError(operation: operation) { try await body(endpoint) }
        } catch let error as StationClientError where error.isEndpointFailure {
            guard configuration.followsEndpointChanges, !Task.isCancelled else { throw error }
            log(.warning, "\(operation): the station at \(endpoint.absoluteString) is unreachable (\(error.message))")
            let newEndpoint: URL
            do {
                newEndpoint = try await resolvedEndpoint(after: endpoint)
            } catch let searchError {
                if Task.isCancelled || (searchError as? StationClientError)?.kind == .cancelled || searchError is CancellationError {
                    throw searchError
                }
                log(.warning, "\(operation): no new endpoint found (\(searchError))")
                // The station is still unreachable: callers act on that (the listing falls back to
                // its offline view), whatever the search ran into (a gateway's 404, a forged record).
                throw error.withFailedSearch(searchError)
            }
            return try await Self.failOnTunnelError(operation: operation) { try await body(newEndpoint) }
        }
    }

    /// Runs `body`; a value that is an HTTP response from a tunnel in front of a dead station
    /// counts as unreachable.
    private static func failOnTunnelError<T>(operation: String, _ body: () async throws -> T) async throws -> T {
        let value = try await body()
        if let response = value as? HTTPResponse, let failure = StationClientError.tunnel(response, operation: operation) {
            throw failure
        }
        return value
    }

    /// 502, 504 and Cloudflare's 52x/530 come from a tunnel, never from the station; a 503 whose
    /// body is not the station's JSON also does (the station's own 503s are JSON).
    static func isTunnelFailure(_ response: HTTPResponse) -> Bool {
        switch response.status {
        case 502, 504, 520...530: return true
        case 503:
            guard let data = response.body.data else { return false }
            return (try? WireJSON.parse([UInt8](data)).objectValue) == nil
        default: return false
        }
    }

    /// The station's new endpoint, resolved once for all concurrent callers.
    func resolvedEndpoint(after failed: URL) async throws -> URL {
        if credentials.endpoint != failed { return credentials.endpoint }
        if let running = endpointResolution { return try await running.value }
        let task = Task { try await self.resolveEndpoint() }
        endpointResolution = task
        defer { endpointResolution = nil }
        return try await task.value
    }

    /// IPNS name → `public.json` → endpoint → `GET /health` → stored.
    private func resolveEndpoint() async throws -> URL {
        let operation = "finding the station's new endpoint"
        guard let gateway = configuration.gateway else {
            throw StationClientError(.unreachable, operation: operation, message: "no IPFS gateway is configured")
        }
        guard let name = credentials.ipnsName ?? credentials.ipfsPeerID else {
            throw StationClientError(.unreachable, operation: operation, message: "the station's IPNS name is not known yet")
        }
        let document: PublicDocument
        do {
            document = try await gateway.resolve(ipnsName: name)
        } catch let error as StationClientError where error.kind == .gateway {
            // The station stays unreachable (callers fall back to the offline listing on that).
            throw StationClientError(.unreachable, operation: operation, message: "the gateway did not resolve /ipns/\(name)",
                                     status: error.status, stationMessage: error.stationMessage,
                                     transportError: error.transportError, underlying: error)
        }
        guard document.uid == credentials.stationUID else {
            throw StationClientError(.integrity, operation: operation, message: "the IPNS record names another station")
        }
        if let key = document.mlkemPublicKey, key.lowercased() != credentials.stationKEMPublicKeyHex.lowercased() {
            throw StationClientError(.integrity, operation: operation, message: "the IPNS record carries another station key")
        }
        guard let text = document.endpoint, let endpoint = URL(string: text), endpoint.scheme != nil else {
            throw StationClientError(.unreachable, operation: operation, message: "the station's public.json has no endpoint")
        }
        let health: HealthResponse
        do {
            health = try await Self.health(at: endpoint, transport: configuration.transport, timeouts: configuration.requestTimeouts,
                                           pins: configuration.stationPublicKeyPins)
        } catch let error as StationClientError {
            throw StationClientError(.unreachable, operation: operation, message: "\(endpoint.absoluteString) does not answer /health",
                                     status: error.status, stationMessage: error.stationMessage,
                                     transportError: error.transportError, underlying: error)
        }
        guard health.status == "healthy" || health.status == "degraded" else {
            throw StationClientError(.unreachable, operation: operation, message: "the new endpoint is not a healthy station")
        }
        credentials.endpoint = endpoint
        try await saveCredentials()
        log(.info, "the station moved to \(endpoint.absoluteString)")
        return endpoint
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

    /// The ``Kind/unreachable`` error for an answer that came from a tunnel in front of a dead
    /// station (see ``StationClient/isTunnelFailure(_:)``), or `nil` for any other answer.
    static func tunnel(_ response: HTTPResponse, operation: String) -> StationClientError? {
        guard StationClient.isTunnelFailure(response) else { return nil }
        return StationClientError(.unreachable, operation: operation, message: "the tunnel answered \(response.status)",
                                  status: response.status)
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
