import Foundation
import Manifest
import StationClient
import ContentAddressing

// Reading a station you follow.
//
// Your own station (an embedded one here) follows the example station in one call:
// follow(stationAt:) trusts a self-signed station's key as pairing does, creates the follower
// identity in the key store (a followed station seals envelopes[uid] to it, not to a paired
// device), sends the follow request and records the follow. Once the owner approves, the reader
// lists what is shared with you and downloads it, every byte checked against its CID.

enum ReadFollowed {
    static let usage = ExampleUsage(name: "read-followed", summary: """
        A second, embedded station follows the station (its key trusted as pairing trusts it), the
        owner approves it and publishes a post for followers and one for itself; the follower lists
        and downloads what it can read and prints "readable posts: N of M" (M: the posts in the
        station's "drive" namespace). Removes the posts and the follower at the end.
        """)

    static func run(_ arguments: [String]) async {
        await runExample(usage, arguments) { station in
            let owner = try await station.pair(deviceName: "owner")
            let mine = try ExampleStation()
            defer { mine.stop() }
            let me = try await mine.pair(deviceName: "reader")

            let followed = try await me.follow(stationAt: station.endpoint, trust: station.keyTrust, name: "reader")
            print("follow request: \(followed.requestStatus ?? "sent")")
            print("pending: \(try await owner.pendingFollowers().map(\.uid).contains(followed.followerUID))")
            station.removeFollowerAtEnd(followed.followerUID, approvedBy: owner)
            _ = try await owner.approveFollower(uid: followed.followerUID)

            station.removeAtEnd(try await owner.publish(data: Data("shared with followers".utf8), metadata: DriveFileMetadata(filename: "news.txt"),
                                                        audience: .allFollowers), publishedBy: owner, name: "news.txt")
            station.removeAtEnd(try await owner.publish(data: Data("mine only".utf8), metadata: DriveFileMetadata(filename: "private.txt")),
                                publishedBy: owner, name: "private.txt")

            guard let gateway = station.gateway else { throw ExampleError("reading a followed station needs --gateway URL") }
            let feed = try await me.reader(for: followed, gateway: gateway)
            let listing = try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self)
            // A followed station's posts are ListedPosts, downloaded as one's own are.
            for post in listing.posts {
                let content = try await feed.download(post)
                print("\(post.metadata?.filename ?? "?"): \(String(decoding: content, as: UTF8.self))")
            }
            if let first = listing.posts.first {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("read-followed-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: file) }
                try await feed.download(first, to: file) { progress in print("fetched \(progress.completed) bytes") }
                print("saved to a file: \((try? Data(contentsOf: file).count) ?? 0) bytes")
            }
            // Of every post in the station's "drive" namespace (a real station may hold more than these two).
            let total = try await owner.fetchManifest(cid: try await owner.profile().manifestCID ?? "").posts(in: "drive").count
            print("readable posts: \(listing.posts.count) of \(total)")
            _ = try await me.unfollow(uid: followed.uid)
        }
    }
}
