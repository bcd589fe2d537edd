/// Why a string or byte sequence is not a CID, multihash or peer id this package understands.
public enum CIDError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The string is empty.
    case empty
    /// The string is longer than any CID this package reads (``CID/maximumStringLength``).
    case tooLong(Int)
    /// The multibase prefix is not one of `b`/`B` (base32), `k`/`K` (base36), `z` (base58btc),
    /// `f`/`F` (base16); or a 46-character `Qm…` string is expected for CIDv0.
    case unsupportedMultibase(Character)
    /// A character is not in the alphabet of the string's base; `offset` counts UTF-8 bytes
    /// after the multibase prefix.
    case invalidCharacter(offset: Int)
    /// The bytes end in the middle of a varint, a multihash or a digest.
    case truncated
    /// A varint is longer than 9 bytes or not minimally encoded.
    case invalidVarint
    /// Bytes are left over after the multihash.
    case trailingBytes(Int)
    /// The CID version is neither 0 (`Qm…`) nor 1.
    case unsupportedVersion(UInt64)
    /// A CIDv0 must be a 34-byte sha2-256 multihash (`0x12 0x20` + 32 bytes).
    case invalidCIDv0
    /// A multihash digest has the wrong length for its hash function.
    case digestLengthMismatch(code: UInt64, expected: Int, actual: Int)
    /// A peer id or IPNS name does not hold an Ed25519 public key (or an Ed25519 key has the
    /// wrong length).
    case notEd25519Key
    /// The codec does not fit the use (an IPNS name needs `libp2p-key`, a CIDv0 `dag-pb`).
    case unexpectedCodec(UInt64)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .empty: "empty CID string"
        case let .tooLong(length): "CID string of \(length) characters is too long"
        case let .unsupportedMultibase(prefix): "unsupported multibase prefix '\(prefix)'"
        case let .invalidCharacter(offset): "invalid character at offset \(offset)"
        case .truncated: "CID bytes are truncated"
        case .invalidVarint: "invalid varint in CID"
        case let .trailingBytes(count): "\(count) unexpected bytes after the multihash"
        case let .unsupportedVersion(version): "unsupported CID version \(version)"
        case .invalidCIDv0: "a CIDv0 must be a sha2-256 multihash of 34 bytes"
        case let .digestLengthMismatch(code, expected, actual):
            "multihash 0x\(String(code, radix: 16)) needs a \(expected)-byte digest, got \(actual)"
        case .notEd25519Key: "not an Ed25519 public key"
        case let .unexpectedCodec(codec): "unexpected codec 0x\(String(codec, radix: 16))"
        }
    }
}
