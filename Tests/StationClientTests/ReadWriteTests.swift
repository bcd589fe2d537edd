import Foundation
import Manifest
import ClassicalCrypto
import PQCrypto
@testable import StationClient
import StationEmulator
import Testing
import Transport
import OrderedJSON
import ContentAddressing

@Suite("Publishing, listing and downloading")
struct ReadWriteTests {
    @Test("Two namespaces on one station: each client sees only its own, decrypted into its own type")
    func namespaces() async throws {
        let rig = try StationRig.inProcess()
        let drive = try await rig.pair(namespace: "drive")
        let frame = try await rig.pair(namespace: "cipherframe")
        let file = Data("quarterly report".utf8)
        let published = try await drive.publish(data: file, metadata: Fixture.drive("report.txt", size: file.count))
        #expect(published.audienceMode == .selfOnly)
        #expect(published.postCID == UnixFS.cid(of: try #require(rig.emulator.block(published.postCID))).description)
        _ = try await frame.publish(data: Data("photo".utf8), metadata: FramePost(caption: "sunset", likes: 3))

        let driveListing = try await drive.listPosts(as: DriveFileMetadata.self)
        #expect(driveListing.posts.map(\.metadata?.filename) == ["report.txt"])
        #expect(driveListing.skipped.isEmpty)
        #expect(!driveListing.isOffline)
        let frameListing = try await frame.listPosts(as: FramePost.self)
        #expect(frameListing.posts.map(\.metadata) == [FramePost(caption: "sunset", likes: 3)])

        // The station stored only ciphertext: the plaintext is nowhere in the blob or metadata.
        let blob = try #require(rig.emulator.block(published.postCID))
        #expect(blob.range(of: file) == nil)
        #expect(blob.count == file.count + 40)
        #expect(try await drive.download(postCID: published.postCID) == file)
    }

    @Test("Raw JSON metadata, public posts as plaintext, posts without metadata")
    func rawAndPublic() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        _ = try await client.publish(data: Data("a".utf8), metadata: Fixture.drive("a.txt", size: 1))
        _ = try await client.publish(data: Data("b".utf8), metadata: Optional<DriveFileMetadata>.none)
        let open = try await client.publishPermanentlyPublic(data: Data("hello world".utf8), metadata: Fixture.drive("pub.txt", size: 11))
        #expect(open.audienceMode == .public)
        #expect(rig.emulator.block(open.postCID) == Data("hello world".utf8))
        // Public content is read as it is stored, from memory or into a file.
        #expect(try await client.downloadPublic(postCID: open.postCID) == Data("hello world".utf8))
        try await Fixture.withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("pub.txt")
            try await client.downloadPublic(postCID: open.postCID, to: file)
            #expect(try Data(contentsOf: file) == Data("hello world".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["pub.txt"])
            // Bytes that do not match the CID are refused, and no file appears.
            rig.emulator.faults.replaceContent(of: open.postCID, with: Data("hello w0rld".utf8))
            await #expect(throws: StationClientError.self) { _ = try await client.downloadPublic(postCID: open.postCID) }
            let refused = directory.appendingPathComponent("refused.txt")
            let error = await #expect(throws: StationClientError.self) { try await client.downloadPublic(postCID: open.postCID, to: refused) }
            #expect(error?.kind == .integrity)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["pub.txt"])

