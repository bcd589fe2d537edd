import Foundation
import Manifest
import StationClient
import ContentAddressing

// Step 3 of the seed guide: read the manifest and your namespace.
//
// /profile gives the current manifest CID; the manifest holds one namespace per client app.
// Read only your own: here "drive", CipherVault's namespace.

enum ReadManifest {
    static let usage = ExampleUsage(name: "read-manifest", summary: """
        Publishes two posts, then reads /profile, the manifest and the "drive" namespace, lists and
        streams the decrypted posts and shows the station's storage; removes the posts at the end.
        """)

    static func run(_ arguments: [String]) async {
        await runExample(usage, arguments) { station in
            let client = try await station.pair(deviceName: "reader")
            for name in ["report.pdf", "holiday.jpg"] {
                let metadata = DriveFileMetadata(filename: name, mimeType: "application/octet-stream", sizeBytes: 5)
                station.removeAtEnd(try await client.publish(data: Data("hello".utf8), metadata: metadata), publishedBy: client, name: name)
            }

            // 1. The profile points at the current manifest.
            let profile = try await client.profile()
            guard let manifestCID = profile.manifestCID else { print("the station has no manifest yet"); return }
            print("manifest CID: \(manifestCID)")

            // 2. The manifest (fetched from the station, or the gateway, and checked against its CID).
            let manifest = try await client.fetchManifest(cid: manifestCID)
            print("namespaces: \(manifest.clients.keys.joined(separator: ", "))")

            // 3. Only our namespace. Encrypted entries carry hex SecretBox metadata.
            for entry in manifest.posts(in: "drive") {
                print("entry \(entry.postCID): audience \(entry.audienceMode), envelopes \(entry.envelopesCID ?? "none"), encrypted \(entry.isEncrypted)")
            }

            // The client does the rest of the read path (rewrap, open, decrypt) in one call.
            let listing = try await client.listPosts(as: DriveFileMetadata.self)
            for post in listing.posts { print("decrypted: \(post.metadata?.filename ?? "?")") }
            print("posts: \(listing.posts.count), skipped: \(listing.skipped.count)")

            // Or one post at a time, each read as it is consumed (a large namespace, a scrolling list).
            for try await item in client.posts(as: DriveFileMetadata.self) {
                if case .success(let post) = item { print("streamed: \(post.metadata?.filename ?? "?")") }
            }

            // What the station stores, per namespace.
            let storage = try await client.storage()
            print("storage: drive has \(storage.clients?.value?["drive"]?.postCount ?? 0) posts")
        }
    }
}
