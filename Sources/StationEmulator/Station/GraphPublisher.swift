import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import OrderedJSON

extension StationCore {
    /// `rewrap_all_posts`: every `all` post gets fresh envelopes for the current Allowed
    /// followers (one per uid, the station included); the manifest is republished. Call under
    /// the lock.
    func rewrapAllPosts(_ state: inout StationState) -> JSONObject {
        var byUID: [String: FollowerRow] = [:]
        var order: [String] = []
        for row in state.sortedFollowers where row.allowed == "Allowed" && !row.uid.isEmpty {
            if let current = byUID[row.uid] {
                if row.deviceUID == row.uid, current.deviceUID != current.uid { byUID[row.uid] = row }
            } else {
                byUID[row.uid] = row
                order.append(row.uid)
            }
        }
        let keys = order.compactMap { uid in byUID[uid].flatMap { $0.mlkemPublicKey.utf8.count == 2368 ? (uid, $0.mlkemPublicKey) : nil } }
        var total = 0, updated = 0, skipped = 0
        var skips: OrderedMap<Int> = [
            "missing_post_cid": 0, "missing_envelopes_cid": 0, "audience_not_all": 0, "missing_root_envelope": 0,
            "open_envelope_failed": 0, "bad_sym_key_len": 0, "publish_failed": 0,
        ]
        func skip(_ reason: String) {
            skipped += 1
            skips[reason] = (skips[reason] ?? 0) + 1
        }
        for (name, namespace) in state.manifest.clients {
            for (index, entry) in namespace.posts.enumerated() {
                total += 1
                guard entry.audienceMode == .all else { skip("audience_not_all"); continue }
                guard !entry.postCID.isEmpty else { skip("missing_post_cid"); continue }
                guard let envelopesCID = entry.envelopesCID, !envelopesCID.isEmpty else { skip("missing_envelopes_cid"); continue }
                guard let root = envelopesMap(envelopesCID)?[state.uid], !root.isEmpty else { skip("missing_root_envelope"); continue }
                guard let key = openWithStationKey(root) else { skip("open_envelope_failed"); continue }
                var envelopes = OrderedMap<String>()
                for (uid, publicKey) in keys { if let sealed = seal(key, toHex: publicKey) { envelopes[uid] = sealed } }
                var rewrapped = entry
                rewrapped.envelopesCID = publishEnvelopes(postCID: entry.postCID, envelopes: envelopes)
                rewrapped.envelopesCount = envelopes.count
                state.ledger.replaceEntry(at: index, inClient: name, with: rewrapped)
                updated += 1
            }
        }
        let manifestCID = publishManifest(&state)
        return [
            "status": "rewrap_manifest_ok", "followers_allowed": JSONOut.int(keys.count), "posts_total": JSONOut.int(total),
            "posts_updated": JSONOut.int(updated), "posts_skipped": JSONOut.int(skipped), "manifest_cid": .string(manifestCID),
            "skip_counts": .object(skips.mapValues { JSONOut.int($0) }),
        ]
    }

    /// `rebuild_graphs_and_envelopes` (PROTOCOL §9): the following and followers graphs are
    /// sealed with one fresh SecretBox key, which is sealed to every Allowed follower device in
    /// the decoder-envelopes document; the three CIDs go into `public.json`. Call under the lock.
    func rebuildGraphs(_ state: inout StationState) -> JSONObject {
        let key = SecureRandom.symmetricKey()
        func stamp() -> JSONValue { .string(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")) }
        let following: JSONValue = .object([
            "version": 1, "updated_at": stamp(),
            "following": .array(state.following.sorted { StationState.byteOrder($0.uid, $1.uid) }.map(\.json)),
        ])
        let allowed = state.sortedFollowers.filter { $0.allowed == "Allowed" }
        let followers: JSONValue = .object(["version": 1, "updated_at": stamp(), "followers": .array(allowed.map(\.json))])
        func sealed(_ value: JSONValue) -> String {
            // SecretBox with a fresh random nonce cannot fail for a 32-byte key.
            let box = (try? SecretBox.seal(JSONOut.pythonDefault(value), using: key)) ?? Data()
            return blocks.add(box)
        }
        let followingCID = sealed(following)
        let followersCID = sealed(followers)
        var envelopes = OrderedMap<JSONValue>()
        for row in allowed {
            let item: JSONValue = .object(["device_uid": .string(row.deviceUID), "envelope": JSONOut.string(seal(key, toHex: row.mlkemPublicKey))])
            envelopes[row.uid] = .array((envelopes[row.uid]?.arrayValue ?? []) + [item])
        }
        let decoderCID = blocks.add(JSONOut.pythonDefault(.object(["version": 1, "envelopes": .object(envelopes)])))
        state.publicDocument.followingCID = followingCID
        state.publicDocument.followersCID = followersCID
        state.publicDocument.followDecoderEnvelopesCID = decoderCID
        publishPublicDocument(&state)
        return ["following_cid": .string(followingCID), "followers_cid": .string(followersCID),
                "follow_decoder_envelopes_cid": .string(decoderCID)]
    }
}
