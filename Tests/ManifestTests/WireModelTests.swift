import Foundation
@testable import Manifest
import Testing
import OrderedJSON
import ContentAddressing

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T { try WireJSON.decode(type, from: bytes(json)) }
/// A manifest read by its one reader.
private func readManifest(_ json: String) throws -> Manifest { try Manifest.read(bytes(json)) }
/// One entry, read as the only post of a manifest.
private func readEntry(_ json: String) throws -> PostEntry {
    let manifest = try readManifest(#"{"clients":{"t":{"posts":["# + json + "]}}}")
    #expect(manifest.issues.isEmpty)
    return try #require(manifest.posts(in: "t").first)
}

@Suite("Station profile, public.json, envelope sets and drive metadata")
struct DocumentModelTests {
    @Test func profileReadsAndWritesTheRecordedBytes() throws {
        let profile = try decode(StationProfile.self, WireNotes.profile)
        #expect(profile.uid == "da27af3e-b2ac-4d02-a894-3c22d638d1ba")
        #expect(profile.manifestCID == "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX")
        #expect(profile.endpoint == nil)
        #expect(profile.ipfsPeerID == "12D3KooWRGsW16c346uR…")
        #expect(profile.ipnsName == "k51qzi5uqu5dlwnmtaju…")
        #expect(profile.manifestPosts == 1 && profile.manifestPostsTotal == 1)
        #expect(profile.manifestPostsByClient == ["interop": 1])
        #expect(text(try WireJSON.encode(profile)) == WireNotes.profile)
    }

    @Test func freshStationProfileAndDocumentedFallbacks() throws {
        let fresh = try decode(StationProfile.self, #"{"uid":"u","mlkem_public_key":"a","mldsa_public_key":"b","endpoint":null,"ipfs_peer_id":null,"ipns_name":null,"manifest_cid":null,"followers_count":0,"following_count":0,"manifest_posts":0,"manifest_posts_total":0,"manifest_posts_by_client":{}}"#)
        #expect(fresh.manifestCID == nil && fresh.ipnsName == nil && fresh.ipfsPeerID == nil)
        // The docs' public.json-shaped profile: manifest_pointer, no counts, extra keys.
        let documented = try decode(StationProfile.self, #"{"uid":"u","alias":"x","manifest_pointer":"QmP","followers_cid":null,"future":[1]}"#)
        #expect(documented.manifestCID == "QmP")
        #expect(documented.followersCount == 0 && documented.manifestPostsByClient.isEmpty)
    }

    @Test func publicDocumentAsPublishedToIPNS() throws {
        // Bootstrap order, then the IPFS identity the first publish adds; json.dumps(indent=2).
        let published = """
            {
              "alias": null,
              "uid": "da27af3e-b2ac-4d02-a894-3c22d638d1ba",
              "mlkem_public_key": "1e0618",
              "mldsa_public_key": "5ea9ed",
              "endpoint": "https://station.example",
              "manifest_pointer": "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX",
              "followers_cid": null,
              "following_cid": null,
              "follow_decoder_envelopes_cid": null,
              "ipfs_peer_id": "12D3KooWRGsW16c346uR",
              "ipns_name": "k51qzi5uqu5dlwnmtaju"
            }
            """
        let document = try decode(PublicDocument.self, published)
        #expect(document.endpoint == "https://station.example")
        #expect(document.manifestPointer == "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX")
        #expect(text(try WireJSON.encode(document, style: .pythonIndented)) == published)
        // Older builds wrote profile fields into public.json: ignored.
        let legacy = try decode(PublicDocument.self, #"{"uid":"u","display_name":"A","avatar_cid":"QmA","public_key":"x"}"#)
        #expect(legacy.uid == "u" && legacy.manifestPointer == nil)
    }

    @Test func envelopeSetKeepsTheStationOrder() throws {
        let recorded = try decode(EnvelopeSet.self, WireNotes.envelopes)
        #expect(recorded.version == 1 && recorded.postCID == "QmVCrQ…")
        #expect(recorded.envelope(for: "da27af3e-b2ac-4d02-a894-3c22d638d1ba") == "0440…(2324 hex)")
        #expect(text(try WireJSON.encode(recorded)) == WireNotes.envelopes)

        // Self envelope first, then followers in the station's (not alphabetical) order.
        let several = #"{"v":1,"post_cid":"QmP","envelopes":{"station":"0440aa","zed":"0440bb","alice":"0440cc"}}"#
        let set = try decode(EnvelopeSet.self, several)
        #expect(set.envelopes.keys == ["station", "zed", "alice"])
        #expect(text(try WireJSON.encode(set)) == several)
        #expect(try set.envelopeBytes(for: "zed") == [0x04, 0x40, 0xBB])
        #expect(try set.envelopeBytes(for: "nobody") == nil)
        #expect(throws: WireFormatError.self) { try recorded.envelopeBytes(for: "da27af3e-b2ac-4d02-a894-3c22d638d1ba") }

        // The older form the station's reader also accepts; non-string values skipped.
        let old = try decode(EnvelopeSet.self, #"{"envelopes":{"a":"0440","b":7}}"#)
        #expect(old.version == 1 && old.postCID == nil && old.envelopes == ["a": "0440"])
    }

    @Test func driveMetadataInTheProtocolExampleShape() throws {
        // PROTOCOL.md §16.4 file-storage example, compact.
        let example = #"{"filename":"report.pdf","mime_type":"application/pdf","size_bytes":1048576,"created_at":1704067200,"modified_at":1704070800,"path":"/documents/work/"}"#
        let metadata = try decode(DriveFileMetadata.self, example)
        #expect(metadata == DriveFileMetadata(filename: "report.pdf", mimeType: "application/pdf", sizeBytes: 1_048_576,
                                              createdAt: 1_704_067_200, modifiedAt: 1_704_070_800, path: "/documents/work/"))
        #expect(text(try WireJSON.encode(metadata)) == example)
        #expect(text(try WireJSON.encode(DriveFileMetadata(filename: "a", sizeBytes: 9))) == #"{"filename":"a","size_bytes":9}"#)
        let sparse = try decode(DriveFileMetadata.self, #"{"filename":"a","size_bytes":"big","extra":true}"#)
        #expect(sparse.filename == "a" && sparse.sizeBytes == nil)
        #expect(throws: WireFormatError.missingField(path: "filename")) { try decode(DriveFileMetadata.self, "{}") }
    }
}

@Suite("Manifest: multi-client, legacy forms, tolerant reading, station byte order")
struct ManifestModelTests {
    @Test func recordedManifestReadsAndWritesBackByteForByte() throws {
        let manifest = try readManifest(WireNotes.manifest)
        #expect(manifest.issues.isEmpty && !manifest.wasLegacyFlat)
        let entry = try #require(manifest.posts(in: "interop").first)
        #expect(entry.postCID == "QmVCrQ…")
        #expect(entry.audienceMode == .selfOnly)
        #expect(entry.isEncrypted)
        #expect(entry.envelopesCID == "QmY2b5…" && entry.envelopesCount == 1)
        #expect(entry.createdAt == 1_795_956_595)
        #expect(entry.metadata == .sealed(hex: "320e7003c48a…(hex)"))
        #expect(manifest.postCountsByClient == ["interop": 1])
        #expect(text(try WireJSON.encode(manifest)) == WireNotes.manifest)
        // The same bytes give the same CID (what a station publishing them gets).
        #expect(UnixFS.cid(of: try WireJSON.encode(manifest)) == UnixFS.cid(of: bytes(WireNotes.manifest)))
    }

    @Test func entriesAreWrittenInTheStationKeyOrder() throws {
        let encrypted = PostEntry.encrypted(
            postCID: "QmVCrQ…", audienceMode: .specific, envelopesCID: "QmY2b5…", envelopesCount: 2,
            createdAt: 1_795_956_595, audienceUIDs: ["a-uid", "b-uid"], sealedMetadataHex: "320e")
        #expect(text(try WireJSON.encode(encrypted)) == #"{"post_cid":"QmVCrQ…","audience_mode":"specific","envelopes_cid":"QmY2b5…","envelopes_count":2,"created_at":1795956595,"audience_uids":["a-uid","b-uid"],"metadata":"320e"}"#)
        let plain = PostEntry.publicPost(postCID: "QmTrYb…", createdAt: 1_795_956_600,
                                         metadata: ["caption": "Sunset", "location": ["lat": 37.7749, "lon": -122.4194]])
        #expect(text(try WireJSON.encode(plain)) == #"{"post_cid":"QmTrYb…","audience_mode":"public","encrypted":false,"envelopes_cid":null,"envelopes_count":0,"created_at":1795956600,"metadata":{"caption":"Sunset","location":{"lat":37.7749,"lon":-122.4194}}}"#)
        let manifest = Manifest(clients: ["interop": ClientNamespace(posts: [encrypted]), "default": ClientNamespace(posts: [plain])])
        #expect(manifest.clients.keys == ["interop", "default"])
        let round = try Manifest.read(try WireJSON.encode(manifest))
        #expect(round == manifest)
        #expect((try round.posts(in: "default").first?.metadata?.jsonValue)?["location"]?["lat"] == 37.7749)
    }

    @Test func publicEntryAndProfileNamespace() throws {
        let json = #"{"clients":{"cipherframe":{"posts":[{"post_cid":"QmTrYb…","audience_mode":"public","encrypted":false,"envelopes_cid":null,"envelopes_count":0,"created_at":1795956600,"metadata":{"caption":"hi","width":1920}}],"profile":{"display_name":"Ada","bio":"x","updated_at":1795956601,"avatar_cid":"QmAvatar","account_privacy":"public","default_audience_mode":"public"}},"drive":{"posts":[]}}}"#
        let manifest = try readManifest(json)
        let entry = try #require(manifest.posts(in: "cipherframe").first)
        #expect(!entry.isEncrypted && entry.audienceMode == .public && entry.envelopesCID == nil)
        #expect(entry.metadata == .plaintext(["caption": "hi", "width": 1920]))
        #expect(throws: WireFormatError.self) { try entry.metadata?.sealedBytes() }
        let profile = try #require(manifest.clients["cipherframe"]?.profile)
        #expect(profile.displayName == "Ada" && profile.avatarCID == "QmAvatar" && profile.updatedAt == 1_795_956_601)
        #expect(profile.defaultAudienceMode == .public && profile.accountPrivacy == "public")
        #expect(manifest.postCountsByClient == ["cipherframe": 1, "drive": 0])
        #expect(text(try WireJSON.encode(manifest)) == json)

        var merged = profile
        merged.merge(["bio": "new", "link": "https://a.example"])
        #expect(merged.fields.keys == ["display_name", "bio", "updated_at", "avatar_cid", "account_privacy", "default_audience_mode", "link"])
    }

    @Test func publicMetadataDecodesAsTheAppsType() throws {
        let entry = try readEntry(#"{"post_cid":"Qm1","audience_mode":"public","encrypted":false,"envelopes_cid":null,"envelopes_count":0,"created_at":1,"metadata":{"filename":"a.txt","mime_type":"text/plain","size_bytes":3}}"#)
        let metadata = try #require(entry.metadata).decodePlaintext(as: DriveFileMetadata.self)
        #expect(metadata.filename == "a.txt" && metadata.sizeBytes == 3)
        let sealed = PostMetadata.sealed(hex: "00ff10")
        #expect(try sealed.sealedBytes() == [0x00, 0xFF, 0x10])
        #expect(throws: WireFormatError.self) { try PostMetadata.sealed(hex: "0g").sealedBytes() }
        #expect(throws: WireFormatError.self) { try sealed.decodePlaintext(as: DriveFileMetadata.self) }
    }

    @Test func legacyFlatManifestIsNormalizedIntoClients() throws {
        let legacy = try readManifest(#"{"client":"cipherframe","posts":[{"cid":"QmOld","audience_mode":"all_followers","envelopes_cid":"QmEnv","metadata":"abcd"}]}"#)
        #expect(legacy.wasLegacyFlat)
        #expect(legacy.clients.keys == ["cipherframe"])
        let entry = try #require(legacy.posts(in: "cipherframe").first)
        #expect(entry.postCID == "QmOld" && entry.audienceMode == .all && entry.isEncrypted && entry.createdAt == nil)
        // Written back in the multi-client form with post_cid.
        #expect(text(try WireJSON.encode(legacy)) == #"{"clients":{"cipherframe":{"posts":[{"post_cid":"QmOld","audience_mode":"all","envelopes_cid":"QmEnv","metadata":"abcd"}]}}}"#)

        let unnamed = try readManifest(#"{"posts":[{"post_cid":"Qm1"}]}"#)
        #expect(unnamed.clients.keys == ["default"])
        #expect(unnamed.posts(in: "default").first?.audienceMode == .all)
        let blank = try readManifest(#"{"client":"  ","posts":[]}"#)
        #expect(blank.clients.keys == ["default"])
        #expect(try readManifest("{}").clients.isEmpty)
    }

    @Test func documentedEncryptedTrueAndMissingKeyBothMeanEncrypted() throws {
        // PROTOCOL §8.1 shows "encrypted": true; the station writes no key.
        let documented = try readEntry(#"{"post_cid":"Qm1","audience_mode":"all","encrypted":true,"envelopes_cid":"Qm2","envelopes_count":3,"metadata":"aa","audience_uids":["z","a"]}"#)
        #expect(documented.isEncrypted && documented.audienceUIDs == ["z", "a"])
        #expect(!text(try WireJSON.encode(documented)).contains("encrypted"))
        let measured = try readEntry(#"{"post_cid":"Qm1","audience_mode":"all","envelopes_cid":"Qm2"}"#)
        #expect(measured.isEncrypted)
    }

    @Test func oneBadEntryOrNamespaceNeverSinksTheManifest() throws {
        let json = #"{"future_top":true,"clients":{"app":{"posts":[{"post_cid":"Qm1","audience_mode":"followers_of_followers","envelopes_cid":"Qm2","envelopes_count":"many","created_at":"yesterday","audience_uids":["a",7,null,"b"],"metadata":{"k":1},"future":1},{"audience_mode":"all"},"not an entry",{"post_cid":""},{"post_cid":"Qm3","cid":"QmIgnored"}],"profile":"oops","future_bucket_key":{}},"broken":42,"nullposts":{"posts":null},"badposts":{"posts":{"a":1}}}}"#
        let manifest = try readManifest(json)
        #expect(manifest.clients.keys == ["app", "broken", "nullposts", "badposts"])
        let posts = manifest.posts(in: "app")
        #expect(posts.map(\.postCID) == ["Qm1", "Qm3"])
        #expect(posts[0].audienceMode == .unknown("followers_of_followers"))
        #expect(posts[0].envelopesCount == nil && posts[0].createdAt == nil)
        #expect(posts[0].audienceUIDs == ["a", "b"])
        #expect(manifest.clients["app"]?.profile == nil)
        let issues = manifest.issues
        #expect(issues.filter { $0.client == "app" }.compactMap(\.index) == [1, 2, 3])
        #expect(issues.contains { $0.client == "app" && $0.reason.contains("profile") })
        #expect(issues.contains { $0.client == "broken" && $0.reason.contains("not an object") })
        #expect(issues.contains { $0.client == "badposts" && $0.reason.contains("not an array") })
        #expect(!issues.contains { $0.client == "nullposts" })
        #expect(issues.first { $0.index == 1 }?.description == "clients.app.posts[1]: missing field clients.app.posts[1].post_cid")
        #expect(manifest.postCount == 2)
    }

    @Test func audienceModes() throws {
        #expect(AudienceMode(wireValue: "self") == .selfOnly)
        #expect(AudienceMode(wireValue: "all_followers") == .all)
        #expect(AudienceMode(wireValue: "public").wireValue == "public")
        #expect(AudienceMode(wireValue: "Self") == .unknown("Self"))
        #expect(text(try WireJSON.encode([AudienceMode.selfOnly, .specific, .all, .public, .unknown("x")])) == #"["self","specific","all","public","x"]"#)
        let numeric = try readEntry(#"{"post_cid":"Qm1","audience_mode":3}"#)
        #expect(numeric.audienceMode == .unknown("3"))
        let missing = try readEntry(#"{"post_cid":"Qm1","audience_mode":null}"#)
        #expect(missing.audienceMode == .all)
    }

    @Test func namespaceNamesAreNormalizedAsTheStationDoes() {
        #expect(Manifest.namespaceName(for: "  interop ") == "interop")
        #expect(Manifest.namespaceName(for: nil) == "default")
        #expect(Manifest.namespaceName(for: " drive\n") == "drive")
        #expect(Manifest.namespaceName(for: "\t") == "default")
    }
}

@Suite("Endpoint responses and error bodies from WIRE_NOTES §2")
struct ResponseModelTests {
    @Test func health() throws {
        let healthy = try decode(HealthResponse.self, WireNotes.healthy)
        #expect(healthy.isHealthy && healthy.checks.keys == ["database", "ipfs", "identity"])
        let degraded = try decode(HealthResponse.self, WireNotes.degraded)
        #expect(!degraded.isHealthy && degraded.checks["ipfs"] == false)
    }

    @Test func pairing() throws {
        let start = try decode(DelegateStartResponse.self, WireNotes.delegateStart)
        #expect(start.pairingID == "zr5kgIYyYMGfE5k8kI5Va0vz" && start.expiresInSeconds == 300)
        let confirm = try decode(DelegateConfirmResponse.self, WireNotes.delegateConfirm)
        #expect(confirm.deviceUID == "990DCF48-…" && confirm.uid == "da27af3e-b2ac-4d02-a894-3c22d638d1ba")
    }

    @Test func postResponses() throws {
        let encrypted = try decode(PostResponse.self, WireNotes.postEncrypted)
        #expect(encrypted.isEncrypted && encrypted.audienceMode == .selfOnly && encrypted.audienceUIDs == nil)
        #expect(encrypted.postCID == "QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4" && encrypted.followersRaw == 2)
        let plain = try decode(PostResponse.self, WireNotes.postPublic)
        #expect(!plain.isEncrypted && plain.envelopesCID == nil && plain.manifestPosts == 2)
    }

    @Test func rewrapSuccessAndEveryRecordedError() throws {
        let ok = try RewrapResponse.read(bytes(WireNotes.rewrapOK))
        #expect(ok.result == .rewrapped(uid: "…", deviceUID: "…", postCID: "…", envelopeHex: "0440…(2324 hex)"))
        for message in WireNotes.rewrapErrors {
            let body = #"{"status":"ok","result":{"error":"# + "\"\(message)\"}}"
            #expect(try RewrapResponse.read(bytes(body)).result == .failed(message))
            let error = try #require(StationErrorBody.parse(bytes(body)))
            #expect(error.shape == .resultError && error.message == message)
        }
    }

    @Test func rewrapReaderToleratesWhatTheStationMayAddAndRefusesTheRest() throws {
        #expect(try RewrapResponse.read(bytes(#"{"result":{"error":"post_cid x not found"}}"#))
                == RewrapResponse(status: "ok", result: .failed("post_cid x not found")))
        #expect(try RewrapResponse.read(bytes(#"{"status":"ok","result":{"uid":"u","device_uid":"d","post_cid":"p","envelope":"00","extra":1}}"#))
                == RewrapResponse(status: "ok", result: .rewrapped(uid: "u", deviceUID: "d", postCID: "p", envelopeHex: "00")))
        let malformed: [(String, WireFormatError?)] = [
            ("[]", .typeMismatch(path: "", expected: "an object", found: "an array")),
            (#"{"status":"ok"}"#, .missingField(path: "result")),
            (#"{"result":"x"}"#, .typeMismatch(path: "result", expected: "an object", found: "a string")),
            (#"{"result":{"uid":"u","device_uid":"d","post_cid":"p"}}"#, .missingField(path: "result.envelope")),
            (#"{"result":{"uid":"u","device_uid":"d","post_cid":"p","envelope":7}}"#,
             .typeMismatch(path: "result.envelope", expected: "a string", found: "a number")),
            (#"{"result":{"error":null}}"#, .missingField(path: "result.uid")),
            ("{", nil),
        ]
        for (body, expected) in malformed {
            let error = #expect(throws: WireFormatError.self, "\(body)") { try RewrapResponse.read(bytes(body)) }
            if let expected { #expect(error == expected, "\(body)") }
        }
    }

    @Test func shareDeleteAndProfileEdits() throws {
        let share = try decode(ShareResponse.self, WireNotes.share)
        #expect(share.audienceMode == .all && share.envelopesCount == 1 && share.audienceUIDs == nil)
        let delete = try decode(DeleteResponse.self, WireNotes.delete)
        #expect(delete.client == "interop" && delete.unpinned == ["<post_cid>", "<envelopes_cid>"] && delete.gcObjectsRemoved == 1)
        let update = try decode(ProfileUpdateResponse.self, #"{"status":"profile_updated","profile":{"bio":"b","updated_at":5}}"#)
        #expect(update.profile.bio == "b")
        #expect(try decode(AvatarUpdateResponse.self, #"{"status":"avatar_updated","avatar_cid":"QmA"}"#).avatarCID == "QmA")
    }

    @Test func inbox() throws {
        let new = try decode(InboxResponse.self, WireNotes.inboxNew)
        #expect(new.result.status == "follow_request_pending_multi_device" && new.result.devicesAdded == 1)
        #expect(new.result.pendingApproval == 1 && new.result.rewrapTriggered == false && new.result.error == nil)
        #expect(try decode(InboxResponse.self, WireNotes.inboxRepeat).result.devicesAdded == 0)
        let again = try decode(InboxResponse.self, WireNotes.inboxAlreadyRegistered)
        #expect(again.result.uid == "U")
        for message in WireNotes.inboxErrors {
            let body = #"{"status":"ok","result":{"error":"# + "\"\(message)\"}}"
            #expect(try decode(InboxResponse.self, body).result.error == message)
            #expect(StationErrorBody.parse(bytes(body))?.message == message)
        }
        #expect(StationErrorBody.parse(bytes(WireNotes.inboxNew)) == nil)
    }

    /// A follower list the station wrote with `json.dumps` (Python keeps a lone surrogate a
    /// follow request carried) is read, the surrogate as U+FFFD, not refused whole.
    @Test func aFollowerListWithALoneSurrogateIsRead() throws {
        let body = #"{"status": "ok", "followers": [{"uid": "U", "alias": "\ud800x", "endpoint": null, "ipns_id": null}]}"#
        let followers = try decode(FollowersResponse.self, body)
        #expect(followers.followers == [FollowerSummary(uid: "U", alias: "\u{FFFD}x")])
    }

    @Test func followersAndFollows() throws {
        let followers = try decode(FollowersResponse.self, WireNotes.followers)
        #expect(followers.followers == [FollowerSummary(uid: "U")])
        let pending = try decode(PendingFollowersResponse.self, WireNotes.pending)
        #expect(pending.pending.first?.allowed == "Pending" && pending.pending.first?.deviceUID == "U")
        let approve = try decode(FollowerChangeResponse.self, WireNotes.approve)
        #expect(approve.devicesApproved == 1 && approve.deviceUID == nil)
        #expect(approve.rewrap?.postsUpdated == 1 && approve.rewrap?.skipCounts?["audience_not_all"] == 1)
        let failedRewrap = try decode(FollowerChangeResponse.self, #"{"status":"ok","action":"remove_follower","uid":"U","device_uid":"D","removed":1,"removed_allowed":true,"rewrap":{"error":"boom"},"updated_graph":null}"#)
        #expect(failedRewrap.rewrap?.error == "boom" && failedRewrap.removedAllowed == true)

        let follow = try decode(FollowResponse.self, WireNotes.follow)
        #expect(follow.target.endpoint == "https://t.example" && follow.updatedProfile?.manifestPosts == 1)
        let unfollow = try decode(FollowResponse.self, WireNotes.unfollow)
        #expect(unfollow.target == FollowedStation(uid: "T"))
        let following = try decode(FollowingResponse.self, WireNotes.following)
        #expect(following.following.first?.mldsaPublicKey == nil)
    }

    @Test func storage() throws {
        let storage = try decode(StorageResponse.self, WireNotes.storage)
        #expect(storage.ipfs?.value?.repoSizeBytes == 97337 && storage.ipfs?.value?.storageMaxBytes == 10_737_418_240)
        #expect(storage.device?.value?.usedPercent == 6.63)
        #expect(storage.clients?.value?["interop"]?.postCount == 2 && storage.totalContentBytes == 4852)
        let down = try decode(StorageResponse.self, WireNotes.storageIPFSDown)
        #expect(down.ipfs == .error("connection refused"))
        let clientsFailed = try decode(StorageResponse.self, #"{"ipfs":{"repo_size_bytes":0,"storage_max_bytes":0,"num_objects":0,"used_percent":0},"device":{"error":"x"},"clients":{"error":"y"}}"#)
        #expect(clientsFailed.clients == .error("y") && clientsFailed.device == .error("x") && clientsFailed.totalContentBytes == nil)
    }

    @Test func errorBodiesOfEveryShape() throws {
        for message in WireNotes.detailMessages {
            let parsed = try #require(StationErrorBody.parse(bytes(#"{"detail":"# + "\"\(message)\"}")))
            #expect(parsed.shape == .detail && parsed.message == message)
        }
        let validation = try #require(StationErrorBody.parse(bytes(WireNotes.missingHeaders)))
        #expect(validation.shape == .validation)
        #expect(validation.validationIssues.map(\.location) == [["header", "x-cipher-uid"], ["header", "x-cipher-sig"]])
        #expect(validation.message == "header.x-cipher-uid: Field required; header.x-cipher-sig: Field required")
        #expect(validation.validationIssues.first?.input == nil)
        #expect(validation.validationIssues.first?.type == "missing")
        let body = try decode(StationErrorBody.self, #"{"detail":[{"type":"missing","loc":["body",0,"uid"],"msg":"Field required","input":{}}]}"#)
        #expect(body.message == "body.0.uid: Field required")
        #expect(body.validationIssues.first?.input == .object([:]))
        let tooLarge = try #require(StationErrorBody.parse(bytes(WireNotes.tooLarge)))
        #expect(tooLarge.shape == .error && tooLarge.message == "Request too large (max 104857600 bytes)")
        let h11 = try #require(StationErrorBody.parse(bytes("Invalid HTTP request received.")))
        #expect(h11.shape == .plainText && h11.message == "Invalid HTTP request received.")
        #expect(StationErrorBody.parse(bytes(#"{"detail":{"code":7}}"#))?.message == #"{"code":7}"#)
        #expect(StationErrorBody.parse([]) == nil)
        #expect(StationErrorBody.parse(bytes(WireNotes.postEncrypted)) == nil)
        #expect(StationErrorBody.parse(bytes(WireNotes.rewrapOK)) == nil)
        #expect(throws: WireFormatError.self) { try decode(StationErrorBody.self, #"{"status":"ok"}"#) }
    }
}
