/// Why a string or byte sequence is not a CID, multihash or peer id this package understands.
///
/// A struct with static members rather than an enum, so that a new reason never breaks an app's
/// `switch`: compare with `==` (`error == .truncated`), or read the property a reason carries
/// (``length``, ``offset``, ``count``…), which is `nil` for the other reasons.
public struct CIDError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Reason: Hashable, Sendable {
        case empty
        case tooLong(Int)
        case unsupportedMultibase(Character)
        case invalidCharacter(offset: Int)
        case truncated
        case invalidVarint
        case trailingBytes(Int)
        case unsupportedVersion(UInt64)
        case invalidCIDv0
        case digestLengthMismatch(code: UInt64, expected: Int, actual: Int)
        case notEd25519Key
        case unexpectedCodec(UInt64)
        case unsupportedPeerIDHash(UInt64)
    }

    private let reason: Reason

    private init(_ reason: Reason) { self.reason = reason }

    /// The string is empty.
    public static let empty = CIDError(.empty)
    /// The string is longer than any CID this package reads (``CID/maximumStringLength``); see ``length``.
    public static func tooLong(_ length: Int) -> CIDError { CIDError(.tooLong(length)) }
    /// The multibase prefix is not one of `b`/`B` (base32), `k`/`K` (base36), `z` (base58btc),
    /// `f`/`F` (base16); or a 46-character `Qm…` string is expected for CIDv0. See ``prefix``.
    public static func unsupportedMultibase(_ prefix: Character) -> CIDError { CIDError(.unsupportedMultibase(prefix)) }
    /// A character is not in the alphabet of the string's base; `offset` counts UTF-8 bytes
    /// after the multibase prefix. See ``offset``.
    public static func invalidCharacter(offset: Int) -> CIDError { CIDError(.invalidCharacter(offset: offset)) }
    /// The bytes end in the middle of a varint, a multihash or a digest.
    public static let truncated = CIDError(.truncated)
    /// A varint is longer than 9 bytes or not minimally encoded.
    public static let invalidVarint = CIDError(.invalidVarint)
    /// Bytes are left over after the multihash; see ``count``.
    public static func trailingBytes(_ count: Int) -> CIDError { CIDError(.trailingBytes(count)) }
    /// The CID version is neither 0 (`Qm…`) nor 1; see ``version``.
    public static func unsupportedVersion(_ version: UInt64) -> CIDError { CIDError(.unsupportedVersion(version)) }
    /// A CIDv0 must be a 34-byte sha2-256 multihash (`0x12 0x20` + 32 bytes).
    public static let invalidCIDv0 = CIDError(.invalidCIDv0)
    /// A multihash digest has the wrong length for its hash function; see ``multihashCode``,
    /// ``expectedDigestLength`` and ``actualDigestLength``.
    public static func digestLengthMismatch(code: UInt64, expected: Int, actual: Int) -> CIDError {
        CIDError(.digestLengthMismatch(code: code, expected: expected, actual: actual))
    }
    /// A peer id or IPNS name does not hold an Ed25519 public key (or an Ed25519 key has the
    /// wrong length).
    public static let notEd25519Key = CIDError(.notEd25519Key)
    /// The codec does not fit the use (an IPNS name needs `libp2p-key`, a CIDv0 `dag-pb`); see ``codec``.
    public static func unexpectedCodec(_ codec: UInt64) -> CIDError { CIDError(.unexpectedCodec(codec)) }
    /// A peer id or IPNS name whose multihash is neither identity (an inlined key) nor sha2-256
    /// (libp2p makes peer ids with no other); see ``multihashCode``.
    public static func unsupportedPeerIDHash(_ code: UInt64) -> CIDError { CIDError(.unsupportedPeerIDHash(code)) }

    /// The string's length, for ``tooLong(_:)``.
    public var length: Int? {
        if case let .tooLong(length) = reason { return length }
        return nil
    }

    /// The multibase prefix, for ``unsupportedMultibase(_:)``.
    public var prefix: Character? {
        if case let .unsupportedMultibase(prefix) = reason { return prefix }
        return nil
    }

    /// The offset of the bad character, for ``invalidCharacter(offset:)``.
    public var offset: Int? {
        if case let .invalidCharacter(offset) = reason { return offset }
        return nil
    }

    /// The number of bytes left over, for ``trailingBytes(_:)``.
    public var count: Int? {
        if case let .trailingBytes(count) = reason { return count }
        return nil
    }

    /// The CID version, for ``unsupportedVersion(_:)``.
    public var version: UInt64? {
        if case let .unsupportedVersion(version) = reason { return version }
        return nil
    }

    /// The codec, for ``unexpectedCodec(_:)``.
    public var codec: UInt64? {
        if case let .unexpectedCodec(codec) = reason { return codec }
        return nil
    }

    /// The multihash function code, for ``digestLengthMismatch(code:expected:actual:)`` and
    /// ``unsupportedPeerIDHash(_:)``.
    public var multihashCode: UInt64? {
        switch reason {
        case let .digestLengthMismatch(code, _, _), let .unsupportedPeerIDHash(code): code
        default: nil
        }
    }

    /// The digest length the hash function needs, for ``digestLengthMismatch(code:expected:actual:)``.
    public var expectedDigestLength: Int? {
        if case let .digestLengthMismatch(_, expected, _) = reason { return expected }
        return nil
    }

    /// The digest length found, for ``digestLengthMismatch(code:expected:actual:)``.
    public var actualDigestLength: Int? {
        if case let .digestLengthMismatch(_, _, actual) = reason { return actual }
        return nil
    }

    /// A one-line explanation.
    public var description: String {
        switch reason {
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
        case let .unsupportedPeerIDHash(code):
            "a peer id's multihash must be identity or sha2-256, not 0x\(String(code, radix: 16))"
        }
    }
}
