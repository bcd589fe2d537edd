import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import OrderedJSON

/// An app's metadata with a `Date`.
private struct Photo: Codable, Sendable, Equatable {
    var filename: String
    var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case filename
        case createdAt = "created_at"
    }
}

@Suite("The client's metadata dates")
struct MetadataDateClientTests {
    @Test("Published Dates are integer Unix seconds inside the sealed metadata; listings read them back")
    func publishedDates() async throws {
        let rig = try StationRig.inProcess()
        let client = try await rig.pair()
        let taken = Date(timeIntervalSince1970: 1_704_067_200)
        _ = try await client.publish(data: Data("p".utf8), metadata: Photo(filename: "p.jpg", createdAt: taken))
        let listing = try await client.listPosts(as: Photo.self)
        #expect(listing.posts.map(\.metadata) == [Photo(filename: "p.jpg", createdAt: taken)])
        // What another client decrypts: PROTOCOL.md's integer form.
        #expect(listing.posts.first?.rawMetadata?["created_at"] == .number(JSONNumber(1_704_067_200)))
        // Posts written by other clients in other forms read too.
        let drive = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(drive.posts.first?.metadata?.createdAt == 1_704_067_200)
    }

    @Test("The configuration overrides the forms")
    func overridden() async throws {
        let rig = try StationRig.inProcess()
        var configuration = rig.configuration()
        configuration.metadataDateEncoding = .iso8601
        let paired = try await rig.pair()
        let client = try await StationClient(credentials: await paired.credentials, configuration: configuration)
        let taken = Date(timeIntervalSince1970: 1_704_067_200)
        _ = try await client.publish(data: Data("p".utf8), metadata: Photo(filename: "p.jpg", createdAt: taken))
        let listing = try await client.listPosts(as: Photo.self)
        #expect(listing.posts.first?.rawMetadata?["created_at"] == .string("2024-01-01T00:00:00Z"))
        #expect(listing.posts.first?.metadata?.createdAt == taken)
        var custom = configuration
        custom.metadataDateDecoding = .custom { _ in Date(timeIntervalSince1970: 0) }
        let other = try await StationClient(credentials: await paired.credentials, configuration: custom)
        #expect(try await other.listPosts(as: Photo.self).posts.first?.metadata?.createdAt == Date(timeIntervalSince1970: 0))
    }
}
