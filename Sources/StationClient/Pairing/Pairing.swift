import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import Transport
import OrderedJSON
import ContentAddressing

/// What the app's PIN closure is told each time it is asked for the pairing PIN.
public struct PairingPrompt: Sendable {
    /// The station's pairing session id.
    public var pairingID: String
    /// When the session expires.
    public var expiresAt: Date
    /// How many PINs the station will still accept for this session (it allows 5).
    public var attemptsLeft: Int
    /// Why the previous PIN was refused, or `nil` on the first prompt.
    public var previousFailure: PairingFailure?
}

/// How ``StationClient/pair(endpoint:deviceName:configuration:trust:pin:)`` decides whether to
/// trust an `https` station whose certificate no trusted authority signed (the self-signed one
/// `run.py` makes). A certificate the transport trusts needs no decision and no pin.
public enum StationKeyTrust: Sendable {
    /// Trust only certificates a trusted authority signed; refuse any other (`StationClientError.Kind.untrustedKey`).
    case certificateAuthorityOnly
    /// Trust the station if it presents the key with this fingerprint (read on the station, or
    /// given out of band): nothing is asked.
    case expected(PublicKeyFingerprint)
    /// Ask: the closure is shown the key the station presents (``StationKeyPrompt``) and returns
    /// whether to trust it. Needs a transport that can read a server's key
    /// (`HTTPTransport.presentedPublicKey(at:)`: `CurlTransport`, `URLSessionTransport` on Apple
    /// platforms, the emulator's transports); with one that answers `.probingUnsupported`
    /// (`URLSessionTransport` on Linux), pairing is refused with `.untrustedKey` (pass
    /// ``expected(_:)`` instead).
    case confirm(@Sendable (StationKeyPrompt) async -> Bool)
}

/// What the app's key confirmation is shown: the station and the key it presents.
public struct StationKeyPrompt: Sendable {
    /// The endpoint being paired with.
    public var endpoint: URL
    /// The fingerprint of the public key the station presents (`sha256//<base64>`). Compare it
    /// with the fingerprint the station's own machine shows before accepting.
    public var fingerprint: PublicKeyFingerprint
}

/// Device uids as the seed guide builds them.
public enum DeviceUID {
    /// `<sanitized-name-prefix20>-<uuid-prefix8>`: the name lowercased, every character outside
    /// `[a-z0-9-]` dropped, cut to 20 characters (`device` when nothing is left), then a dash and
    /// the first 8 characters of a fresh lowercase UUID.
    public static func make(name: String, uuid: UUID = UUID()) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-")
        var sanitized = String(name.lowercased().filter { allowed.contains($0) }.prefix(20))
        if sanitized.isEmpty { sanitized = "device" }
        return sanitized + "-" + uuid.uuidString.lowercased().prefix(8)
    }
}

extension StationClient {
    /// The number of PINs a station accepts per pairing session.
    public static let pinAttemptsPerSession = 5

    /// Pairs this device with the station at `endpoint`, trusting only certificates a trusted
    /// authority signed (or ``StationClientConfiguration/stationPublicKeyPins``), and saves the
    /// credentials: ``pair(endpoint:deviceName:configuration:trust:pin:)`` with
    /// ``StationKeyTrust/certificateAuthorityOnly``.
    ///
    /// - Throws: as ``pair(endpoint:deviceName:configuration:trust:pin:)``.
    public static func pair(
        endpoint: URL, deviceName: String, configuration: StationClientConfiguration,
        pin: @Sendable (PairingPrompt) async -> String?
    ) async throws -> StationClient {
        try await pair(endpoint: endpoint, deviceName: deviceName, configuration: configuration,
                       trust: .certificateAuthorityOnly, pin: pin)
    }

