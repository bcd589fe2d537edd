import Foundation
import Manifest
import StationEmulator
import Testing

/// WIRE_NOTES §2.1, §2.2, §2.13: health, profile, storage.
@Suite("Conformance: health, profile, storage (WIRE_NOTES §2.1, 2.2, 2.13)")
struct InfoConformanceTests {
    static let profileKeys = ["uid", "mlkem_public_key", "mldsa_public_key", "endpoint", "ipfs_peer_id", "ipns_name", "manifest_cid",
                              "followers_count", "following_count", "manifest_posts", "manifest_posts_total", "manifest_posts_by_client"]

    @Test func healthAndDegraded() throws {
        let harness = try Harness()
        var response = try harness.send("GET", "/health")
        #expect(response.status == 200 && response.text == #"{"status":"healthy","checks":{"database":true,"ipfs":true,"identity":true}}"#)
        harness.emulator.faults.setIPFSDown(true)
        response = try harness.send("GET", "/health")
        #expect(response.status == 503 && response.text == #"{"status":"degraded","checks":{"database":true,"ipfs":false,"identity":true}}"#)
        #expect(try harness.send("GET", "/profile").status == 200)
    }

    @Test func profileFreshThenAfterAPost() throws {
        let harness = try Harness()
        var profile = try harness.profile()
        #expect(profile.keys == Self.profileKeys)
        let uid = try #require(profile["uid"]?.stringValue)
        // A UUID v4.
        #expect(uid.range(of: #"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"#, options: .regularExpression) != nil)
        #expect(profile["mlkem_public_key"]?.stringValue?.count == 2368 && profile["mldsa_public_key"]?.stringValue?.count == 3904)
        #expect(profile["manifest_cid"] == .null && profile["ipfs_peer_id"] == .null && profile["ipns_name"] == .null)
        #expect(profile["endpoint"] == .null && profile["followers_count"] == 0 && profile["manifest_posts_by_client"] == .object([:]))

        let device = try harness.pair()
        let posted = try harness.post(device)
        profile = try harness.profile()
        let manifestCID = try #require(profile["manifest_cid"]?.stringValue)
        #expect(manifestCID.hasPrefix("Qm") && profile["manifest_posts"] == 1 && profile["manifest_posts_total"] == 1)
        #expect(profile["manifest_posts_by_client"] == .object(["interop": 1]))
        let peer = try #require(profile["ipfs_peer_id"]?.stringValue)
        let name = try #require(profile["ipns_name"]?.stringValue)
        #expect(peer.hasPrefix("12D3KooW") && name.hasPrefix("k51"))
        // The peer id and the IPNS name are the same key.
        #expect(try PeerID(peer) == PeerID(name))
        _ = posted
    }

    @Test func storageShape() throws {
        let harness = try Harness()
        let device = try harness.pair()
        _ = try harness.post(device)
        let response = try harness.send("GET", "/storage")
        #expect(response.status == 200)
        let object = try response.object()
        #expect(object.keys == ["ipfs", "device", "clients", "total_content_bytes"])
        #expect(Harness.keys(object["ipfs"]) == ["repo_size_bytes", "storage_max_bytes", "num_objects", "used_percent"])
        #expect(object["ipfs"]?["storage_max_bytes"] == 10_737_418_240)
        #expect(Harness.keys(object["device"]) == ["total_bytes", "used_bytes", "free_bytes", "used_percent"])
        #expect(Harness.keys(object["clients"]?["interop"]) == ["size_bytes", "post_count", "percent_of_repo"])
        #expect(object["clients"]?["interop"]?["post_count"] == 1)
        #expect((object["total_content_bytes"]?.intValue ?? 0) > 0)
        harness.emulator.faults.setIPFSDown(true)
        #expect(Harness.keys(try harness.send("GET", "/storage").object()["ipfs"]) == ["error"])
    }
}
