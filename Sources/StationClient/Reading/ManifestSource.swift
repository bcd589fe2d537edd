import Foundation
import Manifest
import ContentAddressing
import OrderedJSON
import Transport

// Where a listing's manifest comes from: one's own station (its `/content`, else the gateway)
// or a followed station (the gateway), either way checked against the CID, bounded by
// ``StationClientConfiguration/maximumManifestPosts`` and read by `Manifest.read`, the one reader.
extension StationClient {
    /// Drops the in-memory copy of the last manifest read, for example when the app receives a
    /// memory warning (a manifest of 10,000 posts holds several megabytes). The next listing
    /// fetches the manifest again and checks it against its CID; post keys and the offline
    /// listing stay.
    public func clearManifestCache() { manifestCache = nil }

    /// The manifest with this CID: from the station's `/content`, or from the gateway when that
    /// fails; either way verified against the CID, and at most as long as a manifest of
    /// ``StationClientConfiguration/maximumManifestPosts`` posts can be.
    ///
    /// - Throws: ``StationClientError`` when neither source gives bytes matching the CID, or the
    ///   bytes are not a manifest.
    public func fetchManifest(cid: String) async throws -> Manifest {
        if let cached = manifestCache, cached.cid == cid { return cached.manifest }
        let operation = "reading manifest \(cid)"
        let parsed = try IPFSGateway.parse(cid, operation: operation)
        let manifestLimit = ResponseLimit.manifest(maximumPosts: configuration.maximumManifestPosts)
        // Read in place, not copied to an array: a 10,000-post manifest is several megabytes.
        var bytes: Data?
        var firstError: (any Error)?
        do {
            let response = try await signed(.get, "/content/\(cid)", limit: manifestLimit, operation: operation)
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
        if bytes == nil {
            guard let gateway = configuration.gateway else { throw firstError ?? StationClientError(.unreachable, operation: operation, message: "no source") }
            log(.info, "\(operation): falling back to the gateway (\(firstError.map { "\($0)" } ?? ""))")
            bytes = Data(try await gateway.fetch(cid: cid, limit: manifestLimit))
        }
        let manifest = try Self.readManifest(bytes ?? Data(), operation: operation)
        manifestCache = (cid, manifest)
        return manifest
    }

    /// A followed station's manifest with this CID, from `gateway` (which verifies it against the
    /// CID), at most as long as a manifest of `maximumPosts` posts can be.
    ///
    /// - Throws: ``StationClientError`` when the gateway fails or the bytes are not a manifest.
    static func fetchManifest(cid: String, from gateway: IPFSGateway, maximumPosts: Int) async throws -> Manifest {
        let bytes = try await gateway.fetch(cid: cid, limit: ResponseLimit.manifest(maximumPosts: maximumPosts))
        return try readManifest(Data(bytes), operation: "reading manifest \(cid)")
    }

    /// Reads manifest bytes with the one manifest reader.
    ///
    /// - Throws: ``StationClientError`` `.invalidResponse` when the bytes are not a manifest.
    static func readManifest(_ bytes: Data, operation: String) throws -> Manifest {
        do {
            return try Manifest.read(bytes)
        } catch {
            throw StationClientError(.invalidResponse, operation: operation, message: "not a manifest: \(error)", underlying: error)
        }
    }
}
