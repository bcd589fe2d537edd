import Envelope
import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport
import TransportTestSupport
import ContentAddressing

/// Forwards to another transport and records, per path, the in-memory limit each request was sent with.
struct LimitRecordingTransport: WrappingTransport {
    let base: any HTTPTransport
    let limits = Locked<[(path: String, limit: Int)]>([])

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        if case let .memory(limit) = options.response { limits.withLock { $0.append((request.url.path, limit)) } }
        return try await base.send(request, body: body, options: options)
    }

    func limits(for path: String) -> [Int] { limits.withLock { $0.filter { $0.path == path }.map(\.limit) } }
}

/// Answers requests on one path prefix with `chunkCount` chunks of 64 KiB of junk (a body far
/// longer than the file it stands for), honouring the destination a caller asked for, and
/// counts the chunks pulled; everything else goes to `base`. A request for a raw block
/// (`?format=raw`) goes to `base` too, or with `servesBlocks` off gets a 404, as from a gateway
/// that serves files only.
final class OversizedBodyTransport: WrappingTransport, @unchecked Sendable {
    let base: any HTTPTransport
    let pathPrefix: String
    let chunkCount: Int
    let servesBlocks: Bool
    let pulled = Locked(0)

    init(base: any HTTPTransport, pathPrefix: String, chunkCount: Int, servesBlocks: Bool = true) {
        self.base = base
        self.pathPrefix = pathPrefix
        self.chunkCount = chunkCount
        self.servesBlocks = servesBlocks
    }

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        if request.url.query?.contains("format=raw") == true, !servesBlocks { return HTTPResponse(status: 404) }
        guard request.url.path.hasPrefix(pathPrefix), request.url.query == nil else {
            return try await base.send(request, body: body, options: options)
        }
        let chunk = Data(repeating: 0x5A, count: 64 * 1024)
        let pulled = self.pulled
        let count = chunkCount
        let stream = HTTPBodyStream(length: nil) {
            pulled.withLock { value -> Data? in
                guard value < count else { return nil }
                value += 1
                return chunk
            }
        }
        switch options.response {
        case .stream:
            return HTTPResponse(status: 200, body: .stream(stream))
        case .file(let url):
            // As a transport writing to a file would: every byte, unbounded.
            try Data().write(to: url)
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            var written: Int64 = 0
            for try await piece in stream {
                try handle.write(contentsOf: piece)
                written += Int64(piece.count)
            }
            return HTTPResponse(status: 200, body: .file(url, byteCount: written))
        case .memory(let limit):
            return HTTPResponse(status: 200, body: .data(try await stream.collect(upTo: limit)))
        }
    }
}

@Suite("Response and download limits against a hostile station or gateway")
struct ResponseLimitTests {
    /// A hostile station answered each `/rewrap` with 100 MiB and a 16-post listing peaked at
    /// 2.38 GB. Every answer is now collected only up to what its endpoint can return, and an
    /// oversized `/rewrap` answer fails its own post (skipped, reported) and nothing else.
    @Test func aHugeRewrapAnswerFailsOnlyItsPostAndIsNotCollected() async throws {
        let rig = try StationRig.inProcess()
        let recorder = LimitRecordingTransport(base: rig.transport)
        let client = try await rig.pair(transport: recorder)
        for index in 0..<3 {
            _ = try await client.publish(data: Data("post \(index)".utf8), metadata: Fixture.drive("f\(index).txt", size: 6))
        }
        await client.clearPostKeyCache()
        rig.emulator.faults.failNextRequests(1, status: 200, body: String(repeating: "x", count: 1 << 20),
                                             route: RequestRoute("POST", path: "/rewrap"))
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.count == 2)
        let skipped = try #require(listing.skipped.first)
        #expect(listing.skipped.count == 1)
        #expect(skipped.error.kind == .invalidResponse)
        #expect(skipped.error.transportError?.kind == .responseTooLarge, "\(skipped.error)")
        #expect(skipped.error.transportError?.kind.limit == ResponseLimit.rewrap)

