import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport
import ContentAddressing

@Suite("Storage, profile, avatar and privacy calls")
struct StationSettingsTests {
    @Test("Storage counts the namespace's posts and blocks")
    func storage() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        _ = try await client.publish(data: Data("one".utf8), metadata: Fixture.drive("one", size: 3))
        _ = try await client.publish(data: Data("two".utf8), metadata: Fixture.drive("two", size: 3))
        let report = try await client.storage()
        let drive = try #require(report.clients?.value?["drive"])
        #expect(drive.postCount == 2 && drive.sizeBytes > 0)
        #expect(try #require(report.ipfs?.value).numObjects > 0)
        #expect((report.totalContentBytes ?? 0) >= drive.sizeBytes)
        #expect(rig.count("GET", "/storage") == 1)
    }

    @Test("A profile update sends only the fields set; an empty value clears; a refusal is typed")
    func profile() async throws {
        let client = try await StationRig.pairedInProcess().client
        let first = try await client.updateProfile(ProfileChanges(displayName: "  Ada  ", bio: "maths"))
        #expect(first.displayName == "Ada" && first.bio == "maths" && first.username == nil)
        // The bio is left alone (not sent), the display name cleared.
        let second = try await client.updateProfile(ProfileChanges(displayName: ""))
        #expect(second.displayName == nil && second.bio == "maths")
        let refused = await #expect(throws: StationClientError.self) {
            try await client.updateProfile(ProfileChanges(displayName: String(repeating: "x", count: 81)))
        }
        #expect(refused?.status == 400)
        #expect(refused?.stationMessage == "display_name must be <= 80 characters")
        #expect(ProfileChanges(username: "a", link: "b").body == ["username": .string("a"), "link": .string("b")])
    }

    @Test("An avatar becomes a public block whose CID the profile names")
    func avatar() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let image = Data((0..<2048).map { UInt8($0 % 251) })
        let cid = try await client.updateAvatar(image, contentType: "image/png")
        #expect(cid == UnixFS.cid(of: image).description)
        let gateway = IPFSGateway(baseURL: rig.gateway, transport: rig.transport)
        #expect(try await gateway.fetch(cid: cid) == [UInt8](image))
        let manifestCID = try #require(try await client.profile().manifestCID)
        let manifest = try await client.fetchManifest(cid: manifestCID)
        #expect(manifest.clients["cipherframe"]?.profile?.avatarCID == cid)
    }

    @Test("A flip to public makes the namespace's posts plaintext, and back to private encrypts them again")
    func privacyFlip() async throws {
        let client = try await StationRig.pairedInProcess(namespace: "cipherframe").client
        _ = try await client.publish(data: Data("frame".utf8), metadata: Fixture.drive("frame", size: 5), audience: .allFollowers)
        let toPublic = try await client.flipPrivacy(to: .public)
        #expect(toPublic.accountPrivacy == "public" && toPublic.defaultAudienceMode == .public)
        #expect(toPublic.migratedCount == 1)
        let listedPublic = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listedPublic.posts.map(\.isPublic) == [true])
        let toPrivate = try await client.flipPrivacy(to: .private, audience: .allFollowers)
        #expect(toPrivate.accountPrivacy == "private" && toPrivate.migratedCount == 1)
        let listedPrivate = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listedPrivate.posts.map(\.isPublic) == [false])
        #expect(listedPrivate.posts.first?.metadata?.filename == "frame")
    }
}
