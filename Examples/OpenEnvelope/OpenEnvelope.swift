import Envelope
import Foundation
import Manifest
import Signing
import ClassicalCrypto
import PQCrypto
import StationClient
import Transport
import OrderedJSON

// Step 4 of the seed guide: rewrap, then open the envelope.
//
// A post's key is wrapped to the station and its audience, not to this device. So the device
// asks the station (POST /rewrap) to wrap that key to its own ML-KEM key, then opens the
// envelope: 2-byte big-endian length ‖ ML-KEM ciphertext ‖ SecretBox(wrap key, post key), with
// wrap key = BLAKE2b-256(shared secret, person "orbit-kem"). StationClient.listPosts and
// download do all of this; here it is by hand. Doing it by hand needs the device's private ML-KEM
// key and the SDK's wire JSON, which are `package` API: this example is part of the package and
// sees them, an app does not (it never needs to: listings and downloads open envelopes for it).

enum OpenEnvelope {
    static let usage = ExampleUsage(name: "open-envelope", summary: """
        Publishes a post, asks the station to rewrap its key to this device (POST /rewrap, signed and
        pinned), opens the envelope and the metadata by hand, then downloads the content; removes
        the post at the end.
        """)

    static func run(_ arguments: [String]) async {
        await runExample(usage, arguments) { station in
            let client = try await station.pair(deviceName: "opener")
            let metadata = DriveFileMetadata(filename: "secret.txt", mimeType: "text/plain", sizeBytes: 11)
            let post = try await client.publish(data: Data("hello world".utf8), metadata: metadata)
            station.removeAtEnd(post, publishedBy: client, name: "secret.txt")
            let credentials = await client.credentials

            // POST /rewrap, signed over the exact JSON body; send both CIDs so the station finds the set.
            let body = WireJSON.serialize(.object([
                "uid": .string(credentials.stationUID), "device_uid": .string(credentials.deviceUID),
                "post_cid": .string(post.postCID), "envelopes_cid": .string(post.envelopesCID ?? ""),
            ]))
            let signer = RequestSigner(identity: SigningIdentity(
                uid: credentials.stationUID, deviceUID: credentials.deviceUID, signingKey: credentials.signingPrivateKey))
            var request = HTTPRequest(method: .post, url: station.endpoint.appendingPathComponent("rewrap"))
            request.headers.add("content-type", value: "application/json")
            for (name, value) in try signer.sign(method: "POST", path: "/rewrap", body: body).fields { request.headers.add(name, value: value) }
            // Sent with the pins the client's own requests carry (a self-signed station's key).
            let response = try await station.send(request, body: .bytes(Data(body)), pinnedAs: client)
            let rewrap = try RewrapResponse.read([UInt8](response.body.data ?? Data()))
            guard case let .rewrapped(_, _, _, envelopeHex) = rewrap.result else { throw ExampleError("rewrap failed: \(rewrap.result)") }
            let envelope = try Hex.decode(envelopeHex)
            print("envelope: \(envelope.count) B, ML-KEM ciphertext length prefix \(Int(envelope[0]) << 8 | Int(envelope[1]))")

            // Decapsulate with this device's ML-KEM key, derive the wrap key, open the sealed post key.
            let postKey = try Envelope.open(envelopeHex, with: credentials.kemPrivateKey)
            print("post key recovered: 32 B")

            // The post key opens the entry's hex SecretBox metadata (nonce ‖ MAC ‖ ciphertext).
            let manifest = try await client.fetchManifest(cid: try await client.profile().manifestCID ?? "")
            guard let entry = manifest.entry(forPostCID: post.postCID)?.entry, let sealed = try entry.metadata?.sealedBytes() else {
                throw ExampleError("the post is not in the manifest")
            }
            let plaintext = try SecretBox.open(sealed, using: postKey)
            print("metadata: \(String(decoding: plaintext, as: UTF8.self))")

            // The content is the same SecretBox layout over the whole file.
            print("content: \(String(decoding: try await client.download(postCID: post.postCID, envelopesCID: post.envelopesCID), as: UTF8.self))")
        }
    }
}
