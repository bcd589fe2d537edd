import Foundation
import Manifest
@testable import StationClient
import Transport
@_exported import TransportTestSupport

/// Collects log lines (the SDK never prints; tests check what it reports).
final class LogCollector: Sendable {
    private let lines = Locked<[LogEvent]>([])
    var handler: LogHandler { { event in self.lines.withLock { $0.append(event) } } }
    var messages: [String] { lines.withLock { $0.map(\.message) } }
}


enum Fixture {
    static func configuration(
        _ station: FakeStation, namespace: String = "drive", keyStore: any KeyStore = InMemoryKeyStore(), log: LogHandler? = nil,
        persistsPostKeys: Bool = false, temporaryDirectory: URL? = nil
    ) -> StationClientConfiguration {
        let transport = FakeTransport(station: station)
        return StationClientConfiguration(
            namespace: namespace, keyStore: keyStore, transport: transport,
            gateway: IPFSGateway(baseURL: URL(string: "http://\(FakeStation.gatewayHost)")!, transport: transport),
            persistsPostKeys: persistsPostKeys, log: log, temporaryDirectory: temporaryDirectory)
    }

    /// Pairs a device with the right PIN on the first prompt.
    static func paired(
        _ station: FakeStation, namespace: String = "drive", keyStore: any KeyStore = InMemoryKeyStore(), log: LogHandler? = nil,
        persistsPostKeys: Bool = false, temporaryDirectory: URL? = nil
    ) async throws -> StationClient {
        let pin = await station.pin
        return try await StationClient.pair(
            endpoint: await station.endpoint, deviceName: "Test Phone",
            configuration: configuration(station, namespace: namespace, keyStore: keyStore, log: log, persistsPostKeys: persistsPostKeys,
                                         temporaryDirectory: temporaryDirectory),
            pin: { _ in pin })
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("station-client-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func drive(_ name: String, size: Int) -> DriveFileMetadata {
        DriveFileMetadata(filename: name, mimeType: "application/octet-stream", sizeBytes: size, createdAt: 1_700_000_000,
                          modifiedAt: 1_700_000_000, path: "/")
    }
}

/// A social client's own metadata type.
struct FramePost: Codable, Sendable, Equatable {
    var caption: String
    var likes: Int
}
