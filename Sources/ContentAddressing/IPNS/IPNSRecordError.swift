/// Why an IPNS record was refused.
package enum IPNSRecordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Over ``IPNSRecord/maximumByteCount`` bytes (the count found).
    case tooLarge(Int)
    /// The name is not an Ed25519 peer id, so it carries no key to verify against.
    case unsupportedKey
    /// Not a protobuf `IpnsEntry`, or its `data` is not the expected DAG-CBOR map (what is wrong).
    case malformed(String)
    /// No V2 signature or no `data` (a V1-only record).
    case missingSignatureV2
    /// The record embeds a public key other than the name's.
    case publicKeyMismatch
    /// The V2 signature does not verify under the name's key.
    case invalidSignature
    /// A protobuf field differs from the signed `data` (the field's name).
    case fieldMismatch(String)
    /// A validity type other than 0 (EOL).
    case unsupportedValidityType(UInt64)
    /// The record's validity ended (its EOL text).
    case expired(validity: String)

    /// A one-line explanation.
    package var description: String {
        switch self {
        case let .tooLarge(count): "the IPNS record is \(count) bytes, over the 10 KiB limit"
        case .unsupportedKey: "the IPNS name does not inline an Ed25519 key"
        case let .malformed(why): "not an IPNS record: \(why)"
        case .missingSignatureV2: "the IPNS record has no V2 signature"
        case .publicKeyMismatch: "the IPNS record embeds another public key"
        case .invalidSignature: "the IPNS record's signature does not verify under the name's key"
        case let .fieldMismatch(field): "the IPNS record's \(field) differs from its signed data"
        case let .unsupportedValidityType(type): "unsupported IPNS validity type \(type)"
        case let .expired(validity): "the IPNS record expired at \(validity)"
        }
    }
}
