import ExampleSupport
import Foundation
import Manifest
import StationClient

// Step 5 of the seed guide: publish a post, in each audience mode.
//
// The client encrypts the file with a fresh post key, seals that key to the station
// (self_envelope) and sends one multipart POST /post. The station wraps the key for the
// audience: self (you and your devices), specific (listed followers), all (every approved
// follower). public is different: plaintext, no envelopes, permanent.

await runExample { station in
    let owner = try await station.pair(deviceName: "publisher")

    // A follower to share with: it asks to follow (POST /inbox) and the owner approves it.
    let follower = FollowerIdentity.generate(name: "friend")
    _ = try await follower.sendFollowRequest(to: station.endpoint, transport: station.transport)
    _ = try await owner.approveFollower(uid: follower.uid)

    func file(_ name: String) -> DriveFileMetadata { DriveFileMetadata(filename: name, mimeType: "text/plain", sizeBytes: 4) }
    let data = Data("post".utf8)
    let selfPost = try await owner.publish(data: data, metadata: file("diary.txt"), audience: .selfOnly)
    let specificPost = try await owner.publish(data: data, metadata: file("for-friend.txt"), audience: .specific([follower.uid]))
    let allPost = try await owner.publish(data: data, metadata: file("for-followers.txt"), audience: .allFollowers)
    // Public posts have their own, explicitly named call: there is no taking them back.
    let publicPost = try await owner.publishPermanentlyPublic(data: data, metadata: file("hello-world.txt"))
    // A larger post, its upload progress read as an asynchronous sequence.
    let large = file("large.bin")
    let upload = ProgressTask { progress in
        try await owner.publish(data: Data(count: 1 << 20), metadata: large, progress: progress)
    }
    var sent: Int64 = 0
    for await step in upload.updates { sent = step.completed }
    _ = try await upload.value
    print("large post uploaded: \(sent >= 1 << 20 ? "all bytes" : "\(sent) bytes")")

    // The station's public profile.
    let profile = try await owner.updateProfile(ProfileChanges(displayName: "Publisher", bio: "posts things"))
    print("profile: \(profile.displayName ?? "-"), \(profile.bio ?? "-")")

    for post in [selfPost, specificPost, allPost, publicPost] {
        print("published \(post.audienceMode): envelopes \(post.envelopesCID == nil ? "none" : "yes")")
    }

    // What the follower can read: everything but the self post.
    guard let gateway = station.gateway else { print("(pass --gateway URL to read as the follower)"); return }
    let reader = FollowedStationReader(identity: follower, gateway: gateway, transport: station.transport)
    let readable = try await reader.listPosts(of: .endpoint(station.endpoint), namespace: "drive", as: DriveFileMetadata.self)
    print("the follower reads: \(readable.posts.compactMap { $0.metadata?.filename }.sorted().joined(separator: ", "))")
}
