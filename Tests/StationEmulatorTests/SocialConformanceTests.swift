import Envelope
import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import StationEmulator
import Testing
import OrderedJSON

/// WIRE_NOTES §2.11–2.12: inbox follow requests, followers, approval with rewrap, follows, and the
/// encrypted graphs (PROTOCOL §9).
@Suite("Conformance: inbox, followers, follows, graphs (WIRE_NOTES §2.11–2.12)")
struct SocialConformanceTests {
    static func followRequest(_ follower: TestDevice, devices: [TestDevice]) -> JSONObject {
        ["type": "follow_request", "uid": .string(follower.uid),
         "devices": .array(devices.map { .object(["device_uid": .string($0.deviceUID), "mlkem_public_key": .string($0.mlkemHex),
                                                  "mldsa_public_key": .string($0.mldsaHex)]) }),
         "ipns_id": .null]
    }

    @Test func followRequestsLandAsPending() throws {
        let harness = try Harness()
        let follower = TestDevice(uid: "U", deviceUID: "U")
        var response = try harness.json("POST", "/inbox", Self.followRequest(follower, devices: [follower]))
        #expect(response.status == 200)
        #expect(response.text == #"{"status":"ok","result":{"status":"follow_request_pending_multi_device","rewrap_triggered":false,"devices_added":1,"pending_approval":1}}"#)
        response = try harness.json("POST", "/inbox", Self.followRequest(follower, devices: [follower]))
        #expect(response.text == #"{"status":"ok","result":{"status":"follow_request_pending_multi_device","rewrap_triggered":false,"devices_added":0,"pending_approval":0}}"#)

        let legacy = TestDevice(uid: "L", deviceUID: "L")
        let legacyBody: JSONObject = ["type": "follow_request", "uid": "L", "mlkem_public_key": .string(legacy.mlkemHex)]
        response = try harness.json("POST", "/inbox", legacyBody)
        #expect(response.text == #"{"status":"ok","result":{"status":"follow_request_pending","rewrap_triggered":false,"pending_approval":1}}"#)
        response = try harness.json("POST", "/inbox", legacyBody)
        #expect(response.text == #"{"status":"ok","result":{"status":"follow_request_already_registered","uid":"L"}}"#)

        // Validation errors are HTTP 200 with result.error.
        response = try harness.json("POST", "/inbox", ["type": "follow_request", "uid": "X", "mlkem_public_key": "abcd"])
        #expect(response.status == 200 && response.text == #"{"status":"ok","result":{"error":"follow_request mlkem_public_key must be 2368 hex chars"}}"#)
        response = try harness.json("POST", "/inbox", ["type": "follow_request", "uid": .string(harness.uid), "mlkem_public_key": .string(legacy.mlkemHex)])
        #expect(response.text == #"{"status":"ok","result":{"error":"follow_request cannot target local uid"}}"#)
        response = try harness.json("POST", "/inbox", ["type": "follow_request", "uid": "Y", "devices": [["device_uid": "d1"]]])
        #expect(response.text == #"{"status":"ok","result":{"error":"Malformed device entry: {'device_uid': 'd1'}"}}"#)
        response = try harness.json("POST", "/inbox", ["uid": "Y"])
        #expect(response.status == 422)

        let owner = try harness.pair()
        response = try harness.signed(owner, "GET", "/followers/pending")
        let pending = try #require(try response.object()["pending"]?.arrayValue)
        #expect(pending.count == 2 && pending.map { $0["uid"] } == ["L", "U"])
        #expect(Harness.keys(pending.first) == ["uid", "device_uid", "mlkem_public_key", "mldsa_public_key", "alias", "allowed",
                                                "endpoint", "ipns_id"])
        #expect(pending.allSatisfy { $0["allowed"] == "Pending" })
        response = try harness.signed(owner, "GET", "/followers")
        #expect(response.text == #"{"status":"ok","followers":[]}"#)
    }

    @Test func signedNonFollowMessagesAuthenticate() throws {
        let harness = try Harness()
        let owner = try harness.pair()
        // Deliberate exception (WIRE_NOTES §0.9): signed messages authenticate here.
        var response = try harness.signedJSON(owner, "/inbox", ["type": "manifest_update", "uid": .string(harness.uid)])
        #expect(response.status == 200 && response.text == #"{"status":"ok","result":{"status":"unhandled_manifest_update"}}"#)
        response = try harness.json("POST", "/inbox", ["type": "manifest_update"])
        #expect(response.status == 422)
    }

    @Test func approveRewrapsAllPostsAndPublishesGraphs() throws {
        let harness = try Harness()
        let owner = try harness.pair()
        let allPost = try harness.post(owner, mode: "all")
        _ = try harness.post(owner, mode: "self")
        let follower = TestDevice(uid: "follower-1", deviceUID: "follower-1")
        _ = try harness.json("POST", "/inbox", Self.followRequest(follower, devices: [follower]))

        var response = try harness.signedJSON(owner, "/followers/approve", ["uid": "nobody"])
        #expect(response.status == 404 && response.text == #"{"detail":"no matching follower to approve"}"#)
        response = try harness.signedJSON(owner, "/followers/approve", ["uid": .string(follower.uid), "device_uid": .null])
        #expect(response.status == 200)
        let object = try response.object()
        #expect(object.keys == ["status", "action", "uid", "device_uid", "devices_approved", "rewrap", "updated_graph"])
        #expect(object["action"] == "approve_follower" && object["devices_approved"] == 1 && object["device_uid"] == .null)
        let rewrap = try #require(object["rewrap"])
        #expect(Harness.keys(rewrap) == ["status", "followers_allowed", "posts_total", "posts_updated", "posts_skipped", "manifest_cid",
                                         "skip_counts"])
        #expect(rewrap["status"] == "rewrap_manifest_ok" && rewrap["followers_allowed"] == 2 && rewrap["posts_total"] == 2
            && rewrap["posts_updated"] == 1 && rewrap["posts_skipped"] == 1)
        #expect(rewrap["skip_counts"]?["audience_not_all"] == 1)
        #expect(Harness.keys(object["updated_graph"]) == ["following_cid", "followers_cid", "follow_decoder_envelopes_cid"])

        // The follower's own envelope for the `all` post opens with its key.
        let entry = try #require(harness.emulator.manifest.entry(forPostCID: allPost.cid)?.entry)
        let envelopesCID = try #require(entry.envelopesCID)
        let envelopesBytes = try #require(harness.emulator.block(envelopesCID))
        let set = try WireJSON.decode(EnvelopeSet.self, from: envelopesBytes)
        #expect(set.envelopes.keys.sorted() == [harness.uid, follower.uid].sorted())
        #expect(try Envelope.open(try #require(set.envelope(for: follower.uid)), with: follower.mlkem) == allPost.key)

        response = try harness.signed(owner, "GET", "/followers")
        #expect(response.text == #"{"status":"ok","followers":[{"uid":"follower-1","alias":null,"endpoint":null,"ipns_id":null}]}"#)
        #expect(try harness.profile()["followers_count"] == 1)

        // The decoder envelopes open the graphs: the follower finds itself in the followers graph.
        let decoderCID = try #require(object["updated_graph"]?["follow_decoder_envelopes_cid"]?.stringValue)
        let decoder = try WireJSON.parse(try #require(harness.emulator.block(decoderCID)))
        let mine = try #require(decoder["envelopes"]?[follower.uid]?.arrayValue?.first?["envelope"]?.stringValue)
        let graphKey = try Envelope.open(mine, with: follower.mlkem)
        let followersCID = try #require(object["updated_graph"]?["followers_cid"]?.stringValue)
        let graph = try WireJSON.parse(try SecretBox.open(try #require(harness.emulator.block(followersCID)), using: graphKey))
        #expect(graph["version"] == 1)
        #expect(graph["followers"]?.arrayValue?.contains { $0["uid"]?.stringValue == follower.uid } == true)
        // public.json carries the graph CIDs.
        let published = try WireJSON.parse(try #require(harness.emulator.publishedPublicDocument))
        #expect(published["followers_cid"]?.stringValue == followersCID)

        response = try harness.signedJSON(owner, "/followers/remove", ["uid": .string(follower.uid)])
        #expect(response.status == 200)
        #expect(try response.object().keys == ["status", "action", "uid", "device_uid", "removed", "removed_allowed", "rewrap",
                                                        "updated_graph"])
        #expect(try harness.signed(owner, "GET", "/followers").text == #"{"status":"ok","followers":[]}"#)
    }

    @Test func followUnfollowAndFollowing() throws {
        let harness = try Harness()
        let owner = try harness.pair()
        let target = TestDevice(uid: "target-station", deviceUID: "target-station")
        var response = try harness.signedJSON(owner, "/follow", ["uid": .string(target.uid), "endpoint": "https://target.example",
                                                                 "mlkem_public_key": "not-validated", "ipns_id": "k51target"])
        #expect(response.status == 200)
        let object = try response.object()
        #expect(object.keys == ["status", "action", "target", "updated_graph", "updated_profile"])
        #expect(response.text.contains(#""target":{"uid":"target-station","mlkem_public_key":"not-validated","mldsa_public_key":null,"endpoint":"https://target.example","ipns_id":"k51target"}"#))
        #expect(Harness.keys(object["updated_profile"]) == InfoConformanceTests.profileKeys)
        #expect(object["updated_profile"]?["following_count"] == 1)

        response = try harness.signed(owner, "GET", "/following")
        #expect(response.text == #"{"status":"ok","following":[{"uid":"target-station","endpoint":"https://target.example","ipns_id":"k51target","mlkem_public_key":"not-validated","mldsa_public_key":null}]}"#)
        response = try harness.signedJSON(owner, "/follow", ["uid": "x", "mlkem_public_key": "k"])
        #expect(response.status == 422)

        response = try harness.signedJSON(owner, "/unfollow", ["uid": "never-followed"])
        #expect(response.status == 200)
        response = try harness.signedJSON(owner, "/unfollow", ["uid": .string(target.uid)])
        #expect(response.status == 200)
        #expect(response.text.hasPrefix(#"{"status":"ok","action":"unfollow","target":{"uid":"target-station"},"updated_graph":{"following_cid":"#))
        #expect(try harness.signed(owner, "GET", "/following").text == #"{"status":"ok","following":[]}"#)
    }
}
