/// A libp2p peer id: the station's IPFS node identity and the key its IPNS name is made from.
///
/// A station's `/profile` carries it twice: `ipfs_peer_id` (base58btc of the multihash,
/// `12D3KooW…` for an Ed25519 key) and `ipns_name` (the same multihash as a CIDv1 with the
/// `libp2p-key` codec in base36, `k51…`, the form gateways accept). This type converts between
/// the two and builds both from an Ed25519 public key (as an emulated station needs).
public struct PeerID: Sendable, Hashable, CustomStringConvertible {
    /// The peer id's multihash: identity of the protobuf public key for Ed25519 keys, sha2-256
    /// of it for larger (RSA) keys.
    package let multihash: Multihash

    /// Wraps a multihash.
    init(multihash: Multihash) { self.multihash = multihash }

    /// The peer id of an Ed25519 public key: the identity multihash of the libp2p protobuf
    /// `PublicKey { Type: Ed25519, Data: key }`.
    ///
    /// - Throws: ``CIDError/notEd25519Key`` when `key` is not 32 bytes.
    public init(ed25519PublicKey key: [UInt8]) throws(CIDError) {
        guard key.count == 32 else { throw .notEd25519Key }
        multihash = Multihash(identityUnchecked: Self.ed25519ProtobufPrefix + key)
    }

    /// Parses a peer id (`12D3KooW…`, `Qm…`) or an IPNS name (a `libp2p-key` CIDv1 in any
    /// multibase this package reads, usually `k51…`).
    ///
    /// - Throws: ``CIDError``: the errors of ``CID/init(_:)`` for a CID string,
    ///   ``CIDError/unexpectedCodec(_:)`` for a CIDv1 that is not `libp2p-key`,
    ///   ``CIDError/unsupportedPeerIDHash(_:)`` for a multihash other than identity or sha2-256
    ///   (whose base58 form would not read back as a peer id), and
    ///   ``CIDError/invalidCharacter(offset:)``, ``CIDError/truncated``,
    ///   ``CIDError/trailingBytes(_:)`` for a malformed base58 multihash.
    public init(_ text: some StringProtocol) throws(CIDError) {
        guard let first = text.first else { throw .empty }
        guard text.utf8.count <= CID.maximumStringLength else { throw .tooLong(text.utf8.count) }
        if first == "1" || first == "Q" {
            let bytes = try Multibase.base58btc.decode(Substring(text))
            var index = 0
            let multihash = try Multihash.read(bytes[...], at: &index)
            guard index == bytes.count else { throw .trailingBytes(bytes.count - index) }
            try Self.checkHash(multihash)
            self.multihash = multihash
            return
        }
        let cid = try CID(text)
        guard cid.codec == Multicodec.libp2pKey else { throw .unexpectedCodec(cid.codec) }
        try Self.checkHash(cid.multihash)
        multihash = cid.multihash
    }

    /// libp2p peer ids are an identity multihash (an inlined key) or sha2-256 of the key; in
    /// base58 they start with `1` or `Qm`, which is how ``init(_:)`` tells them from a CID.
    private static func checkHash(_ multihash: Multihash) throws(CIDError) {
        guard multihash.code == Multihash.identity || multihash.code == Multihash.sha2_256 else {
            throw .unsupportedPeerIDHash(multihash.code)
        }
    }

    /// The base58btc peer id (`12D3KooW…` for Ed25519 keys), as `ipfs_peer_id` carries it.
    public var description: String { Multibase.base58btc.encode(multihash.bytes) }

    /// The IPNS name: CIDv1 `libp2p-key` in base36 (`k51…`), as `ipns_name` carries it.
    public var ipnsName: String { cid.string(in: .base36) }

    /// The IPNS name as a CID.
    public var cid: CID { CID(v1: Multicodec.libp2pKey, multihash: multihash) }

    /// The Ed25519 public key inside the peer id, or `nil` when the id is not an inlined
    /// Ed25519 key.
    public var ed25519PublicKey: [UInt8]? {
        guard multihash.code == Multihash.identity, multihash.digest.count == 36,
              Array(multihash.digest.prefix(4)) == Self.ed25519ProtobufPrefix
        else { return nil }
        return Array(multihash.digest.dropFirst(4))
    }

    /// `PublicKey` protobuf header: field 1 (Type) = 1 (Ed25519), field 2 (Data) of 32 bytes.
    private static let ed25519ProtobufPrefix: [UInt8] = [0x08, 0x01, 0x12, 0x20]
}

extension Multihash {
    /// An identity multihash of `data` (no length rule applies).
    init(identityUnchecked data: [UInt8]) {
        code = Multihash.identity
        digest = data
    }
}
