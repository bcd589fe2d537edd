import Foundation
import Transport

/// Every request the emulator answered, station and gateway alike, in arrival order: for tests
/// that check what a client sent (one rewrap per post, no second `POST /post`, one IPNS
/// resolution) without a recording transport in between.
///
///     let before = emulator.requests.count(RequestRoute("POST", path: "/rewrap"))
///     _ = try await client.listPosts(as: DriveFileMetadata.self)
///     #expect(emulator.requests.count(RequestRoute("POST", path: "/rewrap")) - before == 50)
///
/// The newest ``retainedEntryCount`` entries are kept.
public final class RequestLog: Sendable {
    /// Which of the emulator's two servers answered.
    public enum Server: String, Sendable, Hashable {
        /// The station (the routes of WIRE_NOTES).
        case station
        /// The IPFS gateway (`/ipfs/…`, `/ipns/…`).
        case gateway
    }

    /// One answered request.
    public struct Entry: Sendable, Hashable, CustomStringConvertible {
        /// The server that answered.
        public let server: Server
        /// The method token, for example `GET`.
        public let method: String
        /// The percent-decoded path without the query.
        public let path: String
        /// The `Host` header the client sent (`127.0.0.1:<port>` over loopback, the URL's host in
        /// process), or `nil` without one.
        public let host: String?
        /// The status of the answer (an injected fault's status when one applied).
        public let status: Int

        /// For example `station GET 127.0.0.1:50123/health → 200`.
        public var description: String { "\(server.rawValue) \(method) \(host ?? "")\(path) → \(status)" }
    }

    /// How many entries are kept (older ones are dropped).
    public static let retainedEntryCount = 10_000

    private let state = Locked<[Entry]>([])

    /// Creates an empty log.
    public init() {}

    /// The entries still held, oldest first.
    public var entries: [Entry] { state.withLock { Array($0.suffix(Self.retainedEntryCount)) } }

    /// How many held entries are on `route`.
    public func count(_ route: RequestRoute) -> Int {
        state.withLock { $0.suffix(Self.retainedEntryCount).count { route.matches(method: $0.method, path: $0.path) } }
    }

    /// Forgets every entry.
    public func removeAll() { state.withLock { $0.removeAll() } }

    func record(_ server: Server, _ request: StationRequest, _ response: StationResponse) {
        let entry = Entry(server: server, method: request.method, path: request.path, host: request.header("host"),
                          status: response.status)
        state.withLock { entries in
            entries.append(entry)
            // Trimmed in batches: dropping the oldest entry on every request moved the whole log each time.
            if entries.count >= 2 * Self.retainedEntryCount { entries.removeFirst(entries.count - Self.retainedEntryCount) }
        }
    }
}
