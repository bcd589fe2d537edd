import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing

/// An app's own metadata that states its plaintext size.
struct SizedMemo: Codable, Sendable, StatesPlaintextSize {
    var title: String
    var byteCount: Int
    var plaintextByteCount: Int64? { Int64(byteCount) }
}

@Suite("Any metadata can state the plaintext size that bounds a listed post's download, own and followed")
struct PlaintextSizeTests {
    static let content = Data((0..<2_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })

    @Test("An own post: the app's metadata type bounds the download (a size too small fails it); a true one succeeds")
    func ownPost() async throws {
        let (_, client) = try await StationRig.pairedInProcess()
        _ = try await client.publish(data: Self.content, metadata: SizedMemo(title: "understated", byteCount: 100))
        _ = try await client.publish(data: Self.content, metadata: SizedMemo(title: "true", byteCount: Self.content.count))
        let listing = try await client.listPosts(as: SizedMemo.self)
        try await Fixture.withTemporaryDirectory { directory in
            let understated = try #require(listing.posts.first { $0.metadata?.title == "understated" })
            let error = await #expect(throws: StationClientError.self) {
                try await client.download(understated, to: directory.appendingPathComponent("u"))
            }
            #expect(error?.kind == .invalidResponse)
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("u").path))
            let exact = try #require(listing.posts.first { $0.metadata?.title == "true" })
            try await client.download(exact, to: directory.appendingPathComponent("t"))
            #expect(try Data(contentsOf: directory.appendingPathComponent("t")) == Self.content)
            // DriveFileMetadata states its size_bytes.
            #expect(Fixture.drive("x", size: 7).plaintextByteCount == 7)
            #expect(DriveFileMetadata(filename: "x").plaintextByteCount == nil)
        }
    }

    @Test("A followed station's post: the metadata's size bounds the feed's download, and an explicit size wins")
    func followedPost() async throws {
        let stations = try await FollowingTests.TwoStations()
        let handle = try await FollowStatusTests.follow(stations)
        _ = try await stations.atAlice.approveFollower(uid: handle.followerUID)
        _ = try await stations.atAlice.publish(data: Self.content, metadata: SizedMemo(title: "understated", byteCount: 100),
                                               audience: .allFollowers)
        let feed = try await stations.atBob.reader(for: handle)
        let post = try #require(try await feed.listPosts(namespace: "drive", as: SizedMemo.self).posts.first)
        try await Fixture.withTemporaryDirectory { directory in
            let destination = directory.appendingPathComponent("memo")
            let bounded = await #expect(throws: StationClientError.self) { try await feed.download(post, to: destination) }
            #expect(bounded?.kind == .invalidResponse)
            // The app knows the true size from elsewhere: it wins over the metadata's.
            try await feed.download(post, to: destination, plaintextSize: Int64(Self.content.count))
            #expect(try Data(contentsOf: destination) == Self.content)
            // An explicit size bounds a post whose metadata states none.
            let raw = try #require(try await feed.listPosts(namespace: "drive", as: JSONValueMetadata.self).posts.first)
            let explicit = await #expect(throws: StationClientError.self) {
                try await feed.download(raw, to: directory.appendingPathComponent("raw"), plaintextSize: 10)
            }
            #expect(explicit?.kind == .invalidResponse)
            try await feed.download(raw, to: directory.appendingPathComponent("raw"), plaintextSize: nil)
            #expect(try Data(contentsOf: directory.appendingPathComponent("raw")) == Self.content)
        }
    }
}

/// Metadata read as a type that states no size.
struct JSONValueMetadata: Codable, Sendable {
    var title: String
}
