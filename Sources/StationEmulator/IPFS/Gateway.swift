import Foundation
import Manifest
import ContentAddressing

/// The emulated node's path gateway: `GET /ipfs/<cid>` (with `Range`) serves any local file, or
/// with `?format=raw` (or `Accept: application/vnd.ipld.raw`) the block itself, as a trustless
/// gateway does; `GET /ipns/<name>` serves the station's last published `public.json`.
struct Gateway: Sendable {
    let core: StationCore

    func route(_ request: StationRequest) -> StationResponse {
        let path = request.path
        guard request.method == "GET" || request.method == "HEAD" else {
            return text(405, "405 method not allowed")
        }
        guard !core.faults.isIPFSDown else { return text(502, "502 bad gateway: the IPFS node is down") }
        let onlyIfCached = request.header("cache-control")?.lowercased().contains("only-if-cached") ?? false
        if path.hasPrefix("/ipfs/") {
            let cid = String(path.dropFirst(6).split(separator: "/").first ?? "")
            return serve(cid: cid, request: request, onlyIfCached: onlyIfCached, ipfsPath: "/ipfs/\(cid)")
        }
        if path.hasPrefix("/ipns/") {
            let name = String(path.dropFirst(6).split(separator: "/").first ?? "")
            let (published, node) = core.state.withLock { ($0.publishedPublicCID, core.identity.node) }
            let isNode = name == node.ipnsName || name == node.peerID || (try? PeerID(name)) == (try? PeerID(node.peerID))
            if let forged = core.faults.forgedIPNSAnswer, isNode {
                return StationResponse(status: 200, headers: [("content-type", "application/json"), ("x-ipfs-path", "/ipns/\(name)")],
                                       body: Data(forged))
            }
            guard isNode, let published else {
                return text(onlyIfCached ? 412 : 404, "ipfs resolve -r /ipns/\(name): could not resolve name")
            }
            if Self.wantsRecord(request) {
                // Kubo's trustless gateway: the signed record itself (`?format=ipns-record`).
                guard let record = core.faults.injectedIPNSRecord?.bytes ?? core.state.withLock({ $0.ipnsRecords.last }) else {
                    return text(404, "ipfs resolve -r /ipns/\(name): could not resolve name")
                }
                return StationResponse(status: 200, headers: [
                    ("content-type", IPNSRecord.mediaType), ("x-ipfs-path", "/ipns/\(name)"),
                    ("cache-control", "public, max-age=3600"),
                ], body: Data(record))
            }
            let resolved = core.faults.injectedIPNSRecord?.cid ?? published
            var response = serve(cid: resolved, request: request, onlyIfCached: onlyIfCached, ipfsPath: "/ipns/\(name)")
            if response.status == 200 {
                response.headers = response.headers.map { $0.name == "content-type" ? ("content-type", "application/json") : $0 }
            }
            return response
        }
        return text(404, "404 page not found")
    }

    /// Whether the request asks for the signed record: `?format=ipns-record` or an `Accept` of
    /// `application/vnd.ipfs.ipns-record`, as Kubo reads them.
    static func wantsRecord(_ request: StationRequest) -> Bool {
        if let query = request.target.split(separator: "?", maxSplits: 1).dropFirst().first,
           query.split(separator: "&").contains("format=ipns-record") { return true }
        return request.header("accept")?.lowercased().contains(IPNSRecord.mediaType) ?? false
    }

    private func serve(cid: String, request: StationRequest, onlyIfCached: Bool, ipfsPath: String) -> StationResponse {
        guard let parsed = try? CID(cid) else { return text(400, "invalid path \"\(ipfsPath)\": invalid cid") }
        // An identity CID carries its own (unverifiable) block; serving it would only parse hostile sizes.
        guard !parsed.multihash.isIdentity else {
            return text(400, "invalid path \"\(ipfsPath)\": identity-multihash CIDs are not served")
        }
        if Self.wantsRawBlock(request) {
            guard let block = core.blocks.rawBlock(cid) else {
                return text(onlyIfCached ? 412 : 404, "ipfs resolve -r \(ipfsPath): block was not found locally (offline)")
            }
            return StationResponse(status: 200, headers: [("content-type", "application/vnd.ipld.raw"), ("x-ipfs-path", ipfsPath),
                                                          ("cache-control", "public, max-age=29030400, immutable")],
                                   body: Data(block))
        }
        guard let size = core.servedFileSize(cid) else {
            return text(onlyIfCached ? 412 : 404, "ipfs resolve -r \(ipfsPath): block was not found locally (offline)")
        }
        let common: [(name: String, value: String)] = [
            ("accept-ranges", "bytes"), ("etag", "\"\(cid)\""), ("x-ipfs-path", ipfsPath),
            ("cache-control", "public, max-age=29030400, immutable"), ("content-type", "application/octet-stream"),
        ]
        switch StationCore.rangeRequest(request.header("range"), size: size) {
        case .unsatisfiable:
            return StationResponse(status: 416, headers: [("content-range", "bytes */\(size)")],
                                   body: Data("invalid range".utf8))
        case .whole:
            return StationResponse(status: 200, headers: common, body: Data(core.servedFile(cid) ?? []))
        case let .part(range):
            return StationResponse(status: 206, headers: common + [("content-range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)")],
                                   body: Data(core.servedFile(cid, range: range) ?? []))
        }
    }

    /// Whether the request asks for the block rather than the file (`?format=raw`, or an
    /// `Accept` of `application/vnd.ipld.raw`).
    static func wantsRawBlock(_ request: StationRequest) -> Bool {
        if request.header("accept")?.lowercased().contains("application/vnd.ipld.raw") == true { return true }
        guard let query = request.target.split(separator: "?", maxSplits: 1).dropFirst().first else { return false }
        return query.split(separator: "&").contains { $0.lowercased() == "format=raw" }
    }

    private func text(_ status: Int, _ message: String) -> StationResponse {
        StationResponse(status: status, headers: [("content-type", "text/plain; charset=utf-8")], body: Data((message + "\n").utf8))
    }
}
