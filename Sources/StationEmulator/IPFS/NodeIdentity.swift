import Manifest
import ClassicalCrypto
import ContentAddressing

/// The emulated IPFS node's identity: an Ed25519 key (libsodium) whose libp2p peer id
/// (`12D3KooW…`) and IPNS name (`k51…`, base36 CIDv1 `libp2p-key`) are real.
struct NodeIdentity: Sendable {
    let key: Ed25519.PrivateKey
    let peerID: String
    let ipnsName: String

    init(key: Ed25519.PrivateKey) {
        self.key = key
        // A 32-byte Ed25519 public key always makes a valid peer id.
        let peer = (try? PeerID(ed25519PublicKey: key.publicKey))
        peerID = peer?.description ?? ""
        ipnsName = peer?.ipnsName ?? ""
    }
}
