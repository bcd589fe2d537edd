import Foundation
import ClassicalCrypto
import OrderedJSON

/// A signed IPNS record (the protobuf `IpnsEntry` a gateway serves for
/// `/ipns/<name>?format=ipns-record`), read and verified as the IPNS record specification has it.
///
/// Only the V2 signature counts: Ed25519 over `"ipns-signature:"` followed by the DAG-CBOR `data`
/// field, checked against the key inlined in the name (an Ed25519 peer id). The record's fields
/// are read from `data`; any of the protobuf's own copies (`value`, `validity`, `sequence`, `ttl`,
/// `validityType`) that is present must equal it. The V1 signature is ignored, as modern Kubo
/// does: a record without a V2 signature is refused.
///
///     let record = try IPNSRecord.verified(bytes, name: try PeerID("k51…"), at: Date())
///     record.value      // "/ipfs/bafy…"
///     record.sequence   // refuse one lower than the last seen
public struct IPNSRecord: Sendable, Hashable {
    /// The largest record accepted (the specification's limit), in bytes.
    package static let maximumByteCount = 10 * 1024
    /// The media type of a record on a gateway (`Accept` header and answer `Content-Type`).
    package static let mediaType = "application/vnd.ipfs.ipns-record"

    /// The path the name points to (`/ipfs/<cid>`, `/ipns/<name>`), as the record carries it.
    public let value: String
    /// The publisher's counter: higher is newer.
    public let sequence: UInt64
    /// The end of the record's validity (its EOL), to the nanosecond the record names.
    public let validity: Date
    /// The record's validity text exactly as signed (RFC 3339).
    public let validityText: String
    /// How long a resolver may cache the record, in nanoseconds, when the record says.
    public let ttl: UInt64?

    /// Parses `bytes` as a record for `name`, checks its V2 signature against the Ed25519 key in
    /// the name, and checks that `now` is before its validity's end.
    ///
    /// - Parameters:
    ///   - bytes: the protobuf record, as a gateway serves it.
    ///   - name: the IPNS name (or peer id) the record was requested for; its key is the trust anchor.
    ///   - now: the time to judge validity at (inject one to check an old record).
    /// - Throws: ``IPNSRecordError``.
    package static func verified(_ bytes: some Collection<UInt8>, name: PeerID, at now: Date) throws(IPNSRecordError) -> IPNSRecord {
        let record = try signed(bytes, name: name)
        guard now < record.validity else { throw .expired(validity: record.validityText) }
        return record
    }

    /// As ``verified(_:name:at:)``, without the validity check: the record's signature and
    /// consistency only (for reporting what an expired record said).
    ///
    /// - Throws: ``IPNSRecordError``, never ``IPNSRecordError/expired(validity:)``.
    package static func signed(_ bytes: some Collection<UInt8>, name: PeerID) throws(IPNSRecordError) -> IPNSRecord {
        let bytes = [UInt8](bytes)
        guard bytes.count <= maximumByteCount else { throw .tooLarge(bytes.count) }
        guard let publicKey = name.ed25519PublicKey else { throw .unsupportedKey }
        let entry = try Entry(protobuf: bytes)
        guard let data = entry.data, !data.isEmpty, let signature = entry.signatureV2, !signature.isEmpty else {
            throw .missingSignatureV2
        }
        if let embedded = entry.publicKey, embedded != Self.libp2pPublicKey(publicKey) {
            throw .publicKeyMismatch
        }
        guard Ed25519.isValidSignature(signature, for: Self.signaturePrefix + data, publicKey: publicKey) else {
            throw .invalidSignature
        }
        let fields = try DataFields(cbor: data)
        // The protobuf's own copies, when present, must say what the signed data says.
        if let value = entry.value, value != fields.value { throw .fieldMismatch("Value") }
        if let validity = entry.validity, validity != fields.validity { throw .fieldMismatch("Validity") }
        if let sequence = entry.sequence, sequence != fields.sequence { throw .fieldMismatch("Sequence") }
        if let ttl = entry.ttl, let signedTTL = fields.ttl, ttl != signedTTL { throw .fieldMismatch("TTL") }
        if let type = entry.validityType, type != fields.validityType { throw .fieldMismatch("ValidityType") }
        guard fields.validityType == 0 else { throw .unsupportedValidityType(fields.validityType) }
        guard let valueText = String(bytes: fields.value, encoding: .utf8) else { throw .malformed("Value is not UTF-8") }
        guard let validityText = String(bytes: fields.validity, encoding: .utf8),
              let validity = RFC3339.date(validityText) else {
            throw .malformed("Validity is not an RFC 3339 time")
        }
        return IPNSRecord(value: valueText, sequence: fields.sequence, validity: validity, validityText: validityText,
                          ttl: fields.ttl)
    }

    /// The CID of an `/ipfs/<cid>` value (no further path), or `nil` for any other value.
    public var ipfsCID: CID? {
        guard value.hasPrefix("/ipfs/") else { return nil }
        let rest = value.dropFirst("/ipfs/".count)
        guard !rest.isEmpty, !rest.contains("/") else { return nil }
        return try? CID(rest)
    }

    /// `"ipns-signature:"`, the V2 signature's domain prefix.
    package static let signaturePrefix = Array("ipns-signature:".utf8)

    /// The libp2p protobuf `PublicKey { Type: Ed25519, Data: key }`.
    static func libp2pPublicKey(_ key: [UInt8]) -> [UInt8] { [0x08, 0x01, 0x12, 0x20] + key }
}