    /// Pairs this device with the station at `endpoint` and saves the credentials.
    ///
    /// First decides how the station's TLS certificate is trusted (``StationKeyTrust``): over
    /// `https`, a certificate the transport trusts needs nothing; otherwise the key the station
    /// presents must be the `expected` one or be confirmed, and is then pinned: kept in the
    /// credentials (``DeviceCredentials/stationPublicKeyPin``) and carried by every later request
    /// (`TransferOptions.pinnedPublicKeys`). Plain `http` has nothing to trust. Then checks `/health`, reads `/profile`, generates the device's ML-KEM-768 and ML-DSA-65 key
    /// pairs, starts a session with `/delegate/start`, asks `pin` for the PIN the station printed in
    /// its log, confirms with `/delegate/confirm` (asking again after a wrong PIN while attempts
    /// remain), and saves the credentials with the device uid exactly as the station returned it.
    ///
    /// - Parameters:
    ///   - endpoint: the station's URL.
    ///   - configuration: the client configuration (its key store receives the credentials).
    ///   - deviceName: a human name for the device; the uid is built from it (see ``DeviceUID``).
    ///   - trust: how to trust a certificate no trusted authority signed.
    ///   - pin: asked for the PIN; return `nil` to give up.
    /// - Throws: ``StationClientError`` with kind `.untrustedKey` when the station's key is not
    ///   trusted (with the expected and presented fingerprints), `.pairing` and a
    ///   ``PairingFailure`` (wrong PIN with no attempts left becomes `.sessionGone`; throttled;
    ///   invalid keys; cancelled by the user), `.unreachable` when the station cannot be reached,
    ///   `.station` for other answers.
    public static func pair(
        endpoint: URL, deviceName: String, configuration: StationClientConfiguration, trust: StationKeyTrust,
        pin: @Sendable (PairingPrompt) async -> String?
    ) async throws -> StationClient {
        try await pair(endpoint: endpoint, deviceName: deviceName, configuration: configuration, trust: trust, keys: nil, pin: pin)
    }

