import ClassicalCrypto
import SHA2

/// Multicodec codes this package names.
package enum Multicodec {
    /// `dag-pb`: the protobuf nodes of UnixFS files (every CIDv0).
    static let dagPB: UInt64 = 0x70
    /// `raw`: a block that is the file bytes themselves.
    package static let raw: UInt64 = 0x55
    /// `libp2p-key`: an IPNS name (a CIDv1 around a peer id's multihash).
    static let libp2pKey: UInt64 = 0x72
}

/// A self-describing hash: a hash-function code and the digest.
package struct Multihash: Sendable, Hashable {
    /// sha2-256, the hash of every block Kubo adds by default.
    static let sha2_256: UInt64 = 0x12
    /// The identity "hash": the digest is the data itself (Ed25519 peer ids).
    package static let identity: UInt64 = 0x00

    /// The hash function's multicodec code.
    let code: UInt64
    /// The digest bytes.
    let digest: [UInt8]

    /// Creates a multihash, checking the digest length for sha2-256 (32 bytes).
    ///
    /// - Throws: ``CIDError/digestLengthMismatch(code:expected:actual:)`` for a sha2-256 digest
    ///   that is not 32 bytes.
    package init(code: UInt64, digest: [UInt8]) throws(CIDError) {
        if code == Self.sha2_256, digest.count != SHA256.byteCount {
            throw .digestLengthMismatch(code: code, expected: SHA256.byteCount, actual: digest.count)
        }
        self.code = code
        self.digest = digest
    }

    /// The sha2-256 multihash of `bytes`.
    static func sha256(of bytes: some Collection<UInt8>) -> Multihash {
        var hasher = SHA256()
        let done: Void? = bytes.withContiguousStorageIfAvailable { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { hasher.update(bufferPointer: $0) } }
        return Multihash(sha256Digest: hasher.finalize())
    }

    /// A sha2-256 multihash of a digest known to be 32 bytes.
    package init(sha256Digest: [UInt8]) {
        code = Self.sha2_256
        digest = sha256Digest
    }

    /// Whether this is an identity multihash: the "digest" is the content itself (peer ids, IPNS
    /// names, inlined CIDs). A CID with one names no block to fetch, so nothing fetched for it can
    /// be verified; gateway paths refuse such CIDs.
    package var isIdentity: Bool { code == Self.identity }

    /// The binary multihash: varint code, varint length, digest.
    var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(digest.count + 4)
        Varint.append(code, to: &out)
        Varint.append(UInt64(digest.count), to: &out)
        out.append(contentsOf: digest)
        return out
    }

    /// Whether `block` hashes to this multihash (sha2-256, or identity: equal bytes). Other hash
    /// functions are not supported and never match.
    package func matches(block: some Collection<UInt8>) -> Bool {
        switch code {
        case Self.sha2_256: Multihash.sha256(of: block).digest == digest
        case Self.identity: Array(block) == digest
        default: false
        }
    }

    /// Reads a multihash at `index`, advancing it.
    static func read(_ bytes: ArraySlice<UInt8>, at index: inout Int) throws(CIDError) -> Multihash {
        let code = try Varint.read(bytes, at: &index)
        let length = try Varint.read(bytes, at: &index)
        guard length <= UInt64(bytes.endIndex - index) else { throw .truncated }
        let digest = Array(bytes[index..<index + Int(length)])
        index += Int(length)
        return try Multihash(code: code, digest: digest)
    }
}

/// A content identifier, as IPFS names blocks and files.
///
/// The station's CIDs are **CIDv0** (`Qm…`): base58btc of the sha2-256 multihash of a `dag-pb`
/// node; `UnixFS` computes them exactly as Kubo's `ipfs add` does. CIDv1 strings are read and
/// written too (`bafy…` base32, `k…` base36, `z…` base58btc, `f…` hex), which IPNS names need.
///
/// Parse untrusted text with ``init(_:)``; every malformed string is a ``CIDError``.
public struct CID: Sendable, Hashable, CustomStringConvertible, Codable {
    /// CID versions.
    public enum Version: Int, Sendable, Hashable {
        /// A bare sha2-256 multihash of a `dag-pb` node, written in base58btc (`Qm…`).
        case v0 = 0
        /// Version, codec and multihash, written with a multibase prefix.
        case v1 = 1
    }

    /// The longest CID string accepted (a CIDv1 with a 64-byte digest in base36 is about 110).
    public static let maximumStringLength = 256

    /// The version.
    public let version: Version
    /// The multicodec of the content (always `Multicodec/dagPB` for v0).
    public let codec: UInt64
    /// The multihash.
    package let multihash: Multihash

    /// A CIDv0 for a sha2-256 multihash.
    ///
    /// - Throws: ``CIDError/invalidCIDv0`` when the multihash is not sha2-256 of 32 bytes.
    init(v0 multihash: Multihash) throws(CIDError) {
        guard multihash.code == Multihash.sha2_256, multihash.digest.count == SHA256.byteCount else {
            throw .invalidCIDv0
        }
        version = .v0
        codec = Multicodec.dagPB
        self.multihash = multihash
    }

    /// A CIDv1.
    package init(v1 codec: UInt64, multihash: Multihash) {
        version = .v1
        self.codec = codec
        self.multihash = multihash
    }

