// libFuzzer harness for the Manifest module's readers. Every input must either decode or fail
// with a typed error; a trap, a sanitizer report or a broken round trip is a finding.
// Build and run with Fuzz/run.sh (see Fuzz/README.md).
import Manifest
import OrderedJSON
import ContentAddressing
import StationEmulator

/// Stops the run with a message libFuzzer records next to the crashing input.
private func violated(_ property: String) -> Never {
    fatalError("property violated: \(property)")
}

/// What one input may make the readers hold at once (checked by AllocationMeter.swift).
let amplificationLimit = AmplificationLimit(bytesPerInputByte: 48, fixedBytes: 1 << 20)

/// One input, called by AllocationMeter.swift's `LLVMFuzzerTestOneInput`.
func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    // The manifest reader: tolerant, and what it writes reads back to the same bytes.
    if let manifest = try? Manifest.read(bytes) {
        _ = manifest.issues.count
        _ = manifest.postCountsByClient
        unmetered {
            guard let written = try? WireJSON.encode(manifest) else { violated("manifest encodes") }
            guard let again = try? Manifest.read(written) else { violated("written manifest reads") }
            guard again.issues.isEmpty else { violated("written manifest reads without issues") }
            guard (try? WireJSON.encode(again)) == written else { violated("manifest writing is stable") }
        }
        for (_, entry) in manifest.allPosts {
            _ = try? entry.metadata?.sealedBytes()
            _ = try? entry.postContentID()
        }
    }
    // As a client reads a station's manifest: within its limits, public metadata read on demand.
    if let limited = try? Manifest.read(bytes, limits: ManifestLimits(maximumPosts: 10_000)) {
        for (_, entry) in limited.allPosts {
            _ = try? entry.metadata?.decodePlaintext(as: DriveFileMetadata.self)
            _ = try? entry.metadata?.jsonValue
        }
    }

    // The other station documents.
    if let profile = try? WireJSON.decode(StationProfile.self, from: bytes) {
        unmetered {
            guard let written = try? WireJSON.encode(profile),
                  let again = try? WireJSON.decode(StationProfile.self, from: written), again == profile
            else { violated("profile round trip") }
        }
    }
    if let document = try? WireJSON.decode(PublicDocument.self, from: bytes) {
        unmetered {
            guard let written = try? WireJSON.encode(document, style: .pythonIndented),
                  let again = try? WireJSON.decode(PublicDocument.self, from: written), again == document
            else { violated("public.json round trip") }
        }
    }
    if let envelopes = try? WireJSON.decode(EnvelopeSet.self, from: bytes) {
        _ = try? envelopes.envelopeBytes(for: envelopes.envelopes.keys.first ?? "")
    }
    _ = StationErrorBody.parse(bytes)
    _ = try? RewrapResponse.read(bytes)
    _ = try? WireJSON.decode(StorageResponse.self, from: bytes)

    // The JSON layer: writing is idempotent in every layout (an indented layout of deep nesting
    // is many times the input: what the package writes, not what it reads, so it is not metered).
    if let value = try? WireJSON.parse(bytes) {
        unmetered {
            for style in [JSONStyle.compact, .pythonIndented, .pythonDefault] {
                let text = WireJSON.serialize(value, style: style)
                guard let reread = try? WireJSON.parse(text) else { violated("written JSON parses") }
                guard WireJSON.serialize(reread, style: style) == text else { violated("JSON writing is stable") }
            }
        }
    }

    // CID and peer-id strings.
    if size <= 300, let text = String(validating: bytes, as: UTF8.self) {
        if let cid = try? CID(text) {
            guard (try? CID(cid.description)) == cid else { violated("CID string round trip") }
            guard (try? CID(bytes: cid.bytes)) == cid else { violated("CID bytes round trip") }
            // An identity CID carries its own blocks: the UnixFS reader must refuse any sizes in
            // them with a typed error (no store is needed, nothing else is fetched).
            if let size = try? UnixFS.fileSize(root: cid, blocks: { _ in nil }) {
                let start = size > 16 ? size - 16 : 0
                _ = try? UnixFS.readAll(root: cid, range: start..<size, blocks: { _ in nil })
            }
        }
        if let peer = try? PeerID(text) {
            guard (try? PeerID(peer.description)) == peer, (try? PeerID(peer.ipnsName)) == peer else {
                violated("peer id round trip")
            }
        }
    }
    return 0
}
