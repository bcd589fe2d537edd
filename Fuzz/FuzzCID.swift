// libFuzzer harness for content addressing: CIDs, multibase, peer ids and multihashes as text and
// as bytes, and the UnixFS reader over the blocks an identity CID carries. Every input either
// parses or fails with a typed error; a trap, a sanitizer report or a broken round trip is a finding.
// Build and run with Fuzz/run.sh (see Fuzz/README.md).
import Manifest
import ContentAddressing
import StationEmulator

private func violated(_ property: String) -> Never {
    fatalError("property violated: \(property)")
}


/// Reads a file from a root whose blocks only the root itself carries (no store).
private func readIdentityFile(_ cid: CID) {
    guard let size = try? UnixFS.fileSize(root: cid, blocks: { _ in nil }) else { return }
    let start = size > 16 ? size - 16 : 0
    _ = try? UnixFS.readAll(root: cid, range: start..<size, blocks: { _ in nil })
    _ = try? UnixFS.read(root: cid, range: 0..<min(size, 64), blocks: { _ in nil }, into: { _ in })
}

/// What one input may make the readers hold at once (checked by AllocationMeter.swift).
let amplificationLimit = AmplificationLimit(bytesPerInputByte: 32, fixedBytes: 1 << 20)

/// One input, called by AllocationMeter.swift's `LLVMFuzzerTestOneInput`.
func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    // Binary CIDs (a leading byte picks the codec for wrapping the rest as an identity CID).
    if let cid = try? CID(bytes: bytes) {
        guard cid.bytes == bytes || cid.version == .v0 else { violated("binary CID round trip") }
        guard cid.description.utf8.count > CID.maximumStringLength || (try? CID(cid.description)) == cid else {
            violated("CID string of a binary CID parses back")
        }
        for base in Multibase.allCases where cid.version == .v1 {
            let text = cid.string(in: base)
            // Text longer than any CID the text reader takes is refused as such (a binary CID
            // of more than 127 bytes has a base16 form over 256 characters).
            if text.utf8.count > CID.maximumStringLength {
                do {
                    _ = try CID(text)
                    violated("a CID string over the maximum length is refused")
                } catch {
                    guard error.length != nil else { violated("a long CID string is .tooLong") }
                }
                continue
            }
            guard (try? CID(text)) == cid else { violated("CID round trip in \(base)") }
        }
        if cid.multihash.isIdentity { readIdentityFile(cid) }
    }
    if let first = bytes.first, let multihash = try? Multihash(code: 0, digest: Array(bytes.dropFirst())) {
        // dag-pb or raw around identity digests: the UnixFS reader must give typed errors.
        let codec: UInt64 = first & 1 == 0 ? 0x70 : 0x55
        readIdentityFile(CID(v1: codec, multihash: multihash))
    }

    // Multibase text in every base: decode, and what decodes encodes back to an equivalent text.
    if size <= 4096, let text = String(validating: bytes, as: UTF8.self) {
        for base in Multibase.allCases {
            if let decoded = try? base.decode(Substring(text)) {
                guard (try? base.decode(Substring(base.encode(decoded)))) == decoded else { violated("\(base) round trip") }
            }
        }
        if let cid = try? CID(text) {
            guard (try? CID(cid.description)) == cid else { violated("CID string round trip") }
            guard (try? CID(bytes: cid.bytes)) == cid else { violated("CID bytes round trip") }
            _ = cid.v1
            if cid.multihash.isIdentity { readIdentityFile(cid) }
        }
        if let peer = try? PeerID(text) {
            guard (try? PeerID(peer.description)) == peer, (try? PeerID(peer.ipnsName)) == peer else {
                violated("peer id round trip")
            }
            _ = peer.ed25519PublicKey
        }
    }
    if bytes.count == 32, let peer = try? PeerID(ed25519PublicKey: bytes) {
        guard peer.ed25519PublicKey == bytes, (try? PeerID(peer.description)) == peer else { violated("ed25519 peer id") }
    }
    return 0
}
