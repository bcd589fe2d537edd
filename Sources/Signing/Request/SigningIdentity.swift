import PQCrypto

/// Who signs a request: the uid to act as, the paired device's uid, and that device's ML-DSA-65
/// private key.
///
/// For an owner's paired device `uid` is the station's uid returned by `/delegate/confirm`, and
/// `deviceUID` is the device uid exactly as the station echoed it (it is case-sensitive).
public struct SigningIdentity: Sendable {
    /// The uid sent as `x-cipher-uid`.
    public let uid: String
    /// The device uid sent as `x-cipher-device`.
    public let deviceUID: String
    /// The device's ML-DSA-65 private key.
    public let privateKey: MLDSA65.PrivateKey

    /// Creates an identity.
    public init(uid: String, deviceUID: String, privateKey: MLDSA65.PrivateKey) {
        self.uid = uid
        self.deviceUID = deviceUID
        self.privateKey = privateKey
    }

    /// The device's public key, the one the station stores at pairing.
    public var publicKey: MLDSA65.PublicKey { privateKey.publicKey }
}
