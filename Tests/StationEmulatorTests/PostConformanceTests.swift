import Envelope
import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
@testable import StationEmulator
import Testing
import OrderedJSON
import ContentAddressing

/// WIRE_NOTES §2.4–2.10: posts, the published manifest and envelopes, rewrap, content, share, delete.
@Suite("Conformance: posts, manifest, envelopes, rewrap, content (WIRE_NOTES §2.4–2.10)")
struct PostConformanceTests {
    static let encryptedPostKeys = ["status", "cid", "envelopes_cid", "audience_mode", "audience_uids", "followers_raw",
                                    "followers_used", "manifest_posts"]

    /// GET /content/<cid> as the owner device.
    static func content(_ harness: Harness, _ device: TestDevice, _ cid: String, range: String? = nil) throws -> RawResponse {
        try harness.signed(device, "GET", "/content/\(cid)", extraHeaders: range.map { [("Range", $0)] } ?? [])
    }

    @Test func encryptedPostShapeManifestAndEnvelopes() throws {
        let harness = try Harness()
        let device = try harness.pair()
        let posted = try harness.post(device, mode: "self")
        #expect(posted.response.status == 200, "\(posted.response.text)")
        let object = try posted.response.object()
        #expect(object.keys == Self.encryptedPostKeys)
        #expect(object["status"] == "post_ok" && object["audience_mode"] == "self" && object["audience_uids"] == .null)
        // Rows: the station and the paired device; envelopes: the station only.
        #expect(object["followers_raw"] == 2 && object["followers_used"] == 1 && object["manifest_posts"] == 1)
        // The CID is Kubo's for the exact bytes received.
        let stored = try #require(harness.emulator.block(posted.cid))
        #expect(UnixFS.cid(of: [UInt8](stored)).description == posted.cid)
        #expect(try [UInt8](SecretBox.open(stored, using: posted.key)) == posted.plaintext)

        // /profile's manifest_cid is current at once; the manifest is compact JSON in station key order.
        let profile = try harness.profile()
        let manifestCID = try #require(profile["manifest_cid"]?.stringValue)
        let manifest = try Self.content(harness, device, manifestCID)
        #expect(manifest.status == 200)
        let entries = try #require(try manifest.object()["clients"]?["interop"]?["posts"]?.arrayValue)
        let entry = try #require(entries.first)
        #expect(Harness.keys(entry) == ["post_cid", "audience_mode", "envelopes_cid", "envelopes_count", "created_at", "metadata"])
        #expect(entry["post_cid"]?.stringValue == posted.cid && entry["envelopes_count"] == 1)
        let createdAt = try #require(entry["created_at"]?.intValue)
        #expect(abs(Int64(createdAt) - harness.now) <= 5)
        #expect(WireJSON.serialize(try WireJSON.parse(manifest.body), style: .compact) == manifest.body)
        let metadata = try Hex.decode(try #require(entry["metadata"]?.stringValue))
        #expect(try String(decoding: SecretBox.open(metadata, using: posted.key), as: UTF8.self) == #"{"caption":"hi"}"#)

        let envelopesCID = try #require(object["envelopes_cid"]?.stringValue)
        #expect(entry["envelopes_cid"]?.stringValue == envelopesCID)
        let envelopes = try Self.content(harness, device, envelopesCID)
        let document = try envelopes.object()
        #expect(document.keys == ["v", "post_cid", "envelopes"])
        #expect(document["v"] == 1 && document["post_cid"]?.stringValue == posted.cid)
        #expect(Harness.keys(document["envelopes"]) == [harness.uid])
        let envelope = try #require(document["envelopes"]?[harness.uid]?.stringValue)
        #expect(envelope.count == 2324 && envelope.hasPrefix("0440"))
        #expect(envelopes.text.hasPrefix(#"{"v":1,"post_cid":""#))
    }

    @Test func publicPostShapeAndEntry() throws {
        let harness = try Harness()
        let device = try harness.pair()
        let (body, type) = try Harness.form([("file", Array("plain words".utf8), "note.txt"), ("audience_mode", Array("public".utf8), nil),
                                             ("metadata", Array(#"{"title":"Hi","n":1}"#.utf8), nil), ("self_envelope", Array("ignored".utf8), nil)])
        let response = try harness.signed(device, "POST", "/post", body: body, contentType: type)
        #expect(response.status == 200, "\(response.text)")
        let object = try response.object()
        #expect(object.keys == ["status", "cid", "envelopes_cid", "audience_mode", "encrypted", "audience_uids", "followers_raw",
                                "followers_used", "manifest_posts"])
        let cid = try #require(object["cid"]?.stringValue)
        #expect(response.text == #"{"status":"post_ok","cid":"\#(cid)","envelopes_cid":null,"audience_mode":"public","encrypted":false,"audience_uids":null,"followers_raw":0,"followers_used":0,"manifest_posts":1}"#)
        let entry = try #require(harness.emulator.manifest.posts(in: "default").first)
        let written = String(decoding: try WireJSON.encode(entry), as: UTF8.self)
        #expect(written.hasPrefix(#"{"post_cid":"\#(cid)","audience_mode":"public","encrypted":false,"envelopes_cid":null,"envelopes_count":0,"created_at":"#))
        #expect(written.hasSuffix(#","metadata":{"title":"Hi","n":1}}"#))

        // Metadata that is not JSON is dropped silently.
        let (bad, badType) = try Harness.form([("file", [1, 2, 3], "x"), ("audience_mode", Array("public".utf8), nil),
                                               ("metadata", Array("not json".utf8), nil)])
        #expect(try harness.signed(device, "POST", "/post", body: bad, contentType: badType).status == 200)
        let second = try #require(harness.emulator.manifest.posts(in: "default").last)
        #expect(second.metadata == nil)
    }

    @Test func postRefusals() throws {
        let harness = try Harness()
        let device = try harness.pair()
        var (body, type) = try Harness.form([("client", Array("x".utf8), nil)])
        var response = try harness.signed(device, "POST", "/post", body: body, contentType: type)
        #expect(response.status == 422)
        #expect(response.text == #"{"detail":[{"type":"missing","loc":["body","file"],"msg":"Field required","input":null}]}"#)

        (body, type) = try Harness.form([("file", [1], "b")])
        response = try harness.signed(device, "POST", "/post", body: body, contentType: type)
        #expect(response.status == 400 && response.text == #"{"detail":"self_envelope is required for non-public posts"}"#)

        (body, type) = try Harness.form([("file", [1], "b"), ("self_envelope", Array("0440abcd".utf8), nil)])
        response = try harness.signed(device, "POST", "/post", body: body, contentType: type)
        #expect(response.status == 400 && response.text == #"{"detail":"Failed to recover symmetric key from self_envelope"}"#)

        let bad = try harness.post(device, mode: "x")
        #expect(bad.response.status == 400 && bad.response.text == #"{"detail":"Invalid audience_mode: x"}"#)

        let unknown = try harness.post(device, mode: "specific", uids: #"["zed","amy"]"#)
        #expect(unknown.response.status == 400)
        #expect(unknown.response.text == #"{"detail":"Specific audience contains uids that are not Allowed followers (or unknown): amy, zed"}"#)
    }

    @Test func specificAudienceIsSortedAndDeduplicatedAndAllFollowersIsAnAlias() throws {
        let harness = try Harness()
        let device = try harness.pair()
        for uid in ["bob", "amy"] {
            let follower = TestDevice(uid: uid, deviceUID: uid)
            _ = try harness.json("POST", "/inbox", ["type": "follow_request", "uid": .string(uid), "mlkem_public_key": .string(follower.mlkemHex)])
            _ = try harness.signedJSON(device, "/followers/approve", ["uid": .string(uid)])
        }
        let posted = try harness.post(device, mode: "specific", uids: "bob, amy,bob", client: " ")
        #expect(posted.response.status == 200, "\(posted.response.text)")
        let object = try posted.response.object()
        #expect(object["audience_uids"] == ["bob", "amy", "bob"] && object["followers_used"] == 3)
        let entry = try #require(harness.emulator.manifest.posts(in: "default").first)
        #expect(entry.audienceUIDs == ["amy", "bob"])
        let entryEnvelopes = try #require(entry.envelopesCID)
        let setBytes = try #require(harness.emulator.block(entryEnvelopes))
        let set = try WireJSON.decode(EnvelopeSet.self, from: setBytes)
        #expect(set.envelopes.keys == [harness.uid, "amy", "bob"])

        let alias = try harness.post(device, mode: "all_followers")
        #expect(try alias.response.object()["audience_mode"] == "all")
    }

    @Test func largePostIsAThreeLeafDAG() throws {
        let harness = try Harness()
        let device = try harness.pair()
        var generator = SystemRandomNumberGenerator()
        let plaintext = (0..<(702_344 - 40)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let posted = try harness.post(device, plaintext: plaintext)
        #expect(posted.response.status == 200)
        let stored = try #require(harness.emulator.block(posted.cid))
        #expect(stored.count == 702_344)
        let (root, blocks) = UnixFS.dag(of: [UInt8](stored))
        #expect(root.description == posted.cid && blocks.count == 4)
    }

    @Test func rewrapOpensWithTheDeviceKeyAndErrorsAre200() throws {
        let harness = try Harness()
        let device = try harness.pair()
        let posted = try harness.post(device)
        var response = try harness.signedJSON(device, "/rewrap", ["uid": .string(harness.uid), "device_uid": .string(device.deviceUID),
                                                                  "post_cid": .string(posted.cid), "envelopes_cid": .null])
        #expect(response.status == 200)
        let object = try response.object()
        #expect(object.keys == ["status", "result"] && object["status"] == "ok")
        #expect(Harness.keys(object["result"]) == ["status", "uid", "device_uid", "post_cid", "envelope"])
        #expect(object["result"]?["status"] == "rewrap_ok" && object["result"]?["device_uid"]?.stringValue == device.deviceUID)
        let envelope = try #require(object["result"]?["envelope"]?.stringValue)
        #expect(envelope.hasPrefix("0440") && envelope.count == 2324)
        #expect(try Envelope.open(envelope, with: device.mlkem) == posted.key)

        let missing = "QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4"
        response = try harness.signedJSON(device, "/rewrap", ["uid": .string(harness.uid), "device_uid": .string(device.deviceUID),
                                                              "post_cid": .string(missing)])
        #expect(response.status == 200 && response.text == #"{"status":"ok","result":{"error":"post_cid \#(missing) not found"}}"#)

        let (body, type) = try Harness.form([("file", [9, 9], "p"), ("audience_mode", Array("public".utf8), nil)])
        let publicCID = try #require(try harness.signed(device, "POST", "/post", body: body, contentType: type).object()["cid"]?.stringValue)
        response = try harness.signedJSON(device, "/rewrap", ["uid": .string(harness.uid), "device_uid": .string(device.deviceUID),
                                                              "post_cid": .string(publicCID)])
        #expect(response.text == #"{"status":"ok","result":{"error":"post_cid \#(publicCID) missing envelopes_cid"}}"#)
    }

    @Test func contentRangesAndRefusals() throws {
        let harness = try Harness()
        let device = try harness.pair()
        let posted = try harness.post(device, plaintext: (0..<1000).map { UInt8($0 % 251) })
        let stored = try #require(harness.emulator.block(posted.cid))
        var response = try Self.content(harness, device, posted.cid)
        #expect(response.status == 200 && Data(response.body) == stored)
        #expect(response.header("content-length") == "1040" && response.header("accept-ranges") == "bytes")
        #expect(response.header("etag") == "\"\(posted.cid)\"" && response.header("content-type") == "application/octet-stream")

        response = try Self.content(harness, device, posted.cid, range: "bytes=0-99")
        #expect(response.status == 206 && response.header("content-range") == "bytes 0-99/1040" && Data(response.body) == stored.prefix(100))
        response = try Self.content(harness, device, posted.cid, range: "bytes=-16")
        #expect(response.status == 206 && Data(response.body) == stored.suffix(16))
        response = try Self.content(harness, device, posted.cid, range: "bytes=5000-")
        #expect(response.status == 416 && response.text == #"{"detail":"requested range not satisfiable"}"#)
        response = try Self.content(harness, device, posted.cid, range: "items=0-5")
        #expect(response.status == 200 && response.body.count == 1040)

        for cid in ["QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4", "not-a-cid"] {
            response = try Self.content(harness, device, cid)
            #expect(response.status == 404 && response.text == #"{"detail":"content not found"}"#)
        }
        // public.json's own CID is not servable, the manifest it points at is.
        let publicCID = UnixFS.cid(of: [UInt8](try #require(harness.emulator.publishedPublicDocument))).description
        #expect(try Self.content(harness, device, publicCID).status == 404)

        harness.emulator.faults.setIPFSDown(true)
        response = try Self.content(harness, device, posted.cid)
        #expect(response.status == 503 && response.text == #"{"detail":"content store unavailable"}"#)
    }

    @Test func shareKeepsTheBytesAndMovesTheEntry() throws {
        let clock = ManualClock()
        let harness = try Harness(clock: clock)
        let device = try harness.pair()
        let first = try harness.post(device)
        _ = try harness.post(device)
        clock.advance(by: 30)
        var response = try harness.signedJSON(device, "/post/share", ["post_cid": .string(first.cid), "audience_mode": "all"])
        #expect(response.status == 200, "\(response.text)")
        #expect(response.text == #"{"status":"shared","post_cid":"\#(first.cid)","audience_mode":"all","audience_uids":null,"envelopes_count":1}"#)
        let posts = harness.emulator.manifest.posts(in: "interop")
        #expect(posts.last?.postCID == first.cid && posts.last?.createdAt == Int(harness.now))
        // Deliberate exception (WIRE_NOTES §0.4): the bytes survive a reshare here.
        response = try Self.content(harness, device, first.cid)
        #expect(response.status == 200 && (try? [UInt8](SecretBox.open(response.body, using: first.key))) == first.plaintext)

        response = try harness.signedJSON(device, "/post/share", ["post_cid": .string(first.cid), "audience_mode": "public"])
        #expect(response.status == 400)
        #expect(response.text == #"{"detail":"Resharing to/from 'public' is not supported; create a new public post instead"}"#)
        response = try harness.signedJSON(device, "/post/share", ["post_cid": .string(first.cid), "audience_uids": ["ghost"]])
        #expect(response.status == 400)
        response = try harness.signedJSON(device, "/post/share", ["post_cid": "QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4"])
        #expect(response.status == 404 && response.text == #"{"detail":"Post QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4 not found"}"#)
    }

    @Test func deleteShapeThenGone() throws {
        let harness = try Harness()
        let device = try harness.pair()
        let kept = try harness.post(device)
        let doomed = try harness.post(device)
        let envelopesCID = try #require(try doomed.response.object()["envelopes_cid"]?.stringValue)
        var response = try harness.signedJSON(device, "/post/delete", ["post_cid": .string(doomed.cid), "client": .null])
        #expect(response.status == 200)
        let object = try response.object()
        #expect(object.keys == ["status", "post_cid", "client", "manifest_posts", "unpinned", "gc_objects_removed"])
        #expect(object["status"] == "deleted" && object["client"] == "interop" && object["manifest_posts"] == 1)
        #expect(object["unpinned"] == [.string(doomed.cid), .string(envelopesCID)])
        #expect((object["gc_objects_removed"]?.intValue ?? 0) >= 1)
        response = try harness.signedJSON(device, "/post/delete", ["post_cid": .string(doomed.cid)])
        #expect(response.status == 404 && response.text == #"{"detail":"Post \#(doomed.cid) not found in manifest"}"#)
        #expect(try Self.content(harness, device, doomed.cid).status == 404)
        response = try harness.signedJSON(device, "/rewrap", ["uid": .string(harness.uid), "device_uid": .string(device.deviceUID),
                                                              "post_cid": .string(doomed.cid)])
        #expect(response.text == #"{"status":"ok","result":{"error":"post_cid \#(doomed.cid) not found"}}"#)
        #expect(try Self.content(harness, device, kept.cid).status == 200)
    }
}
