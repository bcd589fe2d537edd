import Foundation
import PQCrypto
import SHA2
import TestSupport

@testable import Signing
@testable import StationEmulator

/// The station's half of a signed request: the emulator's `RequestVerifier` for the station and
/// device of ``SignedRequestValues``, and that device's signer (the client's half, from `Signing`).
struct VerifierFixture {
    let privateKey: MLDSA65.PrivateKey
    let signer: RequestSigner
    let nonces = InMemoryNonceStore(clock: { SignedRequestValues.now })
    let verifier: RequestVerifier

    /// `storedKey` replaces the device's stored public key hex (nil: the real one).
    init(seed: UInt8 = 1, storedKey: String?? = .none, nonce: String = "0123456789abcdef0123456789abcdef") throws {
        privateKey = try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: seed, count: 32))
        let device = SigningIdentity(uid: SignedRequestValues.stationUID, deviceUID: SignedRequestValues.deviceUID, privateKey: privateKey)
        signer = RequestSigner(identity: device, clock: { SignedRequestValues.now }, nonceSource: { nonce })
        let keyHex: String? = storedKey ?? privateKey.publicKey.rawRepresentation.hex
        verifier = RequestVerifier(
            devices: DeviceDirectory { uid, device in
                uid == SignedRequestValues.stationUID && device == SignedRequestValues.deviceUID ? .authorized(mldsaPublicKeyHex: keyHex) : .notAuthorized
            },
            nonces: nonces)
    }

    /// Signs a canonical string directly, for header values the signer would never produce.
    func signature(method: String, path: String, timestamp: String, nonce: String, bodySHA256: String,
                   uid: String = SignedRequestValues.stationUID, deviceUID: String = SignedRequestValues.deviceUID) throws -> String {
        let canonical = CanonicalRequest(
            method: method, path: path, uid: uid, deviceUID: deviceUID, timestamp: timestamp, nonce: nonce,
            bodySHA256: bodySHA256)
        return try privateKey.signature(for: canonical.bytes).base64EncodedString()
    }

    /// Verifies with the station's inputs for `path`: the body's hash on hashed paths.
    func verify(
        method: String = "POST", path: String = "/post", headers: [(name: String, value: String)], body: [UInt8],
        now: Int64 = SignedRequestValues.now
    ) async throws(VerificationFailure) -> AuthenticatedDevice {
        let hashed = RequestVerifier.bodyHashedPaths.contains(path) ? SHA256.hash(data: body) : nil
        return try await verifier.verify(method: method, path: path, headers: headers, rawBodySHA256: hashed, now: now)
    }
}

extension SignedRequestHeaders {
    /// The fields with one value replaced.
    func replacing(_ name: String, with value: String) -> [(name: String, value: String)] {
        fields.map { $0.name == name ? ($0.name, value) : $0 }
    }

    /// The fields without `names`.
    func removing(_ names: String...) -> [(name: String, value: String)] {
        fields.filter { !names.contains($0.name) }
    }
}
