import Foundation
import Manifest
import Signing
import ClassicalCrypto
import PQCrypto
@testable import StationClient
import StationEmulator
import Testing
import Transport

@Suite("Clock, replay, endpoint mobility, offline, cancellation")
struct ResilienceTests {
    @Test("A stale-request answer is retried once with the clock offset from the Date header")
    func staleClock() async throws {
        let log = LogCollector()
        let (rig, client) = try await StationRig.pairedInProcess(log: log.handler)
        rig.clock.skew(by: 600)
        #expect(try await client.followers().isEmpty)
        // About 600 s: the station's clock is read a moment before the client's, and on a busy
        // machine that moment can be seconds; what must hold exactly is checked below (later calls
        // need no second attempt).
        let offset = await client.clockOffset
        #expect((540...660).contains(offset))
        #expect(log.messages.contains { $0.contains("stale") })
        // Later calls sign with the offset from the start.
        let before = rig.emulator.requests.entries.count
        _ = try await client.followers()
        #expect(rig.emulator.requests.entries.count - before == 1)
    }

    @Test("signedHeaders signs an app's own request as this device, with the learned clock offset; another path is refused")
    func signedHeadersForAnAppsOwnRequest() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        rig.clock.skew(by: 600)
        _ = try await client.followers()  // learns the offset from the stale-request answer
        func send(_ path: String, signedFor signedPath: String) async throws -> Int {
            let headers = try await client.signedHeaders(method: "GET", path: signedPath, body: Data())
            var request = HTTPRequest(method: .get, url: rig.station.appendingPathComponent(String(path.dropFirst())))
            for (name, value) in headers.fields { request.headers.add(name, value: value) }
            return try await rig.transport.send(request).status
        }
        // Without the offset the station (600 s ahead) would answer 401 stale request.
        #expect(try await send("/followers", signedFor: "/followers") == 200)
        #expect(try await send("/followers", signedFor: "/following") == 401)
        let headers = try await client.signedHeaders(method: "GET", path: "/followers", body: Data())
        #expect(headers.device == (await client.credentials.deviceUID))
        #expect(headers.bodySHA256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        await #expect(throws: StationClientError.self) {
            _ = try await client.signedHeaders(method: "GET", path: "/a\nb", body: Data())
        }
    }

    @Test("The HTTP Date header parses to Unix seconds")
    func httpDate() {
        #expect(StationConnection.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(StationConnection.parseHTTPDate("yesterday") == nil)
    }

    @Test("A replayed signed request is rejected by the station with a typed 401")
    func replay() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let context = client.connection.signingContext()
        let recorder = RecordingTransport(base: rig.transport)
        let followers = StationCall.signed(.get, "/followers", options: TransferOptions(),
                                              timeouts: TransferTimeouts(idle: nil, total: nil), operation: "test")
        let first = try await StationConnection.exchange(followers, at: StationOrigin(url: rig.station, pins: []), signing: context,
                                                         transport: recorder)
        #expect(first.status == 200)
        let request = try #require(recorder.requests.withLock { $0.first })
        try await rig.expectReplayRefused(request)
    }

    @Test("A station that moved is found again through IPNS, verified, stored and used")
    func moved() async throws {
        let rig = try StationRig.served()
        defer { rig.emulator.stop() }
        let store = InMemoryKeyStore()
        let log = LogCollector()
        let client = try await rig.pair(keyStore: store, log: log.handler)
        _ = try await client.publish(data: Data("x".utf8), metadata: Fixture.drive("x", size: 1))
        // Pairing read the record once, for the rollback floor.
        let lookups = rig.emulator.requests.count(RequestRoute("GET", pathPrefix: "/ipns/"))
        let moved = try rig.emulator.moveStation()
        let movedHost = try #require(moved.host)
        let movedPort = try #require(moved.port)

        // Concurrent failures share one resolution.
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try await client.listPosts(as: DriveFileMetadata.self).posts.count } }
            for try await count in group { #expect(count == 1) }
        }
        #expect(await client.credentials.endpoint == moved)
        #expect(rig.emulator.requests.count(RequestRoute("GET", pathPrefix: "/ipns/")) - lookups == 1)
        #expect(rig.emulator.requests.entries.contains {
            $0.server == .station && $0.method == "GET" && $0.path == "/health" && $0.host == "\(movedHost):\(movedPort)"
        })
        // The new endpoint was persisted.
        let reloaded = try await StationClient.load(configuration: rig.configuration(keyStore: store))
        #expect(await reloaded.credentials.endpoint == moved)
        #expect(log.messages.contains { $0.contains("moved to \(moved.absoluteString)") })
    }

    @Test("A tunnel's 502 triggers one resolution and one retry, never a loop")
    func tunnelError() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let followers = RequestRoute("GET", path: "/followers")
        // Counted from here: pairing read the record once, for the rollback floor.
        let atPairing = rig.emulator.requests.count(RequestRoute("GET", pathPrefix: "/ipns/"))
        let resolutions = { rig.emulator.requests.count(RequestRoute("GET", pathPrefix: "/ipns/")) - atPairing }
        rig.emulator.faults.failNextRequests(1, status: 502, body: "Bad Gateway", route: followers)
        #expect(try await client.followers().isEmpty)
        #expect(resolutions() == 1)
        // Two tunnel errors in a row: the retry fails and is reported, without a second resolution.
        rig.emulator.faults.failNextRequests(2, status: 502, body: "Bad Gateway", route: followers)
        let before = resolutions()
        let error = await #expect(throws: StationClientError.self) { try await client.followers() }
        #expect(error?.kind == .unreachable)
        #expect(error?.status == 502)
        #expect(resolutions() == before + 1)
        #expect(rig.emulator.faults.pendingFaultCount == 0)
    }

    @Test("Station down: the listing returns the last decrypted metadata, marked offline")
    func offline() async throws {
        let rig = try StationRig.served()
        let store = InMemoryKeyStore()
        let cache = InMemoryCacheStore()
        let client = try await rig.pair(keyStore: store, cacheStore: cache)
        _ = try await client.publish(data: Data("a".utf8), metadata: Fixture.drive("kept.txt", size: 1))
        let online = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(!online.isOffline)
        let offline = try await rig.offlineListing(of: client)
        #expect(offline.posts.map(\.metadata?.filename) == ["kept.txt"])
        #expect(offline.manifestCID == online.manifestCID)
        // A fresh client on the same stores (app restart) also gets the offline view, from the cache store.
        #expect(await cache.names == [CacheItem.offlineListing(station: client.credentials.stationUID, namespace: "drive")])
        #expect(await store.load(KeyStoreItem.legacyOfflineListing(namespace: "drive")) == nil)
        let restarted = try await StationClient.load(configuration: rig.configuration(keyStore: store, cacheStore: cache))
        #expect(try await restarted.listPosts(as: DriveFileMetadata.self).posts.count == 1)
        // With nothing cached, being offline is an error.
        let empty = try await StationClient(credentials: await client.credentials, configuration: rig.configuration())
        let error = await #expect(throws: StationClientError.self) { try await empty.listPosts(as: DriveFileMetadata.self) }
        #expect(error?.kind == .unreachable)
    }

    @Test("Caches are kept per station: a device paired with another station on the same stores reads none of the first one's")
    func cachesAreKeptPerStation() async throws {
        let stationA = try StationRig.served(), stationB = try StationRig.served(), stationC = try StationRig.served()
        defer { stationA.emulator.stop(); stationB.emulator.stop() }
        let cache = InMemoryCacheStore()
        let first = try await stationA.pair(keyStore: InMemoryKeyStore(), persistsPostKeys: true, cacheStore: cache)
        let postA = try await first.publish(data: Data("a".utf8), metadata: Fixture.drive("station-a.txt", size: 1))
        _ = try await first.listPosts(as: DriveFileMetadata.self)
        let stationAItems = await cache.names
        #expect(stationAItems.count == 2, "\(stationAItems)")
        #expect(stationAItems.allSatisfy { $0.contains(stationA.emulator.uid) }, "\(stationAItems)")
        // As an earlier version kept them, named without the station: station A's listing and keys.
        let legacyListing = "offline-listing-drive"
        for name in stationAItems {
            let legacy = name.hasPrefix("offline-listing") ? legacyListing : CacheItem.postKeys
            await cache.save(try #require(await cache.load(name)), as: legacy)
        }

        // The same stores, paired with station C (as `cipher pair --replace` does), which goes down:
        // no offline listing of station A is shown as C's.
        let third = try await stationC.pair(keyStore: InMemoryKeyStore(), persistsPostKeys: true, cacheStore: cache)
        stationC.emulator.stop()
        let error = await #expect(throws: StationClientError.self) { try await third.listPosts(as: DriveFileMetadata.self) }
        #expect(error?.kind == .unreachable)

        // Paired with station B, which is up: none of station A's post keys is loaded, and the
        // items named without the station are removed.
        let second = try await stationB.pair(keyStore: InMemoryKeyStore(), persistsPostKeys: true, cacheStore: cache)
        _ = try await second.publish(data: Data("b".utf8), metadata: Fixture.drive("station-b.txt", size: 1))
        let listed = try await second.listPosts(as: DriveFileMetadata.self)
        #expect(listed.posts.map(\.metadata?.filename) == ["station-b.txt"] && !listed.isOffline)
        #expect(await second.postKeys.key(for: postA.postCID) == nil)
        #expect(await second.cachedPostKeyCount == 1)
        let names = await cache.names
        #expect(!names.contains(legacyListing) && !names.contains(CacheItem.postKeys), "\(names)")
        #expect(stationAItems.allSatisfy(names.contains), "station A's own items stay for its device")
    }

    @Test("clearOfflineListingCache drops the in-memory offline view; a persisted copy still serves it")
    func clearedOfflineListing() async throws {
        let rig = try StationRig.served()
        let cache = InMemoryCacheStore()
        let client = try await rig.pair(cacheStore: cache)
        _ = try await client.publish(data: Data("a".utf8), metadata: Fixture.drive("kept.txt", size: 1))
        let online = try await client.listPosts(as: DriveFileMetadata.self)
        let item = CacheItem.offlineListing(station: await client.credentials.stationUID, namespace: "drive")
        let persisted = try #require(await cache.load(item))
        await cache.delete(item)
        rig.emulator.stop()

        // With the store's copy gone, the in-memory copy alone serves the offline view.
        let fromMemory = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(fromMemory.isOffline)
        #expect(fromMemory.posts.map(\.metadata?.filename) == ["kept.txt"])

        // Cleared, nothing is left to show.
        await client.clearOfflineListingCache()
        let error = await #expect(throws: StationClientError.self) { try await client.listPosts(as: DriveFileMetadata.self) }
        #expect(error?.kind == .unreachable)

        // A persisted copy (as `persistsOfflineListing` keeps) still serves it after the clear.
        await cache.save(persisted, as: item)
        let fromStore = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(fromStore.isOffline)
        #expect(fromStore.posts.map(\.metadata?.filename) == ["kept.txt"])
        #expect(fromStore.manifestCID == online.manifestCID)
    }

    @Test("Post keys persist in the cache store (not the key store) and spare the rewraps after a restart")
    func persistedKeys() async throws {
        let rig = try StationRig.inProcess()
        let store = InMemoryKeyStore()
        let cache = InMemoryCacheStore()
        let client = try await rig.pair(keyStore: store, persistsPostKeys: true, cacheStore: cache)
        _ = try await client.publish(data: Data("a".utf8), metadata: Fixture.drive("a", size: 1))
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(await cache.load(CacheItem.postKeyChanges(1, station: rig.emulator.uid)) != nil)
        #expect(await store.load(KeyStoreItem.legacyPostKeys) == nil)
        let before = rig.count("POST", "/rewrap")
        let restarted = try await StationClient.load(configuration: rig.configuration(
            keyStore: store, persistsPostKeys: true, cacheStore: cache))
        #expect(try await restarted.listPosts(as: DriveFileMetadata.self).posts.count == 1)
        #expect(rig.count("POST", "/rewrap") == before)
    }

    @Test("A cancelled download leaves no partial file")
    func cancelledDownload() async throws {
        let client = try await StationRig.pairedInProcess().client
        let post = try await client.publish(data: Data(count: 300_000), metadata: Fixture.drive("z", size: 300_000))
        try await Fixture.withTemporaryDirectory { directory in
            let destination = directory.appendingPathComponent("z.bin")
            let task = Task { try await client.download(postCID: post.postCID, to: destination) }
            task.cancel()
            await #expect(throws: (any Error).self) { try await task.value }
            try Fixture.expectEmpty(directory)
        }
    }

    @Test("A cancelled publish sends nothing and leaves no temporary file")
    func cancelledPublish() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (client, staging) = try await rig.pair(stagingIn: directory)
            let source = directory.appendingPathComponent("c.bin")
            try Data(count: 100_000).write(to: source)
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.publish(fileAt: source, metadata: Fixture.drive("c", size: 100_000))
            }
            let error = await #expect(throws: StationClientError.self) { try await task.value }
            #expect(error?.kind == .cancelled)
            #expect(rig.count("POST", "/post") == 0)
            try Fixture.expectEmpty(staging)
        }
    }

    /// Where a test cancels a publish: at the start of each of its stages, or while the station's
    /// transport holds the request.
    enum PublishCancellationPoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sealing, hashing, waitingToSend, sending
        var testDescription: String { rawValue }
    }

    @Test("A file publish cancelled at any stage has nothing in the temporary directory, then or after", arguments: PublishCancellationPoint.allCases)
    func publishCancelledAtEachStage(at point: PublishCancellationPoint) async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (paired, staging) = try await rig.pair(stagingIn: directory)
            let holding = HoldingPostTransport(base: rig.transport)
            // What the staging directory held when the publish was cancelled.
            let stagedWhenCancelled = Locked<[String]?>(nil)
            let staged = { @Sendable in (try? FileManager.default.contentsOfDirectory(atPath: staging.path)) ?? [] }
            let stage = PublishStage(rawValue: point.rawValue)
            let client = try await rig.client(for: paired) { configuration in
                configuration.temporaryDirectory = staging
                configuration.transport = holding
                configuration.publishStageObserver = { entered in
                    // Cancels the publish's own task as it enters the stage: no timing involved.
                    guard entered == stage else { return }
                    stagedWhenCancelled.withLock { $0 = staged() }
                    withUnsafeCurrentTask { $0?.cancel() }
                }
            }
            let source = directory.appendingPathComponent("c.bin")
            try Data(count: 300_000).write(to: source)
            // A progress handler, as the CLI passes: the transport keeps it after the call.
            let task = Task {
                try await client.publish(fileAt: source, metadata: Fixture.drive("c", size: 300_000), progress: { _ in })
            }
            if point == .sending {
                var arrivals = holding.arrivals.makeAsyncIterator()
                _ = await arrivals.next()
                stagedWhenCancelled.withLock { $0 = staged() }
                task.cancel()
            }
            let error = await #expect(throws: StationClientError.self) { try await task.value }
            #expect(error?.kind == .cancelled)
            // Nothing of the publish was on disk when it was cancelled, nor is after.
            #expect(try #require(stagedWhenCancelled.value).isEmpty)
            #expect(staged().isEmpty, "\(staged())")
            // Nothing reached the station; the held request's options are still kept by the transport.
            #expect(rig.count("POST", "/post") == 0)
            #expect(holding.kept.value.count == (point == .sending ? 1 : 0))
        }
    }

    @Test("Log lines never carry secret key material")
    func logsHaveNoSecrets() async throws {
        let log = LogCollector()
        let (rig, client) = try await StationRig.pairedInProcess(log: log.handler)
        rig.clock.skew(by: -300)
        _ = try await client.publish(data: Data("s".utf8), metadata: Fixture.drive("s", size: 1))
        let credentials = await client.credentials
        let secrets = [try credentials.pureKEMKey.expandedRepresentation, try credentials.pureSigningKey.expandedRepresentation]
            .map { Hex.encode($0).prefix(64) }
        #expect(!log.messages.isEmpty)
        for message in log.messages {
            for secret in secrets { #expect(!message.contains(secret)) }
        }
    }
}
