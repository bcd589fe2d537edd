import Foundation
import Manifest
import PQCrypto
import Sodium
import Transport

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

    /// Pairs this device with the station at `endpoint` and saves the credentials.
    ///
    /// Checks `/health`, reads `/profile`, generates the device's ML-KEM-768 and ML-DSA-65 key
    /// pairs, starts a session with `/delegate/start`, asks `pin` for the PIN the station printed in
    /// its log, confirms with `/delegate/confirm` (asking again after a wrong PIN while attempts
    /// remain), and saves the credentials with the device uid exactly as the station returned it.
    ///
    /// - Parameters:
    ///   - endpoint: the station's URL.
    ///   - configuration: the client configuration (its key store receives the credentials).
    ///   - deviceName: a human name for the device; the uid is built from it (see ``DeviceUID``).
    ///   - pin: asked for the PIN; return `nil` to give up.
    /// - Throws: ``StationClientError`` with kind `.pairing` and a ``PairingFailure`` (wrong PIN
    ///   with no attempts left becomes `.sessionGone`; throttled; invalid keys; cancelled by the
    ///   user), `.unreachable` when the station cannot be reached, `.station` for other answers.
    public static func pair(
        endpoint: URL, deviceName: String, configuration: StationClientConfiguration,
        pin: @Sendable (PairingPrompt) async -> String?
    ) async throws -> StationClient {
        let transport = configuration.transport
        let timeouts = configuration.requestTimeouts
        let pins = configuration.stationPublicKeyPins
        let health = try await health(at: endpoint, transport: transport, timeouts: timeouts, pins: pins)
        guard health.status == "healthy" || health.status == "degraded" else {
            throw StationClientError(.station, operation: "pairing", message: "the station is not healthy (\(health.status))")
        }
        let profile = try await profile(at: endpoint, transport: transport, timeouts: timeouts, pins: pins)
        guard let stationKey = profile.mlkemPublicKey,
              (try? MLKEM768.PublicKey(rawRepresentation: Hex.decode(stationKey))) != nil else {
            throw StationClientError(.invalidResponse, operation: "pairing", message: "the station's profile has no valid ML-KEM key")
        }
        let kemKey = MLKEM768.PrivateKey.generate()
        let signingKey = MLDSA65.PrivateKey.generate()
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
            let response = try await unsignedExchange(
                endpoint: endpoint, method: .post, path: "/delegate/confirm", body: body, transport: transport,
                timeouts: timeouts, pins: pins, limit: ResponseLimit.profile, operation: operation)
            if response.isSuccess {
                let confirmed = try decode(DelegateConfirmResponse.self, from: response, operation: operation)
                guard confirmed.uid == profile.uid else {
                    throw StationClientError(.invalidResponse, operation: operation, message: "the station confirmed another uid")
                }
                let credentials = DeviceCredentials(
                    kemPrivateKey: kemKey, signingPrivateKey: signingKey, deviceUID: confirmed.deviceUID,
                    stationUID: confirmed.uid, stationKEMPublicKeyHex: stationKey.lowercased(), endpoint: endpoint,
                    ipfsPeerID: profile.ipfsPeerID, ipnsName: profile.ipnsName)
                return try await StationClient(credentials: credentials, configuration: configuration)
            }
            let failure = pairingFailure(for: response)
            if case .wrongPIN = failure {
                attemptsLeft -= 1
                previous = .wrongPIN(attemptsLeft: attemptsLeft)
                configuration.log?(LogEvent(level: .info, message: "pairing: wrong PIN, \(attemptsLeft) attempts left"))
                continue
            }
            throw pairingError(failure, status: response.status, station: StationErrorBody.parse([UInt8](response.body.data ?? Data()))?.message)
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
        let response = try await unsignedExchange(
            endpoint: endpoint, method: .post, path: "/delegate/start", body: body, transport: transport, timeouts: timeouts,
            pins: pins, limit: ResponseLimit.profile, operation: operation)
        guard response.isSuccess else {
            let message = StationErrorBody.parse([UInt8](response.body.data ?? Data()))?.message
            if response.status == 429 { throw pairingError(.throttled(message ?? ""), status: 429, station: message) }
            if response.status == 400, let message, message.contains("public_key") {
                throw pairingError(.invalidKeys(message), status: 400, station: message)
            }
            throw StationClientError.station(response, operation: operation)
        }
        return try decode(DelegateStartResponse.self, from: response, operation: operation)
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
