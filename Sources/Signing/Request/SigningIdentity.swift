import PQCrypto

/// Who signs a request: the uid to act as, the paired device's uid, and that device's ML-DSA-65
/// signing key.
///
/// For an owner's paired device `uid` is the station's uid returned by `/delegate/confirm`, and
/// `deviceUID` is the device uid exactly as the station echoed it (it is case-sensitive).
public struct SigningIdentity: Sendable {
    /// The uid sent as `x-cipher-uid`.
    public let uid: String
    /// The device uid sent as `x-cipher-device`.
    public let deviceUID: String
    /// The device's ML-DSA-65 signing key: a pure-Swift `MLDSA65.PrivateKey`, or a key the app
    /// keeps where its secret cannot be read (only asked to sign).
    public let signingKey: any MLDSA65SigningKey

    /// Creates an identity that signs with `signingKey`.
    public init(uid: String, deviceUID: String, signingKey: some MLDSA65SigningKey) {
        self.uid = uid
        self.deviceUID = deviceUID
        self.signingKey = signingKey
    }

    /// Creates an identity that signs with a pure-Swift private key:
    /// ``init(uid:deviceUID:signingKey:)``.
    public init(uid: String, deviceUID: String, privateKey: MLDSA65.PrivateKey) {
        self.init(uid: uid, deviceUID: deviceUID, signingKey: privateKey)
    }

    /// The device's public key, as the station stores it at pairing.
    public var publicKey: MLDSA65.PublicKey { signingKey.publicKey }
}
