/// The six `x-cipher-*` headers that authenticate a request to a Cipher Station.
///
/// Send all six with the request, and send exactly the body whose SHA-256 is in
/// ``bodySHA256``.
public struct SignedRequestHeaders: Sendable, Equatable {
    /// Header names, lowercase, in the order the station declares them.
    public static let uidName = "x-cipher-uid"
    /// The device uid header.
    public static let deviceName = "x-cipher-device"
    /// The timestamp header.
    public static let timestampName = "x-cipher-ts"
    /// The nonce header.
    public static let nonceName = "x-cipher-nonce"
    /// The body hash header.
    public static let bodySHA256Name = "x-cipher-body-sha256"
    /// The signature header.
    public static let signatureName = "x-cipher-sig"
    /// All six names in the station's order (the order of its 422 "missing" errors).
    public static let names = [uidName, deviceName, timestampName, nonceName, bodySHA256Name, signatureName]

    /// `x-cipher-uid`.
    public let uid: String
    /// `x-cipher-device`.
    public let device: String
    /// `x-cipher-ts`: Unix time in whole seconds.
    public let timestamp: String
    /// `x-cipher-nonce`: 32 lowercase hex characters from a secure random source.
    public let nonce: String
    /// `x-cipher-body-sha256`: lowercase hex SHA-256 of the exact body bytes.
    public let bodySHA256: String
    /// `x-cipher-sig`: standard base64 (with padding) of the 3309-byte ML-DSA-65 signature.
    public let signature: String

    /// Creates the header set from its six values.
    public init(uid: String, device: String, timestamp: String, nonce: String, bodySHA256: String, signature: String) {
        self.uid = uid
        self.device = device
        self.timestamp = timestamp
        self.nonce = nonce
        self.bodySHA256 = bodySHA256
        self.signature = signature
    }

    /// The six headers as (name, value) pairs, in the station's order.
    public var fields: [(name: String, value: String)] {
        zip(Self.names, [uid, device, timestamp, nonce, bodySHA256, signature]).map { ($0, $1) }
    }

    /// The six headers keyed by lowercase name.
    public var dictionary: [String: String] {
        Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.value) })
    }
}