    /// Pairs this device with the station at `endpoint` using the app's keys (such as Secure
    /// Enclave keys, see <doc:KeepingDeviceKeys>), and saves the credentials: as
    /// ``pair(endpoint:deviceName:configuration:trust:pin:)``, which generates pure-Swift keys.
    ///
    /// - Parameters:
    ///   - endpoint: the station's URL.
    ///   - deviceName: a human name for the device; the uid is built from it (see ``DeviceUID``).
    ///   - configuration: the client configuration (its key store receives the credentials).
    ///   - trust: how to trust a certificate no trusted authority signed.
    ///   - keys: the device's keys, or `nil` for keys from ``StationClientConfiguration/keyPolicy``
    ///     (by default fresh pure-Swift keys). Only their public keys are
    ///     sent. To be saved, each is a pure-Swift key or a ``ReferenceStorableKey``; load the
    ///     credentials back with ``StationClientConfiguration/keyReferenceResolver`` set.
    ///   - pin: asked for the PIN; return `nil` to give up.
    /// - Throws: as ``pair(endpoint:deviceName:configuration:trust:pin:)``; `.keyStore` when a key
    ///   cannot be saved or the policy's factory fails; `.refused` (operation `pairing`, before
    ///   anything is sent) when `keys` is `nil` and the policy is ``KeyPolicy/refuseToGenerate``.
    public static func pair(
        endpoint: URL, deviceName: String, configuration: StationClientConfiguration, trust: StationKeyTrust,
        keys: DeviceKeys?, pin: @Sendable (PairingPrompt) async -> String?
    ) async throws -> StationClient {
        // Before anything is sent: a policy that refuses to generate keys fails the call at once.
        let deviceKeys = try keys ?? configuration.keyPolicy.makeKeys(for: "pairing")
        let transport = configuration.transport
        let timeouts = configuration.requestTimeouts
        let (pins, acceptedPin) = try await trustedPins(endpoint: endpoint, configuration: configuration, trust: trust)
        let origin = StationOrigin(url: endpoint, pins: pins)
        let health = try await StationConnection.read(.health, at: origin, transport: transport, timeouts: timeouts)
        guard health.status == "healthy" || health.status == "degraded" else {
            throw StationClientError(.station, operation: "pairing", message: "the station is not healthy (\(health.status))")
        }
        let profile = try await StationConnection.read(.profile, at: origin, transport: transport, timeouts: timeouts)
        guard let stationKey = profile.mlkemPublicKey,
              (try? MLKEM768.PublicKey(rawRepresentation: Hex.decode(stationKey))) != nil else {
            throw StationClientError(.invalidResponse, operation: "pairing", message: "the station's profile has no valid ML-KEM key")
        }
        let kemKey = deviceKeys.kemKey
        let signingKey = deviceKeys.signingKey
        // App keys that could not be saved are refused before the station registers them.
        _ = try PrivateKeyJSON.encode(kem: kemKey, signing: signingKey, others: [:], operation: "pairing")
        var deviceUID = DeviceUID.make(name: deviceName)
        // Never pair with the station's own uid: the station would overwrite its own row.
        while deviceUID == profile.uid { deviceUID = DeviceUID.make(name: deviceName) }

        let start = try await startPairing(
            endpoint: endpoint, deviceUID: deviceUID, kemKey: kemKey.publicKey, signingKey: signingKey.publicKey,
            transport: transport, timeouts: timeouts, pins: pins)
        let expiresAt = Date().addingTimeInterval(TimeInterval(start.expiresInSeconds))
        var attemptsLeft = pinAttemptsPerSession
        var previous: PairingFailure?
        var malformedLeft = pinAttemptsPerSession
        while true {
            guard attemptsLeft > 0 else {
                throw pairingError(.sessionGone("pairing session locked (too many attempts)"), status: nil)
            }
            let prompt = PairingPrompt(pairingID: start.pairingID, expiresAt: expiresAt, attemptsLeft: attemptsLeft,
                                       previousFailure: previous)
            guard let entered = await pin(prompt) else { throw pairingError(.cancelledByUser, status: nil) }
            let digits = entered.trimmingCharacters(in: .whitespaces)
            guard (4...8).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                previous = .invalidPINFormat
                malformedLeft -= 1
                guard malformedLeft > 0 else { throw pairingError(.invalidPINFormat, status: nil) }
                continue
            }
            let body = WireJSON.serialize(.object(["pairing_id": .string(start.pairingID), "pin": .string(digits)]))
            let operation = "POST /delegate/confirm"
            let response = try await StationConnection.exchange(
                .unsigned(.post, "/delegate/confirm", body: .json(body), limit: ResponseLimit.profile, timeouts: timeouts,
                          operation: operation),
                at: origin, signing: nil, transport: transport)
            if response.isSuccess {
                let confirmed = try StationConnection.decode(DelegateConfirmResponse.self, from: response, operation: operation)
                guard confirmed.uid == profile.uid else {
                    throw StationClientError(.invalidResponse, operation: operation, message: "the station confirmed another uid")
                }
                var credentials = DeviceCredentials(
                    kemPrivateKey: kemKey, signingPrivateKey: signingKey, deviceUID: confirmed.deviceUID,
                    stationUID: confirmed.uid, stationKEMPublicKeyHex: stationKey.lowercased(), endpoint: endpoint,
                    stationMLDSAPublicKeyHex: profile.mldsaPublicKey?.lowercased(), stationPublicKeyPin: acceptedPin,
                    endpointTrust: acceptedPin == nil ? .certificateAuthority : .pinnedKey)
                if profile.ipnsName != nil || profile.ipfsPeerID != nil {
                    let anchor = try IPNSAnchor.peerID(ipnsName: profile.ipnsName, peerID: profile.ipfsPeerID, operation: "pairing",
                                                       source: "the station's profile")
                    credentials.ipnsName = anchor.ipnsName
                    credentials.ipfsPeerID = anchor.description
                    credentials.ipnsSequence = await ipnsFloor(of: anchor, gateway: configuration.gateway, log: configuration.log)
                }
                return try await StationClient(credentials: credentials, configuration: configuration)
            }
            let failure = pairingFailure(for: response)
            if failure.kind == .wrongPIN {
                attemptsLeft -= 1
                previous = .wrongPIN(attemptsLeft: attemptsLeft)
                configuration.log(.info, "pairing: wrong PIN, \(attemptsLeft) attempts left")
                continue
            }
            throw pairingError(failure, status: response.status, station: StationErrorBody.parse([UInt8](response.body.data ?? Data()))?.message)
        }
    }

    /// The pins pairing sends with and the pin it keeps: the configuration's override when set
    /// (nothing kept), none for `http` or a certificate the transport trusts, else the key
    /// `trust` accepts.
    /// `honoringOverride` is `false` for another station than the paired one (following), which
    /// the configuration's pins are not about.
    static func trustedPins(
        endpoint: URL, configuration: StationClientConfiguration, trust: StationKeyTrust, honoringOverride: Bool = true
    ) async throws -> (pins: [PublicKeyFingerprint], accepted: PublicKeyFingerprint?) {
        let operation = "trusting the station's TLS key"
        guard endpoint.scheme?.lowercased() == "https" else { return ([], nil) }
        if honoringOverride, !configuration.stationPublicKeyPins.isEmpty { return (configuration.stationPublicKeyPins, nil) }
        let transport = configuration.transport
        let timeouts = configuration.requestTimeouts
        func presented() async -> PublicKeyFingerprint? { await transport.readablePublicKey(at: endpoint) }
        if case .expected(let expected) = trust {
            do {
                _ = try await StationConnection.read(.health, at: StationOrigin(url: endpoint, pins: [expected]), transport: transport,
                                                     timeouts: timeouts)
            } catch let error as StationClientError where error.kind == .keyChanged {
                var refused = StationClientError(
                    .untrustedKey, operation: operation, message: "the station presents another TLS key than the expected one",
                    transportError: error.transportError, underlying: error)
                refused.expectedFingerprint = expected
                refused.presentedFingerprint = await presented()
                throw refused
            }
            configuration.log(.info, "pairing: the station presents the expected TLS key \(expected)")
            return ([expected], expected)
        }
        // Does a trusted authority vouch for the certificate? Then nothing is pinned.
        do {
            _ = try await StationConnection.read(.health, at: StationOrigin(url: endpoint, pins: []), transport: transport,
                                                 timeouts: timeouts)
            return ([], nil)
        } catch let error as StationClientError where error.transportError?.kind == .tlsFailure {
            let key = await presented()
            guard case .confirm(let confirm) = trust, let key else {
                var message = "no trusted authority signed the station's certificate; pass its expected fingerprint or confirm its key"
                if case .confirm = trust {
                    message = "no trusted authority signed the station's certificate, and its key cannot be read to ask; pass the expected fingerprint"
                }
                var refused = StationClientError(.untrustedKey, operation: operation, message: message,
                                                 transportError: error.transportError, underlying: error)
                refused.presentedFingerprint = key
                throw refused
            }
            guard await confirm(StationKeyPrompt(endpoint: endpoint, fingerprint: key)) else {
                var refused = StationClientError(.untrustedKey, operation: operation, message: "the station's TLS key was not accepted")
                refused.presentedFingerprint = key
                throw refused
            }
            configuration.log(.info, "pairing: the TLS key \(key) was accepted")
            return ([key], key)
        }
    }

    /// The sequence of the station's current IPNS record, verified against its key, when a
    /// gateway is configured and has one: the floor below which a record is ever after refused as
    /// a rollback. `nil` (the first verified record sets the floor later) when there is no gateway
    /// or no record yet; pairing does not fail for it.
    static func ipnsFloor(of anchor: PeerID, gateway: IPFSGateway?, log: LogHandler?) async -> UInt64? {
        guard let gateway else { return nil }
        do {
            return try await gateway.resolveVerified(ipnsName: anchor.ipnsName).sequence
        } catch {
            log?(LogEvent(level: .info, message: "the station's IPNS record cannot be read yet (\(error)); the first one read sets the rollback floor"))
            return nil
        }
    }

    static func startPairing(
        endpoint: URL, deviceUID: String, kemKey: MLKEM768.PublicKey, signingKey: MLDSA65.PublicKey,
        transport: any HTTPTransport, timeouts: TransferTimeouts, pins: [PublicKeyFingerprint]
    ) async throws -> DelegateStartResponse {
        let operation = "POST /delegate/start"
        let body = WireJSON.serialize(.object([
            "device_uid": .string(deviceUID),
            "mlkem_public_key": .string(Hex.encode(kemKey.rawRepresentation)),
            "mldsa_public_key": .string(Hex.encode(signingKey.rawRepresentation)),
        ]))
        let response = try await StationConnection.exchange(
            .unsigned(.post, "/delegate/start", body: .json(body), limit: ResponseLimit.profile, timeouts: timeouts, operation: operation),
            at: StationOrigin(url: endpoint, pins: pins), signing: nil, transport: transport)
        guard response.isSuccess else {
            let message = StationErrorBody.parse([UInt8](response.body.data ?? Data()))?.message
            if response.status == 429 { throw pairingError(.throttled(message ?? ""), status: 429, station: message) }
            if response.status == 400, let message, message.contains("public_key") {
                throw pairingError(.invalidKeys(message), status: 400, station: message)
            }
            throw StationClientError.station(response, operation: operation)
        }
        return try StationConnection.decode(DelegateStartResponse.self, from: response, operation: operation)
    }

    /// Reads a `/delegate/confirm` refusal (WIRE_NOTES §2.3).
    static func pairingFailure(for response: HTTPResponse) -> PairingFailure {
        let message = StationErrorBody.parse([UInt8](response.body.data ?? Data()))?.message ?? ""
        if response.status == 429 { return .throttled(message) }
        if message == "invalid PIN" { return .wrongPIN(attemptsLeft: 0) }
        return .sessionGone(message.isEmpty ? "HTTP \(response.status)" : message)
    }

    static func pairingError(_ failure: PairingFailure, status: Int?, station: String? = nil) -> StationClientError {
        StationClientError(.pairing, operation: "pairing", message: "\(failure)", status: status, stationMessage: station,
                           pairingFailure: failure)
    }
}