        // The limits the listing's calls were made with: a /rewrap answer holds one 2,324-hex
        // envelope, so a few KB; the profile and the manifest their own sizes.
        let rewraps = recorder.limits(for: "/rewrap")
        #expect(rewraps.count == 3 && rewraps.allSatisfy { $0 == ResponseLimit.rewrap })
        #expect(ResponseLimit.rewrap > Envelope.hexCount && ResponseLimit.rewrap <= 32 * 1024)
        #expect(recorder.limits(for: "/profile").allSatisfy { $0 <= 1 << 20 })
        let manifestCID = try #require(listing.manifestCID)
        #expect(recorder.limits(for: "/content/\(manifestCID)") == [ResponseLimit.manifest(maximumPosts: 10_000)])
        #expect(recorder.limits.withLock { $0 }.allSatisfy { $0.limit < TransferOptions.defaultMemoryLimit })
        // However many rewraps may run at once, the answers in flight fit the listing's budget.
        for concurrency in [1, 8, 64, 1_000] {
            let width = ResponseLimit.listingWidth(rewrapConcurrency: concurrency, entryCount: 10_000)
            #expect(width >= 1 && width <= concurrency && width * ResponseLimit.rewrap <= ResponseLimit.listingInFlight)
        }
    }

    /// Followers, the manifest and the small answers have limits of their own; past one, the call
    /// fails with a typed error instead of reading on.
    @Test func oversizedAnswersOfOtherEndpointsAreTypedErrors() async throws {
        let rig = try StationRig.inProcess()
        let recorder = LimitRecordingTransport(base: rig.transport)
        let client = try await rig.pair(transport: recorder)
        _ = try await client.followers()
        #expect(recorder.limits(for: "/followers") == [ResponseLimit.followers])
        rig.emulator.faults.failNextRequests(1, status: 200, body: String(repeating: " ", count: ResponseLimit.followers + 1),
                                             route: RequestRoute("GET", path: "/followers"))
        let error = await #expect(throws: StationClientError.self) { try await client.followers() }
        #expect(error?.kind == .invalidResponse && error?.transportError?.kind == .responseTooLarge)
        #expect(error?.transportError?.kind.limit == ResponseLimit.followers)
    }

    /// A station content download streamed with only an idle limit. Knowing the file's size (its
    /// metadata's `size_bytes` plus the SecretBox overhead), no more is written: a 4 MiB answer
    /// for a 1 KiB file, from the station and then the gateway, fails after one chunk of each,
    /// and nothing is left on disk.
    @Test func aDownloadStopsAtTheFilesKnownSize() async throws {
        let rig = try StationRig.inProcess()
        let content = Data((0..<1024).map { UInt8(truncatingIfNeeded: $0) })
        let owner = try await rig.pair()
        let post = try await owner.publish(data: content, metadata: Fixture.drive("small.bin", size: content.count))

        let hostileStation = OversizedBodyTransport(base: rig.transport, pathPrefix: "/content/", chunkCount: 64)
        let hostileGateway = OversizedBodyTransport(base: rig.transport, pathPrefix: "/ipfs/", chunkCount: 64)
        let stationLog = rig.emulator.log
        let client = try await StationClient.pair(
            endpoint: rig.station, deviceName: "reader",
            configuration: StationClientConfiguration(
                namespace: "drive", keyStore: InMemoryKeyStore(), transport: hostileStation,
                gateway: IPFSGateway(baseURL: rig.gateway, transport: hostileGateway))
        ) { _ in stationLog.latestPIN }
        // Pairing read the station's IPNS record (its public.json came through the gateway too).
        let pulledWhilePairing = hostileGateway.pulled.value
        try await Fixture.withTemporaryDirectory { directory in
            let error = await #expect(throws: StationClientError.self) {
                try await client.download(postCID: post.postCID, envelopesCID: post.envelopesCID,
                                          to: directory.appendingPathComponent("small.bin"), plaintextSize: Int64(content.count))
            }
            #expect(error?.kind == .invalidResponse)
            #expect(error?.description.contains("the gateway sent more than the \(content.count + 40) bytes") == true,
                    "\(error?.description ?? "")")
            #expect(hostileStation.pulled.value == 1 && hostileGateway.pulled.value - pulledWhilePairing == 1)
            try Fixture.expectEmpty(directory)
        }
    }

    /// An endless body from the gateway wrote 2.24 GB in 6 s. A gateway read first learns the
    /// file's size from its root block (`?format=raw`, verified against the CID) and writes no
    /// more than that.
    @Test func aGatewayReadStopsAtTheSizeItsRootBlockRecords() async throws {
        let (rig, owner) = try await StationRig.pairedInProcess()
        let post = try await owner.publish(data: Data("tiny".utf8), metadata: Fixture.drive("tiny.txt", size: 4))
        let endless = OversizedBodyTransport(base: rig.transport, pathPrefix: "/ipfs/", chunkCount: 3_200)
        let gateway = IPFSGateway(baseURL: rig.gateway, transport: endless)
        let sealedSize = try #require(rig.emulator.block(post.postCID)).count
        #expect(await gateway.rootFileSize(of: try CID(post.postCID)) == Int64(sealedSize))
        try await Fixture.withTemporaryDirectory { directory in
            let error = await #expect(throws: StationClientError.self) {
                try await gateway.fetch(cid: post.postCID, to: directory.appendingPathComponent("tiny.txt"))
            }
            #expect(error?.description.contains("the gateway sent more than the \(sealedSize) bytes") == true, "\(error?.description ?? "")")
            #expect(endless.pulled.value == 1)
            try Fixture.expectEmpty(directory)
            // The verified file itself still fetches.
            try await IPFSGateway(baseURL: rig.gateway, transport: rig.transport).fetch(cid: post.postCID, to: directory.appendingPathComponent("ok"))
            #expect(try Data(contentsOf: directory.appendingPathComponent("ok")) == rig.emulator.block(post.postCID))
        }
    }

    /// With nothing known about the file (a gateway that serves no blocks), a gateway read stops
    /// at the station's 100 MiB upload limit, which no stored file exceeds, and removes what it
    /// wrote. (The body here ends at 200 MiB, so the test ends before the fix too.)
    @Test func anEndlessGatewayBodyStopsAtTheUploadLimit() async throws {
        let (rig, owner) = try await StationRig.pairedInProcess()
        let post = try await owner.publish(data: Data("tiny".utf8), metadata: Fixture.drive("tiny.txt", size: 4))
        let endless = OversizedBodyTransport(base: rig.transport, pathPrefix: "/ipfs/", chunkCount: 3_200, servesBlocks: false)
        let gateway = IPFSGateway(baseURL: rig.gateway, transport: endless)
        try await Fixture.withTemporaryDirectory { directory in
            let error = await #expect(throws: StationClientError.self) {
                try await gateway.fetch(cid: post.postCID, to: directory.appendingPathComponent("tiny.txt"))
            }
            #expect(error?.kind == .invalidResponse, "\(error?.description ?? "")")
            #expect(endless.pulled.value == 104_857_600 / 65_536 + 1)
            try Fixture.expectEmpty(directory)
        }
    }
}
