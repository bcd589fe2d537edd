import TestSupport
import Testing
import OrderedJSON
@testable import ContentAddressing

/// Multibase strings of two CIDs as Kubo writes them (`ipfs multibase encode` over the binary
/// CID, for every base of `ipfs multibase list`), published as test fixtures of a public
/// gateway project; the IPNS name is the example of the IPFS gateway documentation.
private enum KuboMultibase {
    static let dagPB = (
        base32: "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi",
        base32Upper: "BAFYBEIGDYRZT5SFP7UDM7HU76UH7Y26NF3EFUYLQABF3OCLGTQY55FBZDI",
        base36: "k2jmtxw8rjh1z69c6not3wtdxb0u3urbzhyll1t9jg6ox26dhi5sfi1m",
        base36Upper: "K2JMTXW8RJH1Z69C6NOT3WTDXB0U3URBZHYLL1T9JG6OX26DHI5SFI1M",
        base16: "f01701220c3c4733ec8affd06cf9e9ff50ffc6bcd2ec85a6170004bb709669c31de94391a",
        base58btc: "zdj7Wic6KcJAfWz1c9o4M6kq9Lwd5BfbxkVafnrojaaGiSFxM")
    static let ipns = (
        base36: "k51qzi5uqu5dlvj2baxnqndepeb86cbk3ng7n3i46uzyxzyqj2xjonzllnv0v8",
        base32: "bafzaajaiaejcbzdibmxyzdjbbehgvizh6g5tikvy47mshdy6gwbruvgwvd24seje",
        base16: "f0172002408011220e4680b2f8c8d21090e6aa327f1bb342ab8e7d9238f1e35831a54d6a8f5c91124",
        base58btc: "z5AanNVJCxnWCzDzCerCejh6EdigZJnNfHrJGzTp5TT2moo7mRGhZZu")
}

@Suite("CIDs, multibases, peer ids and IPNS names")
struct CIDTests {
    @Test func cidV1InEveryBaseKuboWrites() throws {
        let fixture = KuboMultibase.dagPB
        let cid = try CID(fixture.base32)
        #expect(cid.version == .v1 && cid.codec == Multicodec.dagPB && cid.multihash.code == Multihash.sha2_256)
        #expect(cid.bytes.hex == String(fixture.base16.dropFirst()))
        for other in [fixture.base32Upper, fixture.base36, fixture.base36Upper, fixture.base16, fixture.base58btc] {
            #expect(try CID(other) == cid, "\(other)")
        }
        #expect(cid.description == fixture.base32)
        #expect(cid.string(in: .base36) == fixture.base36)
        #expect(cid.string(in: .base16) == fixture.base16)
        #expect(cid.string(in: .base58btc) == fixture.base58btc)
        // The same multihash as CIDv0, and back.
        let v0 = try CID(v0: cid.multihash)
        #expect(v0.description.hasPrefix("Qm") && v0.description.count == 46)
        #expect(try CID(v0.description) == v0)
        #expect(v0.v1 == cid && v0.string(in: .base32) == fixture.base32)
    }

    @Test func ipnsNameFromAnEd25519Key() throws {
        let fixture = KuboMultibase.ipns
        let key = try [UInt8](hex: "e4680b2f8c8d21090e6aa327f1bb342ab8e7d9238f1e35831a54d6a8f5c91124")
        let peer = try PeerID(ed25519PublicKey: key)
        #expect(peer.ipnsName == fixture.base36)
        #expect(peer.cid.string(in: .base32) == fixture.base32)
        #expect(peer.cid.string(in: .base16) == fixture.base16)
        #expect(peer.cid.string(in: .base58btc) == fixture.base58btc)
        #expect(peer.description.hasPrefix("12D3KooW"))
        for form in [fixture.base36, fixture.base32, fixture.base16, fixture.base58btc, peer.description] {
            let parsed = try PeerID(form)
            #expect(parsed == peer && parsed.ed25519PublicKey == key, "\(form)")
        }
        #expect(try CID(fixture.base36).description == fixture.base36)
    }

    /// libp2p peer-id specification test vector (Ed25519 public key protobuf → peer id).
    @Test func peerIDSpecificationVector() throws {
        let protobuf = try [UInt8](hex: "080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e")
        let peer = try PeerID(ed25519PublicKey: Array(protobuf.dropFirst(4)))
        #expect(peer.description == "12D3KooWBtg3aaRMjxwedh83aGiUkwSxDwUZkzuJcfaqUmo7R3pq")
        #expect(peer.multihash.bytes == [0x00, 0x24] + protobuf)
        #expect(throws: CIDError.notEd25519Key) { try PeerID(ed25519PublicKey: [UInt8](repeating: 1, count: 31)) }
        // A sha2-256 (RSA-style) peer id has no inline key.
        let rsa = try PeerID("QmUBWux9DurBcc6HrEz7NwMwcHsWgPLomFJbBWTK1FVmFD")
        #expect(rsa.ed25519PublicKey == nil && rsa.ipnsName.hasPrefix("k"))
        #expect(throws: CIDError.unexpectedCodec(Multicodec.dagPB)) { try PeerID(KuboMultibase.dagPB.base32) }
    }

