#if canImport(CCurl)
import CurlTransport
#endif
import Foundation
import Manifest
import ClassicalCrypto
import SHA2
@testable import StationClient
import StationEmulator
import TestSupport
import Testing
import Transport
import TransportTestSupport
import URLSessionTransport

/// The client scenarios that depend on the transport, run over each transport the SDK ships:
/// pairing, listing, the largest file both ways, the offline view, an endpoint move and a
/// cancelled download against the emulator on loopback, and pairing and reading over TLS.
@Suite("Client scenarios over every shipped transport", .serialized)
struct TransportScenarioTests {
    @Test("Pair, list, publish and download the largest file the station accepts", arguments: ShippedTransport.allCases)
    func largestFileBothWays(transport kind: ShippedTransport) async throws {
        let (rig, client) = try await StationRig.pairedServed(transport: kind.make())
        defer { rig.emulator.stop() }
        try await Fixture.withTemporaryDirectory { directory in
            let metadata = Fixture.drive("largest.bin", size: 0)
            let size = try client.largestPublishableFileSize(metadata: metadata)
            let source = directory.appendingPathComponent("largest.bin")
            try PatternFile.write(size: Int(size), to: source)
            let post = try await client.publish(fileAt: source, metadata: metadata)
            let listing = try await client.listPosts(as: DriveFileMetadata.self)
            #expect(listing.posts.map(\.postCID) == [post.postCID])
            let copy = directory.appendingPathComponent("copy.bin")
            try await client.download(postCID: post.postCID, envelopesCID: post.envelopesCID, to: copy)
            #expect(try SHA256.hash(fileAt: copy) == SHA256.hash(fileAt: source))
        }
    }

    @Test("A station that goes down shows the offline listing; a moved one is found again", arguments: ShippedTransport.allCases)
    func offlineAndMoved(transport kind: ShippedTransport) async throws {
        let (rig, client) = try await StationRig.pairedServed(transport: kind.make())
        defer { rig.emulator.stop() }
        _ = try await client.publish(data: Data("m".utf8), metadata: Fixture.drive("moved.txt", size: 1))
        _ = try await client.profile()
        let moved = try rig.emulator.moveStation()
        #expect(try await client.listPosts(as: DriveFileMetadata.self).posts.map(\.metadata?.filename) == ["moved.txt"])
        #expect(await client.credentials.endpoint == moved)
        let offline = try await rig.offlineListing(of: client)
        #expect(offline.posts.map(\.metadata?.filename) == ["moved.txt"])
    }

    @Test("A download cancelled mid-body ends as cancelled and leaves no file", arguments: ShippedTransport.allCases)
    func cancelledDownload(transport kind: ShippedTransport) async throws {
        let (rig, client) = try await StationRig.pairedServed(transport: kind.make())
        defer { rig.emulator.stop() }
        try await Fixture.withTemporaryDirectory { directory in
            let source = directory.appendingPathComponent("big.bin")
            try PatternFile.write(size: 48 << 20, to: source)
            let post = try await client.publish(fileAt: source, metadata: Fixture.drive("big.bin", size: 48 << 20))
            let downloads = directory.appendingPathComponent("downloads")
            try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
            let started = AsyncStream<Void>.makeStream()
            let task = Task {
                try await client.download(postCID: post.postCID, envelopesCID: post.envelopesCID,
                                          to: downloads.appendingPathComponent("big.bin")) { progress in
                    if progress.completed > 0 { started.continuation.yield() }
                }
            }
            // Cancelled once bytes flow: 48 MiB through a bounded stream cannot be done by then.
            var firstBytes = started.stream.makeAsyncIterator()
            _ = await firstBytes.next()
            task.cancel()
            let error = await #expect(throws: StationClientError.self) { try await task.value }
            #expect(error?.kind == .cancelled)
            try Fixture.expectEmpty(downloads)
        }
    }

