import Envelope
import Foundation
import Manifest
import ClassicalCrypto
import StationEmulator
import Testing
import ContentAddressing

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
        // A simulated 64 GiB disk the repository alone uses: the same figures on every machine,
        // read without a disk-space API (which an app's privacy manifest would have to declare).
        #expect(object["device"]?["total_bytes"] == 68_719_476_736)
        #expect(object["device"]?["used_bytes"] == object["ipfs"]?["repo_size_bytes"])
        let used = object["device"]?["used_bytes"]?.intValue ?? -1
        #expect(object["device"]?["free_bytes"]?.intValue == 68_719_476_736 - used)
        #expect(Harness.keys(object["clients"]?["interop"]) == ["size_bytes", "post_count", "percent_of_repo"])
        #expect(object["clients"]?["interop"]?["post_count"] == 1)
        #expect((object["total_content_bytes"]?.intValue ?? 0) > 0)
        harness.emulator.faults.setIPFSDown(true)
        #expect(Harness.keys(try harness.send("GET", "/storage").object()["ipfs"]) == ["error"])
    }
}

/// The owner-only profile routes (WIRE_NOTES §1 and §2.5: `clients.cipherframe.profile`).
@Suite("Conformance: profile update and avatar")
struct ProfileConformanceTests {
    @Test func updateValidatesAndPublishesIntoTheManifest() throws {
        let harness = try Harness()
        let owner = try harness.pair()
        var response = try harness.signedJSON(owner, "/profile/update", ["display_name": "  Ada  ", "username": "ada.l", "bio": "hi"])
        #expect(response.status == 200)
        let object = try response.object()
        #expect(object.keys == ["status", "profile"] && object["status"] == "profile_updated")
        #expect(Harness.keys(object["profile"]) == ["display_name", "username", "bio", "updated_at"])
        #expect(object["profile"]?["display_name"] == "Ada")
        let stored = try #require(harness.emulator.manifest.clients["cipherframe"]?.profile)
        #expect(stored.displayName == "Ada" && stored.username == "ada.l")
        #expect(try harness.profile()["manifest_posts_by_client"] == .object(["cipherframe": 0]))

        response = try harness.signedJSON(owner, "/profile/update", ["username": "no spaces"])
        #expect(response.status == 400 && response.text == #"{"detail":"username must match ^[A-Za-z0-9._]{1,30}$"}"#)
        response = try harness.signedJSON(owner, "/profile/update", ["link": "ftp://x"])
        #expect(response.status == 400 && response.text == #"{"detail":"link must be a http(s):// URL"}"#)

        let (body, type) = try Harness.form([("file", Array("avatar bytes".utf8), "a.png")])
        response = try harness.signed(owner, "POST", "/profile/avatar", body: body, contentType: type)
        #expect(response.status == 200)
        let avatar = try #require(try response.object()["avatar_cid"]?.stringValue)
        #expect(response.text == #"{"status":"avatar_updated","avatar_cid":"\#(avatar)"}"#)
        // The avatar is servable through /content.
        let content = try harness.signed(owner, "GET", "/content/\(avatar)")
        #expect(content.status == 200 && content.text == "avatar bytes")
    }

    @Test func profileRoutesAreOwnerOnly() throws {
        let harness = try Harness()
        let owner = try harness.pair()
        let follower = TestDevice(uid: "f", deviceUID: "f")
        _ = try harness.json("POST", "/inbox", ["type": "follow_request", "uid": "f", "mlkem_public_key": .string(follower.mlkemHex),
                                                "mldsa_public_key": .string(follower.mldsaHex)])
        _ = try harness.signedJSON(owner, "/followers/approve", ["uid": "f"])
        for path in ["/profile/update", "/post/delete", "/post/share", "/follow", "/unfollow", "/followers/approve", "/followers/remove"] {
            let response = try harness.signedJSON(follower, path, ["uid": "x", "post_cid": "x", "endpoint": "x", "mlkem_public_key": "x"])
            #expect(response.status == 403 && response.text == #"{"detail":"owner-only endpoint"}"#, "\(path)")
        }
        for path in ["/followers/pending", "/following", "/content/QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4"] {
            let response = try harness.signed(follower, "GET", path)
            #expect(response.status == 403 && response.text == #"{"detail":"owner-only endpoint"}"#, "\(path)")
        }
    }
}

/// `POST /privacy/flip` (owner-only, WIRE_NOTES §1): posts move between public and encrypted.
@Suite("Conformance: privacy flip")
struct PrivacyFlipTests {
    @Test func flipToPrivateAndBack() throws {
        let harness = try Harness()
        let owner = try harness.pair()
        let (body, type) = try Harness.form([("file", Array("public words".utf8), "p"), ("audience_mode", Array("public".utf8), nil),
                                             ("client", Array("cipherframe".utf8), nil), ("metadata", Array(#"{"t":"x"}"#.utf8), nil)])
        let publicCID = try #require(try harness.signed(owner, "POST", "/post", body: body, contentType: type).object()["cid"]?.stringValue)
        let createdAt = try #require(harness.emulator.manifest.posts(in: "cipherframe").first?.createdAt)

        var response = try harness.signedJSON(owner, "/privacy/flip", ["mode": "private"])
        #expect(response.status == 200, "\(response.text)")
        var object = try response.object()
        #expect(object.keys == ["status", "account_privacy", "default_audience_mode", "migrated", "migrated_count", "manifest_cid"])
        #expect(object["status"] == "privacy_flipped" && object["account_privacy"] == "private" && object["migrated_count"] == 1)
        let record = try #require(object["migrated"]?.arrayValue?.first)
        #expect(Harness.keys(record) == ["old_cid", "new_cid", "status"] && record["old_cid"]?.stringValue == publicCID)
        let encrypted = try #require(harness.emulator.manifest.posts(in: "cipherframe").first)
        #expect(encrypted.audienceMode == .all && encrypted.createdAt == createdAt && encrypted.isEncrypted)
        #expect(harness.emulator.manifest.clients["cipherframe"]?.profile?.accountPrivacy == "private")

        // The owner device reads the migrated post through /rewrap.
        let rewrap = try harness.signedJSON(owner, "/rewrap", ["uid": .string(harness.uid), "device_uid": .string(owner.deviceUID),
                                                              "post_cid": .string(encrypted.postCID)])
        let envelope = try #require(try rewrap.object()["result"]?["envelope"]?.stringValue)
        let key = try Envelope.open(envelope, with: owner.mlkem)
        let blob = try #require(harness.emulator.block(encrypted.postCID))
        #expect(try SecretBox.open(blob, using: key) == Data("public words".utf8))

        response = try harness.signedJSON(owner, "/privacy/flip", ["mode": "public"])
        object = try response.object()
        #expect(object["migrated_count"] == 1 && object["default_audience_mode"] == "public")
        let back = try #require(harness.emulator.manifest.posts(in: "cipherframe").first)
        #expect(back.postCID == publicCID && back.audienceMode == .public && back.metadata == .plaintext(["t": "x"]))

        response = try harness.signedJSON(owner, "/privacy/flip", ["mode": "secret"])
        #expect(response.status == 400 && response.text == #"{"detail":"mode must be 'private' or 'public'"}"#)
    }
}
