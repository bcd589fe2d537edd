import Foundation
import Manifest
import ContentAddressing
import OrderedJSON
import Transport

/// Where a listing's manifest comes from, how it is checked and within which limits it is read;
/// it keeps the last manifest read, which is content-addressed, so the same CID never needs
/// reading again.
final class ManifestSource: Sendable {
    private let connection: StationConnection
    private let last = Locked<(cid: String, manifest: Manifest)?>(nil)

    init(connection: StationConnection) {
        self.connection = connection
    }

    private var configuration: StationClientConfiguration { connection.configuration }

    /// The last manifest read, when its CID is `cid`.
    func cached(cid: String) -> Manifest? {
        last.withLock { $0?.cid == cid ? $0?.manifest : nil }
    }

    /// Drops the last manifest read.
    func clear() {
        last.withLock { $0 = nil }
    }

    /// The manifest with this CID, as ``StationClient/fetchManifest(cid:)`` describes it.
    func manifest(cid: String) async throws -> Manifest {
        if let cached = cached(cid: cid) { return cached }
        let operation = "reading manifest \(cid)"
        let parsed = try IPFSGateway.parse(cid, operation: operation)
        let manifestLimit = ResponseLimit.manifest(maximumPosts: configuration.maximumManifestPosts)
        // Read in place, not copied to an array: a 10,000-post manifest is several megabytes.
        var bytes: Data?
        var firstError: (any Error)?
        do {
            let response = try await connection.send(.signed(.get, "/content/\(cid)", limit: manifestLimit,
                                                             timeouts: configuration.requestTimeouts, operation: operation))
            if response.isSuccess {
                let data = response.body.data ?? Data()
                if parsed.matches(fileBytes: data) {
                    bytes = data
                } else {
                    firstError = StationClientError(.integrity, operation: operation, message: "the station's bytes do not match the CID")
                }
            } else {
                firstError = StationClientError.station(response, operation: operation)
            }
        } catch let error as StationClientError where error.kind != .cancelled {
            firstError = error
        }
        let manifest: Manifest
        if let bytes {
            manifest = try Self.readManifest(bytes, limits: configuration.manifestLimits, operation: operation)
        } else {
            guard let gateway = configuration.gateway else { throw firstError ?? StationClientError(.unreachable, operation: operation, message: "no source") }
            configuration.log(.info, "\(operation): falling back to the gateway (\(firstError.map { "\($0)" } ?? ""))")
            manifest = try await Self.gatewayManifest(cid: cid, from: gateway, limits: configuration.manifestLimits)
        }
        last.withLock { $0 = (cid, manifest) }
        return manifest
    }

    /// The manifest with this CID from `gateway` (which verifies it against the CID), at most as
    /// long as a manifest of `limits.maximumPosts` posts can be, read with `limits`: a followed
    /// station's, and this station's when its `/content` fails.
    ///
    /// - Throws: ``StationClientError`` when the gateway fails, the bytes are not a manifest, or
    ///   it holds more posts than `limits` allow (`.tooLarge`).
    static func gatewayManifest(cid: String, from gateway: IPFSGateway, limits: ManifestLimits) async throws -> Manifest {
        let bytes = try await gateway.fetch(cid: cid, limit: ResponseLimit.manifest(maximumPosts: limits.maximumPosts))
        return try readManifest(Data(bytes), limits: limits, operation: "reading manifest \(cid)")
    }

    /// Reads manifest bytes with `Manifest.read` and `limits`.
    ///
    /// - Throws: ``StationClientError`` `.tooLarge` (with ``StationClientError/limit`` the most
    ///   posts, or the memory limit in bytes) when the manifest holds more posts than `limits`
    ///   allow or would take more memory than their `maximumMemory`, read no further;
    ///   `.invalidResponse` when the bytes are not a manifest.
    static func readManifest(_ bytes: Data, limits: ManifestLimits, operation: String) throws -> Manifest {
        do throws(WireFormatError) {
            return try Manifest.read(bytes, limits: limits)
        } catch where error == .memoryLimitExceeded(limit: limits.maximumMemory) {
            throw StationClientError(.tooLarge, operation: operation,
                                     message: "reading the manifest would take more than \(limits.maximumMemory) bytes of memory (maximumManifestMemory); it was read no further",
                                     underlying: error, limit: Int64(limits.maximumMemory))
        } catch where error.path != nil && error.limit != nil {
            // `limitExceeded`: the only reason with both a path and a limit.
            let limit = error.limit ?? limits.maximumPosts
            throw StationClientError(.tooLarge, operation: operation,
                                     message: "the manifest holds more than \(limit) posts (maximumManifestPosts); it was read no further",
                                     underlying: error, limit: Int64(limit))
        } catch {
            throw StationClientError(.invalidResponse, operation: operation, message: "not a manifest: \(error)", underlying: error)
        }
    }
}

extension StationClient {
    /// Drops the in-memory copy of the last manifest read, for example when the app receives a
    /// memory warning (a manifest of 10,000 posts holds several megabytes). The next listing
    /// fetches the manifest again and checks it against its CID; post keys and the offline
    /// listing stay.
    public func clearManifestCache() { manifests.clear() }

    /// The manifest with this CID: from the station's `/content`, or from the gateway when that
    /// fails; either way verified against the CID, at most as long as a manifest of
    /// ``StationClientConfiguration/maximumManifestPosts`` posts can be, and read with the
    /// configuration's limits: at most that many posts, and each post's metadata within
    /// ``StationClientConfiguration/maximumPostMetadataBytes`` and
    /// ``StationClientConfiguration/maximumPostMetadataDepth`` (a post past them is left out and
    /// listed in the manifest's `issues`).
    ///
    /// - Throws: ``StationClientError`` when neither source gives bytes matching the CID, the
    ///   bytes are not a manifest, or the manifest holds more posts than
    ///   ``StationClientConfiguration/maximumManifestPosts`` (`.tooLarge`, with that number as
    ///   ``StationClientError/limit``).
    public func fetchManifest(cid: String) async throws -> Manifest {
        try await manifests.manifest(cid: cid)
    }

    /// The manifest the profile named as `cid`, or, when the station no longer has it (404: it
    /// published a newer one meanwhile, for another device, and dropped this one), the one the
    /// profile names now, read once more; with its CID.
    ///
    /// - Throws: as ``fetchManifest(cid:)``.
    func fetchCurrentManifest(cid: String) async throws -> (cid: String, manifest: Manifest) {
        do {
            return (cid, try await fetchManifest(cid: cid))
        } catch let error as StationClientError where error.status == 404 {
            guard let current = try await profile().manifestCID, current != cid else { throw error }
            configuration.log(.info, "reading manifest \(cid): gone from the station; reading its successor \(current)")
            return (current, try await fetchManifest(cid: current))
        }
    }
}
