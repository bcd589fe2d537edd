import Foundation
import Manifest
@testable import StationClient
import Testing
import Transport

/// A listing sends its `/rewrap` calls in batches (`HTTPTransport.send(batch:options:)`); a call
/// that fails inside a batch is made again alone, where the clock-offset retry and endpoint
/// mobility apply.
@Suite("Listing: batched rewraps")
struct BatchedRewrapTests {
    /// Passes everything to a `FakeTransport`, except that the first batch's answers may be
    /// replaced by `fault` (per request; `nil` keeps the real answer). Counts batches and lone
    /// `/rewrap` calls.
    final class BatchFaultTransport: HTTPTransport {
        let base: FakeTransport
        let fault: @Sendable (Int, HTTPBatchRequest) -> Result<HTTPResponse, any Error>?
        let batchSizes = Locked<[Int]>([])
        let loneRewraps = Locked(0)

        init(station: FakeStation, fault: @escaping @Sendable (Int, HTTPBatchRequest) -> Result<HTTPResponse, any Error>? = { _, _ in nil }) {
            base = FakeTransport(station: station)
            self.fault = fault
        }

        func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
            if request.url.path == "/rewrap" { loneRewraps.withLock { $0 += 1 } }
            return try await base.send(request, body: body, options: options)
        }

        func send(batch: [HTTPBatchRequest], options: TransferOptions) async -> [Result<HTTPResponse, any Error>] {
            let first = batchSizes.withLock { sizes in
                sizes.append(batch.count)
                return sizes.count == 1
            }
            var outcomes: [Result<HTTPResponse, any Error>] = []
            for (index, item) in batch.enumerated() {
                if first, let replaced = fault(index, item) {
                    outcomes.append(replaced)
                } else {
                    do {
                        outcomes.append(.success(try await base.send(item.request, body: item.requestBody, options: options)))
                    } catch {
                        outcomes.append(.failure(error))
                    }
                }
            }
            return outcomes
        }
    }

    /// A paired client over `transport` reading `posts` posts, two workers with batches of four.
    private func client(_ station: FakeStation, transport: BatchFaultTransport, posts: Int) async throws -> StationClient {
        let configuration = StationClientConfiguration(
            namespace: "drive", keyStore: InMemoryKeyStore(), transport: transport, rewrapConcurrency: 2, rewrapBatchSize: 4)
        let pin = await station.pin
        let client = try await StationClient.pair(endpoint: await station.endpoint, deviceName: "Batch", configuration: configuration,
                                                  pin: { _ in pin })
        for index in 0..<posts {
            _ = try await client.publish(data: Data("post \(index)".utf8), metadata: Fixture.drive("f\(index).txt", size: 6))
        }
        return client
    }

    /// The transport failure `kind` for a request of the batch.
    private static func failure(_ kind: TransportError.Kind, _ item: HTTPBatchRequest) -> Result<HTTPResponse, any Error> {
        .failure(TransportError(kind, method: item.request.method, url: item.request.url, message: "\(kind)"))
    }

    private func names(_ listing: PostListing<DriveFileMetadata>) -> [String] {
        listing.posts.compactMap { $0.metadata?.filename }
    }

    @Test("Rewraps go out in batches of the configured size, none alone")
    func batches() async throws {
        let station = FakeStation()
        let transport = BatchFaultTransport(station: station)
        let client = try await client(station, transport: transport, posts: 12)
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(names(listing) == (0..<12).map { "f\($0).txt" })
        #expect(listing.skipped.isEmpty)
        #expect(transport.batchSizes.value == [4, 4, 4])
        #expect(transport.loneRewraps.value == 0)
        // Cached now: a second listing sends nothing.
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(transport.batchSizes.value.count == 3)
    }

    @Test("Calls of a batch whose connection was lost are made again one by one")
    func lostConnection() async throws {
        let station = FakeStation()
        let transport = BatchFaultTransport(station: station) { _, item in Self.failure(.connectionLost, item) }
        let client = try await client(station, transport: transport, posts: 8)
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(names(listing) == (0..<8).map { "f\($0).txt" })
        #expect(listing.skipped.isEmpty)
        #expect(transport.loneRewraps.value == 4)
    }

    @Test("A stale-request answer or a tunnel's 5xx inside a batch sends that call again alone")
    func staleAndTunnel() async throws {
        let station = FakeStation()
        let transport = BatchFaultTransport(station: station) { index, _ in
            switch index {
            case 0:
                .success(HTTPResponse(status: 401, headers: ["Date": "Sun, 06 Nov 1994 08:49:37 GMT"],
                                      body: .data(Data(#"{"detail":"stale request"}"#.utf8))))
            case 2: .success(HTTPResponse(status: 502, body: .data(Data("Bad Gateway".utf8))))
            default: nil
            }
        }
        let client = try await client(station, transport: transport, posts: 8)
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(names(listing) == (0..<8).map { "f\($0).txt" })
        #expect(transport.batchSizes.value.first == 4)
        #expect(transport.loneRewraps.value == 2)
    }

    @Test("A broken answer in a batch skips that post only, without a retry")
    func brokenAnswer() async throws {
        let station = FakeStation()
        let transport = BatchFaultTransport(station: station) { index, _ in
            index == 1 ? .success(HTTPResponse(status: 200, body: .data(Data("not json".utf8)))) : nil
        }
        let client = try await client(station, transport: transport, posts: 4)
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.count == 3)
        #expect(listing.skipped.count == 1)
        #expect(listing.skipped.first?.error.kind == .invalidResponse)
        #expect(transport.loneRewraps.value == 0)
    }

    @Test("A cancelled listing stops with a cancellation error")
    func cancelled() async throws {
        let station = FakeStation()
        let transport = BatchFaultTransport(station: station) { _, item in Self.failure(.cancelled, item) }
        let client = try await client(station, transport: transport, posts: 4)
        let error = await #expect(throws: StationClientError.self) { try await client.listPosts(as: DriveFileMetadata.self) }
        #expect(error?.kind == .cancelled)
    }
}
