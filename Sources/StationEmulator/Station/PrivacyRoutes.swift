import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import OrderedJSON

extension StationCore {
    /// `POST /privacy/flip`: moves every post of a client namespace between public (plaintext)
    /// and encrypted, keeping each post's `created_at`, then records the account's privacy in the
    /// namespace profile. One post's failure is recorded and skipped, never fatal.
    func flipPrivacy(_ request: StationRequest) async -> StationResponse {
        let model = BodyModel(fields: [.required("mode"), .optional("audience_mode"), .optional("audience_uids", .stringList),
                                       .optional("client")])
        return await ownerRoute(request, body: model) { body in
            let mode = body["mode"]?.stringValue ?? ""
            guard mode == "private" || mode == "public" else { return .detail(400, "mode must be 'private' or 'public'") }
            let audienceMode = body["audience_mode"]?.stringValue ?? "all"
            let audienceUIDs = body["audience_uids"]?.arrayValue?.compactMap(\.stringValue)
            let client = body["client"]?.stringValue ?? Self.profileClient
            let now = Int(self.now)
            return state.withLock { state -> StationResponse in
                let migrated = mode == "private"
                    ? flipToPrivate(&state, client: client, audienceMode: audienceMode, audienceUIDs: audienceUIDs, now: now)
                    : flipToPublic(&state, client: client, now: now)
                let privacy = mode, defaultAudience = mode == "private" ? "all" : "public"
                _ = setClientProfile(&state, ["account_privacy": .string(privacy), "default_audience_mode": .string(defaultAudience)])
                let count = migrated.filter { $0["status"] == "ok" }.count
                log.info("Account privacy flipped to \(privacy) (client=\(client), migrated=\(count))", logger: "cipher_station.privacy")
                return .json(200, JSONOut.compact([
                    "status": "privacy_flipped", "account_privacy": .string(privacy), "default_audience_mode": .string(defaultAudience),
                    "migrated": .array(migrated), "migrated_count": JSONOut.int(count),
                    "manifest_cid": JSONOut.string(state.publicDocument.manifestPointer),
                ]))
            }
        }
    }

    /// Removes an entry, republishes, unpins its CIDs and collects garbage
    /// (`remove_post_from_manifest`). Call under the lock.
    func removePost(_ state: inout StationState, postCID: String, client: String?) -> (client: String, unpinned: [String], collected: Int)? {
        guard let (name, removed) = state.ledger.removeEntry(postCID: postCID, client: client) else { return nil }
        publishManifest(&state)
        let unpinned = [removed.postCID, removed.envelopesCID].compactMap { $0 }.filter { !$0.isEmpty }
        for cid in unpinned where !isReferenced(cid, state) { blocks.unpin(cid) }
        return (name, unpinned, unpinned.isEmpty ? 0 : blocks.collectGarbage().count)
    }

    private func flipToPrivate(_ state: inout StationState, client: String, audienceMode: String, audienceUIDs: [String]?,
                               now: Int) -> [JSONValue] {
        var migrated: [JSONValue] = []
        for entry in state.manifest.posts(in: client) where entry.audienceMode == .public {
            func failure(_ text: String) -> JSONValue {
                .object(["old_cid": .string(entry.postCID), "status": "error", "error": .string(text)])
            }
            guard let plaintext = blocks.read(entry.postCID) else { migrated.append(failure("content not found")); continue }
            guard let mode = Self.normalizeAudienceMode(audienceMode), mode != "public" else {
                migrated.append(failure("Invalid audience_mode: \(audienceMode)"))
                continue
            }
            let key = SecureRandom.symmetricKey()
            do throws(AudienceError) {
                let chosen = try recipients(state, mode: mode, uids: audienceUIDs)
                // The station-driven path: the station encrypts the blob and the metadata itself.
                guard let blob = try? SecretBox.seal(plaintext, using: key) else { migrated.append(failure("encryption failed")); continue }
                var metadataHex: String?
                if entry.metadata?.sealedHex == nil, case let .object(object)? = try? entry.metadata?.jsonValue, let sealed = try? SecretBox.seal(JSONOut.compact(object), using: key) {
                    metadataHex = Hex.encode(sealed)
                }
                let cid = blocks.add(blob)
                _ = try appendEncryptedPost(&state, postCID: cid, key: key, recipients: chosen, mode: mode, audienceUIDs: audienceUIDs,
                                            metadataHex: metadataHex, client: client, createdAt: entry.createdAt ?? now)
                _ = removePost(&state, postCID: entry.postCID, client: client)
                migrated.append(.object(["old_cid": .string(entry.postCID), "new_cid": .string(cid), "status": "ok"]))
            } catch {
                guard case let .invalid(message) = error else { continue }
                migrated.append(failure(message))
            }
        }
        return migrated
    }

    private func flipToPublic(_ state: inout StationState, client: String, now: Int) -> [JSONValue] {
        var migrated: [JSONValue] = []
        for entry in state.manifest.posts(in: client) where [AudienceMode.selfOnly, .specific, .all].contains(entry.audienceMode) {
            func record(_ status: String, _ text: String) -> JSONValue {
                .object(["old_cid": .string(entry.postCID), "status": .string(status), "error": .string(text)])
            }
            guard let envelopesCID = entry.envelopesCID, !envelopesCID.isEmpty else {
                migrated.append(record("skipped", "no envelopes_cid"))
                continue
            }
            guard let selfEnvelope = envelopesMap(envelopesCID)?[state.uid], !selfEnvelope.isEmpty else {
                migrated.append(record("skipped", "no self envelope"))
                continue
            }
            guard let key = openWithStationKey(selfEnvelope) else {
                migrated.append(record("skipped", "failed to recover symmetric key"))
                continue
            }
            guard let blob = blocks.read(entry.postCID), let plaintext = try? SecretBox.open(blob, using: key) else {
                migrated.append(record("error", "Decryption failed. Ciphertext failed verification"))
                continue
            }
            var metadata: JSONObject?
            if let hex = entry.metadata?.sealedHex {
                guard let sealed = try? Hex.decode(hex), let opened = try? SecretBox.open(sealed, using: key),
                      let value = try? WireJSON.parse(opened) else {
                    migrated.append(record("error", "metadata could not be decrypted"))
                    continue
                }
                metadata = value.objectValue
            }
            let cid = blocks.add(plaintext)
            state.ledger.append(.publicPost(postCID: cid, createdAt: entry.createdAt ?? now, metadata: metadata), toClient: client)
            publishManifest(&state)
            _ = removePost(&state, postCID: entry.postCID, client: client)
            migrated.append(.object(["old_cid": .string(entry.postCID), "new_cid": .string(cid), "status": "ok"]))
        }
        return migrated
    }
}
