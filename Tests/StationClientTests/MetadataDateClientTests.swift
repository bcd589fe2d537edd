import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import TestSupport
import Testing
import OrderedJSON

@Suite("The client's metadata dates")
struct MetadataDateClientTests {
    @Test("Published Dates are integer Unix seconds inside the sealed metadata; listings read them back")
    func publishedDates() async throws {
        let client = try await StationRig.pairedInProcess().client
        let taken = Date(timeIntervalSince1970: 1_704_067_200)
        _ = try await client.publish(data: Data("p".utf8), metadata: DatedFile(filename: "p.jpg", createdAt: taken))
        let listing = try await client.listPosts(as: DatedFile.self)
        #expect(listing.posts.map(\.metadata) == [DatedFile(filename: "p.jpg", createdAt: taken)])
        // What another client decrypts: PROTOCOL.md's integer form.
        #expect(listing.posts.first?.rawMetadata?["created_at"] == .number(JSONNumber(1_704_067_200)))
        // Posts written by other clients in other forms read too.
        let drive = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(drive.posts.first?.metadata?.createdAt == 1_704_067_200)
    }

    @Test("The configuration overrides the forms")
    func overridden() async throws {
        let (rig, paired) = try await StationRig.pairedInProcess()
        let client = try await rig.client(for: paired) { $0.metadataDateEncoding = .iso8601 }
        let taken = Date(timeIntervalSince1970: 1_704_067_200)
        _ = try await client.publish(data: Data("p".utf8), metadata: DatedFile(filename: "p.jpg", createdAt: taken))
        let listing = try await client.listPosts(as: DatedFile.self)
        #expect(listing.posts.first?.rawMetadata?["created_at"] == .string("2024-01-01T00:00:00Z"))
        #expect(listing.posts.first?.metadata?.createdAt == taken)
        let other = try await rig.client(for: paired) {
            $0.metadataDateEncoding = .iso8601
            $0.metadataDateDecoding = .custom { _ in Date(timeIntervalSince1970: 0) }
        }
        #expect(try await other.listPosts(as: DatedFile.self).posts.first?.metadata?.createdAt == Date(timeIntervalSince1970: 0))
    }
}
