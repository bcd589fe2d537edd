import Foundation
import PQCrypto
import ClassicalCrypto
import SHA2
import TestSupport

@testable import Signing

/// The device of ``SignedRequestValues``, signing with the key of `seed`.
struct Fixture {
    let privateKey: MLDSA65.PrivateKey
    let identity: SigningIdentity
    let signer: RequestSigner

    init(seed: UInt8 = 1, nonce: String = "0123456789abcdef0123456789abcdef") throws {
        privateKey = try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: seed, count: 32))
        identity = SigningIdentity(uid: SignedRequestValues.stationUID, deviceUID: SignedRequestValues.deviceUID, privateKey: privateKey)
        signer = RequestSigner(identity: identity, clock: { SignedRequestValues.now }, nonceSource: { nonce })
    }

    /// Whether `headers` carry this device's signature over the canonical string they describe
    /// with `method` and `path`: the station's check of the signature itself (its other checks
    /// are the emulator's `RequestVerifier`, tested in StationEmulatorTests).
    func signatureVerifies(_ headers: [(name: String, value: String)], method: String, path: String) -> Bool {
        let field = { (name: String) in headers.first { $0.name == name }?.value ?? "" }
        let canonical = CanonicalRequest(
            method: method, path: path, uid: field("x-cipher-uid"), deviceUID: field("x-cipher-device"),
            timestamp: field("x-cipher-ts"), nonce: field("x-cipher-nonce"), bodySHA256: field("x-cipher-body-sha256"))
        guard let signature = Data(base64Encoded: field("x-cipher-sig")) else { return false }
        return identity.publicKey.isValidSignature(signature, for: canonical.bytes)
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
}

struct SigningInteropResponse: Decodable {
    struct Verified: Decodable { let ok: Bool; let body_hash_ok: Bool; let path: String; let canonical: String }
    let verified: [Verified]
    let signatures: [String]
    let paths: [String]
}