            let listing = try await client.listPosts(as: JSONValue.self)
            #expect(listing.posts.count == 3)
            #expect(listing.posts[0].rawMetadata?["filename"]?.stringValue == "a.txt")
            #expect(listing.posts[1].rawMetadata == nil)
            #expect(listing.posts[2].isPublic)
            #expect(listing.posts[2].rawMetadata?["filename"]?.stringValue == "pub.txt")
            // A metadata type that does not fit is reported per post, not fatal.
            let typed = try await client.listPosts(as: FramePost.self)
            #expect(typed.skipped.count == 2)
            #expect(typed.posts.count == 1)
        }
    }

    @Test("A listing of 50 skips a corrupted envelope and corrupted metadata, and caches keys")
    func corruptedPostsSkipped() async throws {
        let rig = try StationRig.inProcess()
        let log = LogCollector()
        // Post 7's rewrapped envelope is damaged on its way to the client, so it does not open.
        let tamper = TamperingTransport(base: rig.transport)
        let client = try await rig.pair(log: log.handler, transport: tamper)
        let poster = RawPoster(credentials: await client.credentials, transport: rig.transport)
        var cids: [String] = []
        for index in 0..<50 {
            let metadata = Fixture.drive("f\(index)", size: index)
            guard index == 31 else {
                cids.append(try await client.publish(data: Data("file \(index)".utf8), metadata: metadata).postCID)
                continue
            }
            // Post 31's metadata is sealed under its key and then has a bit flipped, so it does not open.
            cids.append(try await poster.post(file: Data("file 31".utf8), namespace: "drive") { key in
                var sealed = try SecretBox.seal(try #require(try StationClient.encodeMetadata(metadata)), using: key)
                sealed[sealed.count - 1] ^= 1
                return Hex.encode(sealed)
            })
        }
        tamper.corruptRewrap(of: cids[7])
        await client.clearPostKeyCache()
        let rewraps = { rig.count("POST", "/rewrap") }
        let before = rewraps()
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.count == 48)
        #expect(listing.skipped.map(\.postCID) == [cids[7], cids[31]])
        #expect(listing.skipped.map(\.error.kind) == [.integrity, .integrity])
        #expect(listing.posts.map(\.metadata?.filename) == (0..<50).filter { $0 != 7 && $0 != 31 }.map { "f\($0)" })
        #expect(rewraps() - before == 50)
        #expect(log.messages.contains { $0.contains("skipped") && $0.contains(cids[7]) })

        // Warm: cached keys; only the two bad posts are rewrapped again.
        let warm = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(warm.posts.count == 48)
        #expect(rewraps() - before == 52)
        #expect(await client.cachedPostKeyCount == 48)
    }

    @Test("Progress is told in the file's bytes: a 15-byte upload reports 15 of 15, whatever the request around it")
    func progressInTheFilesBytes() async throws {
        let (_, client) = try await StationRig.pairedInProcess()
        let reports = Locked<[ByteProgress]>([])
        let post = try await client.publish(data: Data("fifteen bytes!!".utf8), metadata: Fixture.drive("f", size: 15)) { progress in
            reports.withLock { $0.append(progress) }
        }
        #expect(reports.value.last == ByteProgress(completed: 15, total: 15), "\(reports.value)")
        #expect(reports.value.allSatisfy { $0.completed <= 15 })
        // The scaling itself, for a transfer cut short and one without a known total.
        #expect(FileProgress.fileBytes(of: ByteProgress(completed: 50, total: 100), wireOverhead: 60) == ByteProgress(completed: 20, total: 40))
        #expect(FileProgress.fileBytes(of: ByteProgress(completed: 70, total: nil), wireOverhead: 40) == ByteProgress(completed: 30, total: nil))
        #expect(FileProgress.fileBytes(of: ByteProgress(completed: 10, total: nil), wireOverhead: 40) == ByteProgress(completed: 0, total: nil))
        _ = post
    }

    @Test("A listing is oldest first; newestFirst is a timeline's order, a reshared post moving to its end")
    func listingOrder() async throws {
        let (_, client) = try await StationRig.pairedInProcess()
        var cids: [String] = []
        for name in ["a", "b", "c"] {
            cids.append(try await client.publish(data: Data(name.utf8), metadata: Fixture.drive(name, size: 1)).postCID)
        }
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.map(\.postCID) == cids)
        #expect(listing.newestFirst.map(\.metadata?.filename) == ["c", "b", "a"])
        let reshared = try await client.reshare(postCID: cids[0], audience: .allFollowers)
        let after = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(after.newestFirst.first?.postCID == reshared.post.postCID)
        #expect(after.newestFirst.map(\.metadata?.filename) == ["a", "c", "b"])
    }

    @Test("An unchanged manifest CID is not read again; a new one is")
    func manifestCache() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        _ = try await client.publish(data: Data("1".utf8), metadata: Fixture.drive("1", size: 1))
        let first = try await client.listPosts(as: DriveFileMetadata.self)
        let second = try await client.listPosts(as: DriveFileMetadata.self)
        let cid = try #require(first.manifestCID)
        #expect(second.manifestCID == cid)
        #expect(rig.count("GET", "/content/\(cid)") == 1)
        _ = try await client.publish(data: Data("2".utf8), metadata: Fixture.drive("2", size: 1))
        let third = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(third.manifestCID != cid)
        #expect(third.posts.map(\.metadata?.filename) == ["1", "2"])
    }

    @Test("clearManifestCache drops the manifest: the next listing fetches it again, keeping the post keys")
    func clearingTheManifestCache() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        _ = try await client.publish(data: Data("1".utf8), metadata: Fixture.drive("1", size: 1))
        let first = try await client.listPosts(as: DriveFileMetadata.self)
        let cid = try #require(first.manifestCID)
        let rewraps = rig.count("POST", "/rewrap")
        await client.clearManifestCache()
        #expect(await client.cachedPostKeyCount == 1)
        let second = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(rig.count("GET", "/content/\(cid)") == 2)
        #expect(rig.count("POST", "/rewrap") == rewraps)
        #expect(second.posts.map(\.metadata?.filename) == ["1"])
    }

    @Test("A corrupted blob fails its download with an integrity error and leaves no file")
    func corruptedBlob() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let post = try await client.publish(data: Data(repeating: 7, count: 1000), metadata: Fixture.drive("x", size: 1000))
        var blob = try #require(rig.emulator.block(post.postCID))
        blob[100] ^= 1
        rig.emulator.faults.replaceContent(of: post.postCID, with: blob)
        let error = await #expect(throws: StationClientError.self) { try await client.download(postCID: post.postCID) }
        #expect(error?.kind == .integrity)
        try await Fixture.withTemporaryDirectory { directory in
            let destination = directory.appendingPathComponent("out.bin")
            await #expect(throws: StationClientError.self) { try await client.download(postCID: post.postCID, to: destination) }
            try Fixture.expectEmpty(directory)
        }
    }

    @Test("Publishing a file streams it and downloads to a file with progress")
    func fileRoundTrip() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (client, staging) = try await rig.pair(stagingIn: directory)
            let source = directory.appendingPathComponent("big.bin")
            var rng = SystemRandomNumberGenerator()
            let content = Data((0..<700_000).map { _ in UInt8.random(in: 0...255, using: &rng) })
            try content.write(to: source)
            let uploaded = Locked<[ByteProgress]>([])
            let post = try await client.publish(fileAt: source, metadata: Fixture.drive("big.bin", size: content.count)) { progress in
                uploaded.withLock { $0.append(progress) }
            }
            // Told in the file's bytes (not the multipart request around its ciphertext), rising to all of them.
            #expect(uploaded.value.last == ByteProgress(completed: Int64(content.count), total: Int64(content.count)))
            #expect(uploaded.value.map(\.completed) == uploaded.value.map(\.completed).sorted())
            #expect(uploaded.value.allSatisfy { $0.total == Int64(content.count) })
            try Fixture.expectEmpty(staging)
            let destination = directory.appendingPathComponent("copy.bin")
            let downloaded = Locked<Int64>(0)
            try await client.download(postCID: post.postCID, to: destination) { progress in
                downloaded.withLock { $0 = progress.completed }
            }
            #expect(try Data(contentsOf: destination) == content)
            #expect(downloaded.withLock { $0 } == Int64(content.count), "the file's bytes, not the sealed ones")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["big.bin", "copy.bin", "staging"])
        }
    }

    @Test("A 240-byte file name downloads: temporary names beside it stay within NAME_MAX")
    func longFileNames() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let name = String(repeating: "é", count: 118) + ".bin"  // 240 bytes of UTF-8
            #expect(name.utf8.count == 240)
            let content = Data("long names are fine".utf8)
            let sealed = try await client.publish(data: content, metadata: Fixture.drive(name, size: content.count))
            let open = try await client.publishPermanentlyPublic(data: content, metadata: Fixture.drive(name, size: content.count))

            let destination = directory.appendingPathComponent(name)
            try await client.download(postCID: sealed.postCID, to: destination)
            #expect(try Data(contentsOf: destination) == content)
            try FileManager.default.removeItem(at: destination)
            try await client.downloadPublic(postCID: open.postCID, to: destination)
            #expect(try Data(contentsOf: destination) == content)
            // Through the gateway too (the station's content store is down).
            try FileManager.default.removeItem(at: destination)
            rig.emulator.faults.failNextRequests(.max, status: 503, body: #"{"detail":"content store unavailable"}"#,
                                                 route: RequestRoute("GET", pathPrefix: "/content/"))
            try await client.download(postCID: sealed.postCID, to: destination)
            #expect(try Data(contentsOf: destination) == content)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [name])
        }
    }

    @Test("A download resumes with Range after the connection breaks")
    func resume() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let content = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let post = try await client.publish(data: content, metadata: Fixture.drive("r", size: content.count))
        try await Fixture.withTemporaryDirectory { directory in
            try await rig.expectResumedDownload(of: post, by: client, to: directory.appendingPathComponent("r.bin"),
                                                content: content, cutAfter: [50_000, 120_000])
        }
    }

    @Test("A rewrap refused with result.error is a typed station error carrying the text")
    func rewrapError() async throws {
        let client = try await StationRig.pairedInProcess().client
        let missing = "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX"
        let error = await #expect(throws: StationClientError.self) { try await client.download(postCID: missing) }
        #expect(error?.kind == .notFound)
        #expect(error?.status == 200)
        #expect(error?.stationMessage == "post_cid \(missing) not found")
    }

    @Test("Manifest and content fall back to the gateway, verified against the CID")
    func gatewayFallback() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let post = try await client.publish(data: Data("via gateway".utf8), metadata: Fixture.drive("g", size: 11))
        await client.clearPostKeyCache()
        // The station's content store is down for good; the gateway still answers.
        rig.emulator.faults.failNextRequests(.max, status: 503, body: #"{"detail":"content store unavailable"}"#,
                                             route: RequestRoute("GET", pathPrefix: "/content/"))
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.map(\.metadata?.filename) == ["g"])
        #expect(try await client.download(postCID: post.postCID) == Data("via gateway".utf8))
        #expect(rig.emulator.requests.entries.contains {
            $0.server == .gateway && $0.method == "GET" && $0.path == "/ipfs/\(post.postCID)" && $0.status == 200
        })

        // A gateway that returns other bytes than the CID names is refused.
        rig.emulator.faults.replaceContent(of: post.postCID, with: Data("tampered, and forty bytes long or longer!".utf8))
        let mismatch = await #expect(throws: StationClientError.self) { try await client.download(postCID: post.postCID) }
        #expect(mismatch?.kind == .integrity)
        let gateway = try #require(client.configuration.gateway)
        let missing = await #expect(throws: StationClientError.self) {
            try await gateway.fetch(cid: "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX")
        }
        #expect(missing?.status == 404)
        let invalid = await #expect(throws: StationClientError.self) { try await gateway.fetch(cid: "not-a-cid") }
        #expect(invalid?.kind == .invalidResponse)
    }

    @Test("A too-large file is refused before anything is sent; the largest size fills the request exactly")
    func sizeLimit() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let metadata = Fixture.drive("huge.bin", size: 0)
        let largest = try client.largestPublishableFileSize(metadata: metadata)
        try await Fixture.withTemporaryDirectory { directory in
            let huge = directory.appendingPathComponent("huge.bin")
            #expect(FileManager.default.createFile(atPath: huge.path, contents: nil))
            let handle = try FileHandle(forWritingTo: huge)
            try handle.truncate(atOffset: UInt64(largest + 1))
            try handle.close()
            let error = await #expect(throws: StationClientError.self) { try await client.publish(fileAt: huge, metadata: metadata) }
            #expect(error?.kind == .tooLarge)
            #expect(error?.limit == largest)
            #expect(rig.count("POST", "/post") == 0)

            let prepared = try await client.preparePost(data: Data(count: Int(largest)), metadata: metadata)
            #expect(prepared.requestByteCount == StationClient.maximumRequestByteCount)
            // A file of exactly that size, whatever its name, fills the request exactly too.
            let exact = directory.appendingPathComponent("a much longer file name than blob.bin.dat")
            #expect(FileManager.default.createFile(atPath: exact.path, contents: nil))
            let exactHandle = try FileHandle(forWritingTo: exact)
            try exactHandle.truncate(atOffset: UInt64(largest))
            try exactHandle.close()
            let metadataJSON = try StationClient.encodeMetadata(metadata)
            let fromFile = try await client.prepare(PostDraft(content: .file(exact), metadataJSON: metadataJSON, namespace: "drive",
                                                              audience: .selfOnly))
            #expect(fromFile.requestByteCount == StationClient.maximumRequestByteCount)
        }
    }

    @Test("A publish whose answer is lost is found in the manifest, never posted twice")
    func lostAnswer() async throws {
        let log = LogCollector()
        let (rig, client) = try await StationRig.pairedInProcess(log: log.handler)
        let post = RequestRoute("POST", path: "/post")
        rig.emulator.faults.closeNextResponsesMidBody(1, route: post)
        let published = try await client.publish(data: Data("once".utf8), metadata: Fixture.drive("once", size: 4))
        #expect(published.wasRecovered)
        #expect(rig.emulator.requests.count(post) == 1)
        #expect(rig.emulator.manifest.posts(in: "drive").map(\.postCID) == [published.postCID])

        // A prepared post resubmitted after success is recognised too (same CID, no second post).
        let prepared = try await client.preparePost(data: Data("twice?".utf8), metadata: Fixture.drive("t", size: 6))
        rig.emulator.faults.closeNextResponsesMidBody(1, route: post)
        let first = try await client.submit(prepared)
        #expect(first.postCID == prepared.postCID)
        #expect(rig.emulator.manifest.posts(in: "drive").count == 2)
    }

    @Test("Signing covers the exact multipart bytes: the station verifies every upload")
    func station401sAreTyped() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        // A refused post (unknown audience uid) is a typed station error carrying the detail text.
        let error = await #expect(throws: StationClientError.self) {
            try await client.publish(data: Data("x".utf8), metadata: Fixture.drive("x", size: 1), audience: .specific(["nobody"]))
        }
        #expect(error?.status == 400)
        #expect(error?.stationMessage?.contains("not Allowed followers") == true)
        #expect(rig.count("POST", "/post") == 1)
    }
}


