import Foundation
import PQCrypto
import ClassicalCrypto
import SHA2
import TestSupport

@testable import Signing
@testable import StationEmulator

/// A fixed device and station for the tests.
struct Fixture {
    static let stationUID = "da27af3e-b2ac-4d02-a894-3c22d638d1ba"
    static let deviceUID = "Kims-MacBook-Pro-990DCF48"
    static let now: Int64 = 1_795_956_595

    let privateKey: MLDSA65.PrivateKey
    let identity: SigningIdentity
    let signer: RequestSigner
    let nonces: InMemoryNonceStore
    let verifier: RequestVerifier

    /// `storedKey` replaces the device's stored public key hex (nil: the real one).
    init(seed: UInt8 = 1, storedKey: String?? = .none, nonce: String = "0123456789abcdef0123456789abcdef") throws {
        privateKey = try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: seed, count: 32))
        identity = SigningIdentity(uid: Self.stationUID, deviceUID: Self.deviceUID, privateKey: privateKey)
        signer = RequestSigner(identity: identity, clock: { Fixture.now }, nonceSource: { nonce })
        let keyHex: String? = storedKey ?? privateKey.publicKey.rawRepresentation.hex
        nonces = InMemoryNonceStore(clock: { Fixture.now })
        verifier = RequestVerifier(
            devices: DeviceDirectory { uid, device in
                uid == Fixture.stationUID && device == Fixture.deviceUID ? .authorized(mldsaPublicKeyHex: keyHex) : .notAuthorized
            },
            nonces: nonces)
    }

    /// Signs a canonical string directly, for header values the signer would never produce.
    func signature(method: String, path: String, timestamp: String, nonce: String, bodySHA256: String,
                   uid: String = Fixture.stationUID, deviceUID: String = Fixture.deviceUID) throws -> String {
        let canonical = CanonicalRequest(
            method: method, path: path, uid: uid, deviceUID: deviceUID, timestamp: timestamp, nonce: nonce,
            bodySHA256: bodySHA256)
        return try privateKey.signature(for: canonical.bytes).base64EncodedString()
    }

    /// Verifies with the station's inputs for `path`: the body's hash on hashed paths.
    func verify(
        method: String = "POST", path: String = "/post", headers: [(name: String, value: String)], body: [UInt8],
        now: Int64 = Fixture.now
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

/// Deterministic bodies that both sides can regenerate: the XSalsa20 keystream
/// SecretBox(key).seal(zeros(length), zero nonce) without its 40-byte prefix.
func keystreamBody(key: [UInt8], length: Int) throws -> [UInt8] {
    guard length > 0 else { return [] }
    let sealed = try SecretBox.seal([UInt8](repeating: 0, count: length), using: SymmetricKey(data: key),
                                    nonce: [UInt8](repeating: 0, count: 24))
    return [UInt8](sealed.dropFirst(40))
}

/// The JSON exchanged with `Tests/Interop/signing_interop.py`.
struct SigningInteropRequest: Encodable {
    struct Body: Encodable { let key: String; let length: Int }
    struct VerifyCase: Encodable { let method: String; let target: String; let headers: [String: String]; let body: Body; let pk: String }
    struct SignCase: Encodable { let sk: String; let canonical: String }
    var verify: [VerifyCase] = []
    var sign: [SignCase] = []
    var paths: [String] = []
    var ints: [String] = []
    var base64: [String] = []
    var fromhex: [String] = []
}

struct SigningInteropResponse: Decodable {
    struct Verified: Decodable { let ok: Bool; let body_hash_ok: Bool; let path: String; let canonical: String }
    let verified: [Verified]
    let signatures: [String]
    let paths: [String]
    let ints: [String?]
    let base64: [String?]
    let fromhex: [String?]
}
