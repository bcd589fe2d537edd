import Foundation
import Manifest
import StationClient

// Step 5 of the seed guide: publish a post, in each audience mode.
//
// The client encrypts the file with a fresh post key, seals that key to the station
// (self_envelope) and sends one multipart POST /post. The station wraps the key for the
// audience: self (you and your devices), specific (listed followers), all (every approved
// follower). public is different: plaintext, no envelopes, permanent. Last, a safe reshare gives
// the self post a new audience.

enum PublishPost {
    static let usage = ExampleUsage(name: "publish-post", summary: """
        Publishes a post in each audience mode (self, specific, all followers, public) and a larger
        one with progress, updates the profile, reads the posts as an approved follower and reshares
        the self post safely; removes the posts and the follower and restores the profile at the end.
        """)

    static func run(_ arguments: [String]) async {
        await runExample(usage, arguments) { station in
            let owner = try await station.pair(deviceName: "publisher")

            // A follower to share with: it asks to follow (POST /inbox) and the owner approves it.
            let follower = FollowerIdentity.generate(name: "friend")
            // Unsigned, but pinned as the owner's requests are: a self-signed station is reached by its key.
            let pins = await owner.activePins
            _ = try await follower.sendFollowRequest(to: station.endpoint, transport: station.transport, pins: pins)
            station.removeFollowerAtEnd(follower.uid, approvedBy: owner)
            _ = try await owner.approveFollower(uid: follower.uid)

            func file(_ name: String) -> DriveFileMetadata { DriveFileMetadata(filename: name, mimeType: "text/plain", sizeBytes: 4) }
            let data = Data("post".utf8)
            func published(_ post: PublishedPost, _ name: String) -> PublishedPost {
                station.removeAtEnd(post, publishedBy: owner, name: name)
                return post
            }
            let selfPost = published(try await owner.publish(data: data, metadata: file("diary.txt"), audience: .selfOnly), "diary.txt")
            let specificPost = published(try await owner.publish(data: data, metadata: file("for-friend.txt"), audience: .specific([follower.uid])),
                                         "for-friend.txt")
            let allPost = published(try await owner.publish(data: data, metadata: file("for-followers.txt"), audience: .allFollowers),
                                    "for-followers.txt")
            // Public posts have their own, explicitly named call: there is no taking them back (removing
            // the entry at the end does not recall copies others fetched).
            let publicPost = published(try await owner.publishPermanentlyPublic(data: data, metadata: file("hello-world.txt")), "hello-world.txt")
            // A larger post, its upload progress read as an asynchronous sequence.
            let large = file("large.bin")
            let upload = ProgressTask { progress in
                try await owner.publish(data: Data(count: 1 << 20), metadata: large, progress: progress)
            }
            var sent: Int64 = 0
            for await step in upload.updates { sent = step.completed }
            _ = published(try await upload.value, "large.bin")
            print("large post uploaded: \(sent >= 1 << 20 ? "all bytes" : "\(sent) bytes")")

                    // The station's public profile; the profile it had is put back at the end.
            let before = try await owner.fetchManifest(cid: try await owner.profile().manifestCID ?? "").clients["drive"]?.profile
            station.removeAtEnd("profile changes (display name and bio restored)") {
                _ = try await owner.updateProfile(ProfileChanges(displayName: before?.displayName ?? "", bio: before?.bio ?? ""))
            }
            let profile = try await owner.updateProfile(ProfileChanges(displayName: "Publisher", bio: "posts things"))
            print("profile: \(profile.displayName ?? "-"), \(profile.bio ?? "-")")

            for post in [selfPost, specificPost, allPost, publicPost] {
                print("published \(post.audienceMode): envelopes \(post.envelopesCID == nil ? "none" : "yes")")
            }

            // What the follower can read: everything but the self post.
            guard let gateway = station.gateway else { print("(pass --gateway URL to read as the follower)"); return }
            let reader = FollowedStationReader(identity: follower, gateway: gateway, transport: station.transport, pins: pins)
            let readable = try await reader.listPosts(of: .endpoint(station.endpoint), namespace: "drive", as: DriveFileMetadata.self)
            print("the follower reads: \(readable.posts.compactMap { $0.metadata?.filename }.sorted().joined(separator: ", "))")

            // A new audience for the diary, safely: the station's own /post/share destroys a post's bytes,
            // so reshare downloads it, encrypts it again under a fresh key, publishes that to the new
            // audience and only then removes the old entry.
            let reshared = try await owner.reshare(postCID: selfPost.postCID, audience: .allFollowers)
            _ = published(reshared.post, "diary.txt (reshared)")
            print("reshared diary.txt to \(reshared.post.audienceMode) as a new post (old entry removed: \(reshared.previousEntryRemoved))")
            let after = try await reader.listPosts(of: .endpoint(station.endpoint), namespace: "drive", as: DriveFileMetadata.self)
            print("the follower now reads: \(after.posts.compactMap { $0.metadata?.filename }.sorted().joined(separator: ", "))")
            print("the owner still downloads it: \(try await owner.download(postCID: reshared.post.postCID) == data)")
        }
    }
}