    /// A `libp2p-key` CID whose multihash is neither identity nor sha2-256 (found by the `cid`
    /// fuzz harness): its base58 form would not read back as a peer id, so it is refused.
    @Test func peerIDsHaveIdentityOrSHA256Multihashes() throws {
        let text = "bafzaegqkdaeaeQm77777777Bo7o7dtja7777777ykqdeagaa"
        let cid = try CID(text)
        #expect(cid.codec == Multicodec.libp2pKey)
        #expect(cid.multihash.code != Multihash.identity && cid.multihash.code != Multihash.sha2_256)
        let error = #expect(throws: CIDError.self) { try PeerID(text) }
        #expect(error == .unsupportedPeerIDHash(cid.multihash.code) && error?.multihashCode == cid.multihash.code)
        // Every peer id that reads reads back from both of its forms.
        for form in ["QmUBWux9DurBcc6HrEz7NwMwcHsWgPLomFJbBWTK1FVmFD", "12D3KooWBtg3aaRMjxwedh83aGiUkwSxDwUZkzuJcfaqUmo7R3pq"] {
            let peer = try PeerID(form)
            #expect(try PeerID(peer.description) == peer && PeerID(peer.ipnsName) == peer)
        }
    }

    @Test(arguments: [
        ("", CIDError.empty),
        ("QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff50", CIDError.invalidCharacter(offset: 45)),
        ("QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5", CIDError.unsupportedMultibase("Q")),
        ("xbafy", CIDError.unsupportedMultibase("x")),
        ("b", CIDError.truncated),
        ("f01701220" + String(repeating: "0", count: 62), CIDError.truncated),
        ("f017012", CIDError.truncated),
        ("f0170122", CIDError.invalidCharacter(offset: 7)),
        ("f02701220", CIDError.unsupportedVersion(2)),
        ("f122000", CIDError.unsupportedVersion(0x12)),
        ("f0170121f" + String(repeating: "0", count: 62), CIDError.digestLengthMismatch(code: 0x12, expected: 32, actual: 31)),
        ("f01701200" + "00", CIDError.digestLengthMismatch(code: 0x12, expected: 32, actual: 0)),
        ("f017000000000", CIDError.trailingBytes(2)),
        ("f01f0", CIDError.truncated),
        ("f0180800000", CIDError.invalidVarint),
        ("bafy!", CIDError.invalidCharacter(offset: 3)),
        ("k51q!", CIDError.invalidCharacter(offset: 3)),
        ("f0g", CIDError.invalidCharacter(offset: 1)),
        (String(repeating: "b", count: 300), CIDError.tooLong(300)),
    ])
    func malformedStringsGiveTypedErrors(_ input: String, _ expected: CIDError) {
        #expect(throws: expected) { try CID(input) }
    }

    @Test func binaryFormsAndBlockVerification() throws {
        let hello = Array("hello world\n".utf8)
        // Kubo's block for "hello world\n" (`ipfs add`, CIDv0): a dag-pb node whose Data is the
        // UnixFS file (type 2, the bytes, filesize 12).
        let block: [UInt8] = [0x0a, 0x12, 0x08, 0x02, 0x12, 0x0c] + hello + [0x18, 0x0c]
        let root = try CID("QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o")
        #expect(UnixFS.cid(of: hello) == root)
        #expect(root.matches(block: block))
        #expect(root.v1.matches(block: block))
        #expect(!root.matches(block: block.dropLast()))
        #expect(!root.matches(block: hello))
        #expect(try CID(bytes: root.bytes) == root && root.bytes.count == 34)
        #expect(try CID(bytes: root.v1.bytes) == root.v1)
        #expect(throws: CIDError.invalidCIDv0) { try CID(bytes: [0x12, 0x20, 0x00]) }
        #expect(throws: CIDError.truncated) { try CID(bytes: []) }
        // A raw-codec CIDv1 names the bytes themselves.
        let raw = CID(v1: Multicodec.raw, multihash: Multihash.sha256(of: hello))
        #expect(raw.matches(fileBytes: hello) && !raw.matches(fileBytes: hello.dropLast()))
        #expect(raw.description.hasPrefix("bafkrei"))
        // Codable as its string.
        #expect(try WireJSON.encode([root]) == Array(#"["QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o"]"#.utf8))
        #expect(try WireJSON.decode([CID].self, from: Array(#"["QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o"]"#.utf8)) == [root])
        #expect(throws: WireFormatError.self) { try WireJSON.decode(CID.self, from: Array(#""Qm0""#.utf8)) }
    }

    @Test func base58RoundTripsArbitraryBytes() throws {
        var rng = SplitMix64(seed: 58)
        for length in [0, 1, 2, 5, 32, 34, 36, 64] {
            for zeros in [0, 1, 3] {
                let bytes = [UInt8](repeating: 0, count: min(zeros, length)) + rng.bytes(max(0, length - zeros))
                for base in Multibase.allCases {
                    let text = base.encode(bytes)
                    #expect(try base.decode(Substring(text)) == bytes, "\(base) \(bytes.hex)")
                }
            }
        }
        #expect(Multibase.base58btc.encode([0, 0, 1]) == "112")
    }
}