    /// The CIDv0 of a `dag-pb` block: sha2-256 of its bytes.
    public static func v0(ofBlock block: some Collection<UInt8>) -> CID {
        CID(v0Unchecked: Multihash.sha256(of: block))
    }

    package init(v0Unchecked multihash: Multihash) {
        version = .v0
        codec = Multicodec.dagPB
        self.multihash = multihash
    }

    /// Parses a CID string: `Qm…` (CIDv0, 46 characters) or a multibase CIDv1 (`b`, `B`, `k`,
    /// `K`, `z`, `f`, `F` prefixes).
    ///
    /// - Throws: ``CIDError``: ``CIDError/empty``, ``CIDError/tooLong(_:)``,
    ///   ``CIDError/unsupportedMultibase(_:)``, ``CIDError/invalidCharacter(offset:)``, or any
    ///   error of ``init(bytes:)`` for the decoded bytes.
    public init(_ text: some StringProtocol) throws(CIDError) {
        guard let first = text.first else { throw .empty }
        let length = text.utf8.count
        guard length <= Self.maximumStringLength else { throw .tooLong(length) }
        if length == 46, text.hasPrefix("Qm") {
            let bytes = try Multibase.base58btc.decode(Substring(text))
            try self.init(bytes: bytes)
            guard version == .v0 else { throw .invalidCIDv0 }
            return
        }
        guard let base = Multibase.forPrefix(first) else { throw .unsupportedMultibase(first) }
        let bytes = try base.decode(Substring(text).dropFirst())
        guard let version = bytes.first else { throw .truncated }
        // A multibase string holds a CIDv1; a CIDv0 has only its bare base58 form.
        guard version == 1 else { throw .unsupportedVersion(UInt64(version)) }
        try self.init(bytes: bytes)
    }

    /// Reads a binary CID: a 34-byte sha2-256 multihash (CIDv0) or `0x01` codec multihash (CIDv1).
    ///
    /// - Throws: ``CIDError/truncated``, ``CIDError/invalidVarint``,
    ///   ``CIDError/unsupportedVersion(_:)``, ``CIDError/invalidCIDv0``,
    ///   ``CIDError/digestLengthMismatch(code:expected:actual:)``, ``CIDError/trailingBytes(_:)``.
    public init(bytes: [UInt8]) throws(CIDError) {
        guard let first = bytes.first else { throw .truncated }
        let slice = bytes[...]
        var index = 0
        if first == 0x12 {
            guard bytes.count == 34, bytes[1] == 0x20 else { throw .invalidCIDv0 }
            let multihash = try Multihash.read(slice, at: &index)
            self.init(v0Unchecked: multihash)
            return
        }
        let version = try Varint.read(slice, at: &index)
        guard version == 1 else { throw .unsupportedVersion(version) }
        let codec = try Varint.read(slice, at: &index)
        let multihash = try Multihash.read(slice, at: &index)
        guard index == bytes.count else { throw .trailingBytes(bytes.count - index) }
        self.init(v1: codec, multihash: multihash)
    }

    /// The binary form: the multihash for v0; version, codec and multihash for v1.
    public var bytes: [UInt8] {
        switch version {
        case .v0:
            return multihash.bytes
        case .v1:
            var out = [UInt8]()
            Varint.append(1, to: &out)
            Varint.append(codec, to: &out)
            out.append(contentsOf: multihash.bytes)
            return out
        }
    }

    /// The canonical string: base58btc (`Qm…`) for v0; for v1 base36 (`k…`) when the codec is
    /// `libp2p-key` (as Kubo writes IPNS names) and base32 (`b…`) otherwise.
    public var description: String {
        switch version {
        case .v0: Multibase.base58btc.encode(bytes)
        case .v1: string(in: codec == Multicodec.libp2pKey ? .base36 : .base32)
        }
    }

    /// The string in a chosen multibase (with its prefix). A CIDv0 has only its bare base58
    /// form, so it is first converted to the equivalent CIDv1 (``v1``).
    package func string(in base: Multibase) -> String {
        let source = version == .v0 ? v1 : self
        return String(base.prefix) + base.encode(source.bytes)
    }

    /// The same content as a CIDv1 (unchanged when already v1).
    public var v1: CID { CID(v1: codec, multihash: multihash) }

    /// Whether `block` is the block this CID names: its hash matches the multihash.
    public func matches(block: some Collection<UInt8>) -> Bool {
        multihash.matches(block: block)
    }

    /// Whether `bytes` are the *file* this CID names, as a gateway serves it: the UnixFS DAG
    /// Kubo's `ipfs add` builds from them has this root (CIDv0 or `dag-pb` CIDv1), or, for a
    /// `raw` CIDv1, the bytes hash to it. A byte changed anywhere gives `false`.
    public func matches(fileBytes bytes: some Collection<UInt8>) -> Bool {
        switch codec {
        case Multicodec.dagPB: UnixFS.cid(of: bytes).multihash == multihash
        case Multicodec.raw: multihash.matches(block: bytes)
        default: false
        }
    }

    /// Decodes a CID string.
    ///
    /// - Throws: `DecodingError.dataCorrupted` with the ``CIDError`` text for a malformed string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    /// Encodes the canonical string (``description``).
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
