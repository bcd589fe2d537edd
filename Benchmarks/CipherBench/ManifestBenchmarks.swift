import Manifest
import PQCrypto
import ClassicalCrypto
import OrderedJSON
import ContentAddressing

/// A manifest of `count` encrypted entries in one namespace, shaped as the station writes them
/// for `station-client-bench`'s posts (sealed drive metadata of about 150 bytes, 340 hex digits).
func syntheticManifest(posts count: Int, sealedMetadataHex hex: String) -> [UInt8] {
    Array(#"{"clients":{"drive":{"posts":["#.utf8)
        + Array((0..<count).map { index in
            #"{"post_cid":"QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4","audience_mode":"all","envelopes_cid":"QmY2b52WrNZ8SSebVA1u5tbzLsoXQMYwLozZ6AnNH4Qe7c","envelopes_count":1,"created_at":\#(1_795_956_595 + index),"metadata":"\#(hex)"}"#
        }.joined(separator: ",").utf8)
        + Array("]}}}".utf8)
}

func manifestBenchmarks() -> [TimedOperation] {
    let file = (0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 % 251) }
    let manifestBody = Array(#"{"clients":{"interop":{"posts":["#.utf8)
        + Array((0..<100).map { index in
            #"{"post_cid":"QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4","audience_mode":"all","envelopes_cid":"QmY2b52WrNZ8SSebVA1u5tbzLsoXQMYwLozZ6AnNH4Qe7c","envelopes_count":3,"created_at":\#(1_795_956_595 + index),"metadata":"320e7003c48a4f1e9b2c"}"#
        }.joined(separator: ",").utf8)
        + Array("]}}}".utf8)
    // The warm listing of 10,000 posts: the manifest's CID check, its parse, and each entry's
    // metadata opened with its (cached) post key and parsed.
    let key = SymmetricKey(randomByteCount: 32)
    let metadata = Array(#"{"filename":"file-1234.txt","mime_type":"text/plain","size_bytes":9,"created_at":1700000000,"modified_at":1700000000,"path":"/"}"#.utf8)
    let sealed = (try? SecretBox.seal(metadata, using: key)).map { [UInt8]($0) } ?? []
    let sealedHex = Hex.encode(sealed)
    let large = syntheticManifest(posts: 10_000, sealedMetadataHex: sealedHex)
    let largeCID = UnixFS.cid(of: large)
    return [
        TimedOperation(name: "manifest.cid.1MiB", iterations: 20) { n in
            for _ in 0..<n { blackHole(UnixFS.cid(of: file)) }
        },
        TimedOperation(name: "manifest.read.100posts", iterations: 200) { n in
            for _ in 0..<n { blackHole(try? Manifest.read(manifestBody)) }
        },
        TimedOperation(name: "manifest.10kposts.cid", iterations: 2) { n in
            for _ in 0..<n { blackHole(UnixFS.cid(of: large) == largeCID) }
        },
        TimedOperation(name: "manifest.10kposts.parse", iterations: 2) { n in
            for _ in 0..<n { blackHole(try? WireJSON.parse(large)) }
        },
        TimedOperation(name: "manifest.10kposts.read", iterations: 2) { n in
            // The one manifest reader: straight from the bytes.
            for _ in 0..<n { blackHole(try? Manifest.read(large)) }
        },
        TimedOperation(name: "manifest.10kposts.metadata", iterations: 2) { n in
            // What a listing read as drive metadata does per entry: hex decode, SecretBox open,
            // and the direct drive-metadata reader (no JSON tree).
            for _ in 0..<n {
                for _ in 0..<10_000 {
                    guard let bytes = try? Hex.decode(sealedHex), let plain = try? SecretBox.open(bytes, using: key) else { continue }
                    blackHole(try? DriveFileMetadata.read(jsonBytes: [UInt8](plain)))
                }
            }
        },
    ]
}
