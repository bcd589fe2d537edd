import Foundation
import Manifest
import OrderedJSON
import ContentAddressing

extension StationCore {
    /// `GET /health`: 200 healthy, or 503 degraded while IPFS is down.
    func health() -> StationResponse {
        let ipfs = !faults.isIPFSDown
        let status = ipfs ? "healthy" : "degraded"
        return .json(ipfs ? 200 : 503, JSONOut.compact([
            "status": .string(status),
            "checks": .object(["database": true, "ipfs": .bool(ipfs), "identity": true]),
        ]))
    }

    /// The `/profile` object (also `updated_profile` in follow responses). Call under the lock.
    func profileObject(_ state: StationState) -> JSONObject {
        let document = state.publicDocument
        var byClient = JSONObject()
        var total = 0
        for (name, namespace) in state.manifest.clients where !name.pythonStripped.isEmpty {
            byClient[name] = JSONOut.int(namespace.posts.count)
            total += namespace.posts.count
        }
        let followers = Set(state.followers.filter { $0.uid != state.uid && $0.allowed == "Allowed" }.map(\.uid))
        return [
            "uid": .string(state.uid),
            "mlkem_public_key": JSONOut.string(document.mlkemPublicKey),
            "mldsa_public_key": JSONOut.string(document.mldsaPublicKey),
            "endpoint": JSONOut.string(document.endpoint),
            "ipfs_peer_id": JSONOut.string(document.ipfsPeerID),
            "ipns_name": JSONOut.string(document.ipnsName),
            "manifest_cid": JSONOut.string(document.manifestPointer),
            "followers_count": JSONOut.int(followers.count),
            "following_count": JSONOut.int(state.following.count),
            "manifest_posts": JSONOut.int(total),
            "manifest_posts_total": JSONOut.int(total),
            "manifest_posts_by_client": .object(byClient),
        ]
    }

    /// `GET /profile` (no auth).
    func profile() -> StationResponse {
        .json(200, JSONOut.compact(state.withLock { profileObject($0) }))
    }

    /// The size of the disk `GET /storage` reports (64 GiB).
    static let simulatedDiskByteCount = 68_719_476_736

    /// `GET /storage` (no auth): repository usage, disk usage (of a simulated disk:
    /// ``simulatedDiskByteCount``), per-client sizes.
    func storage() -> StationResponse {
        var result = JSONObject()
        let ipfsUp = !faults.isIPFSDown
        let usage = blocks.usage
        let storageMax = 10_737_418_240
        if ipfsUp {
            result["ipfs"] = .object([
                "repo_size_bytes": JSONOut.int(usage.bytes), "storage_max_bytes": JSONOut.int(storageMax),
                "num_objects": JSONOut.int(usage.objects),
                "used_percent": .number(JSONNumber(Self.round2(Double(usage.bytes) / Double(storageMax) * 100))),
            ])
        } else {
            result["ipfs"] = .object(["error": "HTTPConnectionPool(host='127.0.0.1', port=5001): Max retries exceeded"])
        }
        // The station reports its machine's disk (psutil). The emulator reports a simulated one,
        // ``simulatedDiskByteCount`` with the repository as its only use: the same answer on every
        // machine (tests compare it), and no call to a disk-space API, whose use Apple's privacy
        // manifests would have an app declare for a figure no test needs.
        let total = Self.simulatedDiskByteCount
        let used = min(usage.bytes, total)
        result["device"] = .object([
            "total_bytes": JSONOut.int(total), "used_bytes": JSONOut.int(used), "free_bytes": JSONOut.int(total - used),
            "used_percent": .number(JSONNumber(Self.round2(Double(used) / Double(total) * 100))),
        ])
        let repoSize = ipfsUp ? usage.bytes : 0
        var clients = JSONObject()
        var totalContent = 0
        let manifest = state.withLock { $0.manifest }
        for (name, namespace) in manifest.clients {
            var size = 0
            for entry in namespace.posts where ipfsUp {
                size += blocks.cumulativeSize(entry.postCID)
                if let envelopes = entry.envelopesCID, !envelopes.isEmpty { size += blocks.cumulativeSize(envelopes) }
            }
            totalContent += size
            clients[name] = .object([
                "size_bytes": JSONOut.int(size), "post_count": JSONOut.int(namespace.posts.count),
                "percent_of_repo": repoSize > 0
                    ? .number(JSONNumber(Self.round2(Double(size) / Double(repoSize) * 100))) : JSONOut.int(0),
            ])
        }
        result["clients"] = .object(clients)
        result["total_content_bytes"] = JSONOut.int(totalContent)
        return .json(200, JSONOut.compact(result))
    }

    /// Python's `round(x, 2)` for the percentages (round half to even on the decimal value).
    static func round2(_ value: Double) -> Double {
        (value * 100).rounded(.toNearestOrEven) / 100
    }
}