    @Test("Pairing and reading over TLS with the station's self-signed key pinned",
          .enabled(if: Programs.canStart, "starts a TLS front (python3, openssl), which this platform cannot"),
          arguments: ShippedTransport.allCases)
    func pinnedSelfSignedStation(transport kind: ShippedTransport) async throws {
        let rig = try StationRig.served(transport: kind.make())
        defer { rig.emulator.stop() }
        let front = try TLSFront.start(backendPort: try #require(rig.station.port.map(UInt16.init)), certificate: .runPyStyle)
        defer { front.stop() }
        let configuration = rig.configuration(stationPublicKeyPins: [front.pin])
        let stationLog = rig.emulator.log
        let pairing = Task {
            try await StationClient.pair(endpoint: front.url(""), deviceName: "TLS Phone", configuration: configuration) { _ in
                stationLog.latestPIN
            }
        }
        guard kind.enforcesPins else {
            // Never sent unpinned: the transport refuses, and the station saw nothing.
            let error = await #expect(throws: StationClientError.self) { try await pairing.value }
            #expect(error?.transportError?.kind == .pinningUnsupported, "\(String(describing: error))")
            #expect(rig.emulator.requests.entries.isEmpty)
            return
        }
        let client = try await pairing.value
        let post = try await client.publish(data: Data("over TLS".utf8), metadata: Fixture.drive("tls.txt", size: 8))
        #expect(try await client.listPosts(as: DriveFileMetadata.self).posts.map(\.metadata?.filename) == ["tls.txt"])
        #expect(try await client.download(postCID: post.postCID, envelopesCID: post.envelopesCID) == Data("over TLS".utf8))
        // A front with another key before the same station is refused under the pin.
        let other = try TLSFront.start(backendPort: try #require(rig.station.port.map(UInt16.init)), certificate: .runPyStyle)
        defer { other.stop() }
        let before = rig.emulator.requests.entries.count
        let refused = await #expect(throws: StationClientError.self) {
            _ = try await StationConnection.read(.profile, at: StationOrigin(url: other.url(""), pins: [front.pin]),
                                                 transport: configuration.transport)
        }
        #expect(refused?.transportError?.kind == .pinMismatch, "\(String(describing: refused))")
        #expect(rig.emulator.requests.entries.count == before)
    }
}

/// The transports the SDK ships, as the scenarios create them.
enum ShippedTransport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    #if canImport(CCurl)
    case curl
    #endif
    case urlSession

    var testDescription: String { rawValue }

    func make() -> any HTTPTransport {
        switch self {
        #if canImport(CCurl)
        case .curl: CurlTransport()
        #endif
        case .urlSession: URLSessionTransport()
        }
    }

    /// Whether the transport enforces public-key pins on this platform (FoundationNetworking
    /// offers no server-trust hook on Linux).
    var enforcesPins: Bool {
        switch self {
        #if canImport(CCurl)
        case .curl: true
        #endif
        case .urlSession:
            #if os(Linux)
            false
            #else
            true
            #endif
        }
    }
}

/// Deterministic file content of any size, written in 1 MiB pieces.
enum PatternFile {
    static func write(size: Int, to url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        var remaining = size
        while remaining > 0 {
            let count = min(remaining, piece.count)
            try handle.write(contentsOf: piece.prefix(count))
            remaining -= count
        }
    }
}

@Suite("The default transport")
struct DefaultTransportTests {
    /// Linux defaults to libcurl (which pins); Apple platforms, and Linux builds without the
    /// `SystemLibraries` trait, to URLSession (which pins on Apple platforms).
    @Test func platformDefault() {
        let transport = StationClientConfiguration.defaultTransport()
        #if SystemLibraries && os(Linux)
        #expect(transport is CurlTransport)
        #else
        #expect(transport is URLSessionTransport)
        #endif
        let configured = StationClientConfiguration(namespace: "drive", keyStore: InMemoryKeyStore()).transport
        #expect(type(of: configured) == type(of: transport))
    }
}