@Suite("Rewrap request body")
struct RewrapBodyTests {
    /// The body is the station's compact JSON with its four keys in the order the guide sends them,
    /// and `null` for a post without an envelope set.
    @Test(arguments: [
        ("QmEnvelopes", #"{"uid":"station-uid","device_uid":"phone-1234","post_cid":"QmPost","envelopes_cid":"QmEnvelopes"}"#),
        (nil, #"{"uid":"station-uid","device_uid":"phone-1234","post_cid":"QmPost","envelopes_cid":null}"#),
    ] as [(String?, String)])
    func keysInOrderAndNullForNoEnvelopes(envelopesCID: String?, expected: String) {
        let built = StationClient.rewrapBody(uid: "station-uid", deviceUID: "phone-1234", postCID: "QmPost",
                                             envelopesCID: envelopesCID)
        #expect(String(decoding: built, as: UTF8.self) == expected)
    }
}

@Suite("Another station's profile")
struct PublicProfileTests {
    /// A device reads a station's public profile without pairing (to follow it), and an
    /// unreachable station is a typed error.
    @Test func profileWithoutPairing() async throws {
        let rig = try StationRig.served()
        let profile = try await StationConnection.read(.profile, at: StationOrigin(url: rig.station, pins: []), transport: rig.transport)
        #expect(profile.uid == rig.emulator.uid)
        #expect(profile.mlkemPublicKey == rig.emulator.mlkemPublicKeyHex)
        // Once the station stops serving, its port refuses connections.
        rig.emulator.stop()
        let error = await #expect(throws: StationClientError.self) {
            _ = try await StationConnection.read(.profile, at: StationOrigin(url: rig.station, pins: []), transport: rig.transport)
        }
        #expect(error?.kind == .unreachable)
    }
}
