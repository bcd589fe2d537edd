import ExampleSupport
import Foundation
import Manifest
import StationClient

// Reading a station you follow.
//
// A followed station seals envelopes[uid] to the follower's own ML-KEM key, not to a paired
// device, so the reader uses a FollowerIdentity: it asks to follow, the owner approves, and from
// then on it reads the posts shared with it through the IPFS gateway, every byte checked
// against its CID.

await runExample { station in
    let owner = try await station.pair(deviceName: "owner")
    let follower = FollowerIdentity.generate(name: "reader")
    let request = try await follower.sendFollowRequest(to: station.endpoint, transport: station.transport)
    print("follow request: \(request.status ?? "sent")")
    print("pending: \(try await owner.pendingFollowers().map(\.uid).contains(follower.uid))")
    _ = try await owner.approveFollower(uid: follower.uid)

    _ = try await owner.publish(data: Data("shared with followers".utf8), metadata: DriveFileMetadata(filename: "news.txt"),
                                audience: .allFollowers)
    _ = try await owner.publish(data: Data("mine only".utf8), metadata: DriveFileMetadata(filename: "private.txt"))

    guard let gateway = station.gateway else { throw ExampleError("reading a followed station needs --gateway URL") }
    let reader = FollowedStationReader(identity: follower, gateway: gateway, transport: station.transport)
    let listing = try await reader.listPosts(of: .endpoint(station.endpoint), namespace: "drive", as: DriveFileMetadata.self)
    // The follower fetches the manifest itself (from the gateway, by CID) for the entries.
    let manifest = try WireJSON.decode(Manifest.self, from: try await gateway.fetch(cid: listing.manifestCID ?? ""))
    for post in listing.posts {
        guard let entry = manifest.entry(forPostCID: post.postCID)?.entry else { continue }
        let content = try await reader.download(entry)
        print("\(post.metadata?.filename ?? "?"): \(String(decoding: content, as: UTF8.self))")
    }
    print("readable posts: \(listing.posts.count) of 2")
}
