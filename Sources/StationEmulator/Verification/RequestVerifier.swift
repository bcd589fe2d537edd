#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PQCrypto
import ClassicalCrypto
import Signing

/// A device a verified request came from.
struct AuthenticatedDevice: Sendable, Equatable {
    /// The uid the request acts as (`x-cipher-uid`).
    let uid: String
    /// The device uid (`x-cipher-device`).
    let deviceUID: String
}

/// Verifies signed requests exactly as a Cipher Station does (its `require_delegate` and
/// `require_owner`): the same checks in the same order, each failing with the station's own
/// ``VerificationFailure``.
///
/// The order: all six headers present (422); `x-cipher-ts` an integer (`bad timestamp`); within
/// 60 s of the arrival time (`stale request`); the device Allowed (`device not authorized`) and
/// holding an ML-DSA key (`device has no auth (ML-DSA) public key`); the nonce unused (`replay`);
/// the body hash, when the path's body is hashed (`bad body hash`); the stored key decodable
/// (`bad device auth public key`, `… length`); the signature base64 (`bad signature encoding`);
/// the signature valid (`bad auth`). The nonce is recorded only after every check passed, so a
/// failed request can be retried with the same nonce.
struct RequestVerifier: Sendable {
    /// The largest accepted difference between `x-cipher-ts` and the arrival time, in seconds.
    static let maximumClockSkew: Int64 = 60

    /// The length of an ML-DSA-65 public key, which the station checks before verifying.
    static let publicKeyByteCount = 1952

    /// The paths whose raw body the station hashes before authentication. For other paths
    /// (GETs) `x-cipher-body-sha256` is not compared, though it is still signed.
    static let bodyHashedPaths: Set<String> = [
        "/post", "/post/delete", "/post/share", "/rewrap", "/follow", "/unfollow", "/inbox",
    ]

    private let devices: any SigningDeviceDirectory
    private let nonces: any NonceStore
    private let keys = VerificationKeyCache()

    /// Creates a verifier over a device directory and a nonce store.
    init(devices: some SigningDeviceDirectory, nonces: some NonceStore) {
        self.devices = devices
        self.nonces = nonces
    }

    /// Verifies one request.
    ///
    /// - Parameters:
    ///   - method: the request's method as received.
    ///   - path: the path as the station sees it: ``CanonicalRequest/stationPath(requestTarget:)``
    ///     of the raw request target.
    ///   - headers: the request headers as received (names match case-insensitively; the first of
    ///     repeated headers counts). Decode header bytes as ISO-8859-1, as the station's server does.
    ///   - rawBodySHA256: the SHA-256 of the exact raw body for paths in ``bodyHashedPaths``;
    ///     `nil` where the station does not hash the body.
    ///   - now: the arrival time in Unix seconds (for hashed paths, when the request *started*
    ///     arriving; otherwise the time of the check).
    /// - Returns: the authenticated uid and device uid.
    /// - Throws: the station's ``VerificationFailure`` for the first check that fails.
    func verify(
        method: String, path: String, headers: [(name: String, value: String)], rawBodySHA256: [UInt8]?, now: Int64
    ) async throws(VerificationFailure) -> AuthenticatedDevice {
        var values = [String?](repeating: nil, count: SignedRequestHeaders.names.count)
        for (name, value) in headers {
            let lowered = name.lowercased()
            if let index = SignedRequestHeaders.names.firstIndex(of: lowered), values[index] == nil {
                values[index] = value
            }
        }
        let missing = zip(SignedRequestHeaders.names, values).filter { $0.1 == nil }.map(\.0)
        guard missing.isEmpty else { throw .missingHeaders(missing) }
        let uid = values[0] ?? "", deviceUID = values[1] ?? "", timestamp = values[2] ?? ""
        let nonce = values[3] ?? "", bodySHA256 = values[4] ?? "", signature = values[5] ?? ""

        // 1. Time window.
        let sentAt: Int64
        switch PythonCompatibility.parseInteger(timestamp) {
        case .invalid: throw .badTimestamp
        case .outOfRange: throw .staleRequest
        case let .value(value): sentAt = value
        }
        let (skew, overflow) = now.subtractingReportingOverflow(sentAt)
        guard !overflow, skew.magnitude <= UInt64(Self.maximumClockSkew) else { throw .staleRequest }

        // 2. The device must be Allowed and hold an ML-DSA key.
        guard case let .authorized(storedKey) = await devices.authorization(uid: uid, deviceUID: deviceUID) else {
            throw .deviceNotAuthorized
        }
        guard let storedKey, !storedKey.isEmpty else { throw .deviceHasNoAuthKey }

        // 3. Replay.
        guard await !nonces.contains(uid: uid, deviceUID: deviceUID, nonce: nonce) else { throw .replay }

        // 4. Body hash, where the station hashed the body.
        if let rawBodySHA256 {
            // Python's hmac.compare_digest raises on non-ASCII text; the station answers 500.
            guard bodySHA256.unicodeScalars.allSatisfy(\.isASCII) else { throw .internalServerError }
            let expected = Array(Hex.encode(rawBodySHA256).utf8)
            guard SecureMemory.constantTimeEquals(expected, Array(bodySHA256.lowercased().utf8)) else {
                throw .badBodyHash
            }
        }

        // 5. The signature over the canonical string.
        guard let keyBytes = PythonCompatibility.bytesFromHex(storedKey) else { throw .badDeviceAuthPublicKey }
        guard keyBytes.count == Self.publicKeyByteCount else { throw .badDeviceAuthPublicKeyLength }
        guard let signatureBytes = PythonCompatibility.decodeBase64Strict(signature) else {
            throw .badSignatureEncoding
        }
        let canonical = CanonicalRequest(
            method: method, path: path, uid: uid, deviceUID: deviceUID, timestamp: timestamp, nonce: nonce,
            bodySHA256: bodySHA256)
        // The station treats any error inside verification as a failed signature.
        guard let publicKey = await keys.key(for: keyBytes),
              publicKey.isValidSignature(signatureBytes, for: canonical.bytes, context: Data()) else {
            throw .badAuth
        }

        // 6. Remember the nonce only now. A concurrent request that recorded it first wins.
        guard await nonces.insert(uid: uid, deviceUID: deviceUID, nonce: nonce, timestamp: sentAt) else {
            throw .replay
        }
        return AuthenticatedDevice(uid: uid, deviceUID: deviceUID)
    }

    /// The station's `require_owner`: passes only a device acting as the station's own uid.
    ///
    /// - Throws: ``VerificationFailure/ownerOnlyEndpoint`` otherwise (also when `stationUID` is empty).
    static func requireOwner(_ device: AuthenticatedDevice, stationUID: String) throws(VerificationFailure) {
        guard !stationUID.isEmpty, device.uid == stationUID else { throw .ownerOnlyEndpoint }
    }
}
