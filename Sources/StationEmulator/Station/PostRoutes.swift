import Foundation
import Manifest
import PQCrypto
import Signing
import ClassicalCrypto
import OrderedJSON
import ContentAddressing

extension StationCore {
    /// The audience modes `/post` and `/post/share` accept, with the legacy alias.
    static func normalizeAudienceMode(_ mode: String) -> String? {
        if mode == "all_followers" { return "all" }
        return ["self", "specific", "all", "public"].contains(mode) ? mode : nil
    }

    /// Allowed follower rows reduced to one per uid (the row whose device is the uid itself wins),
    /// sorted by uid, without the station: `_dedupe_followers_for_user_level_envelopes`.
    func userLevelFollowers(_ state: StationState) -> [FollowerRow] {
        var byUID: [String: FollowerRow] = [:]
        for row in state.sortedFollowers where row.allowed == "Allowed" && !row.uid.isEmpty {
            if let current = byUID[row.uid] {
                if current.deviceUID != current.uid, row.deviceUID == row.uid { byUID[row.uid] = row }
            } else {
                byUID[row.uid] = row
            }
        }
        return byUID.keys.sorted(by: StationState.byteOrder).compactMap { byUID[$0] }.filter { $0.uid != state.uid }
    }

    enum AudienceError: Error { case invalid(String) }

    /// The recipients besides the station, for an audience (`_filter_followers_for_audience`).
    func recipients(_ state: StationState, mode: String, uids: [String]?) throws(AudienceError) -> [FollowerRow] {
        let followers = userLevelFollowers(state)
        switch mode {
        case "all": return followers
        case "specific":
            let wanted = Set((uids ?? []).map(\.pythonStripped).filter { !$0.isEmpty }).subtracting([state.uid])
            let byUID = Dictionary(followers.map { ($0.uid, $0) }, uniquingKeysWith: { first, _ in first })
            let missing = wanted.filter { byUID[$0] == nil }.sorted(by: StationState.byteOrder)
            guard missing.isEmpty else {
                throw .invalid("Specific audience contains uids that are not Allowed followers (or unknown): "
                    + missing.joined(separator: ", "))
            }
            return wanted.sorted(by: StationState.byteOrder).compactMap { byUID[$0] }
        default: return []
        }
    }

    /// Seals `key` for the station (first) and `recipients`, publishes the envelopes document and
    /// appends the manifest entry (`add_post_to_manifest`). Call under the lock.
    func appendEncryptedPost(
        _ state: inout StationState, postCID: String, key: SymmetricKey, recipients: [FollowerRow], mode: String,
        audienceUIDs: [String]?, metadataHex: String?, client: String?, createdAt: Int
    ) throws(AudienceError) -> (envelopesCID: String, count: Int) {
        var sortedUIDs: [String]?
        if mode == "specific" {
            let uids = audienceUIDs ?? []
            guard uids.allSatisfy({ !$0.pythonStripped.isEmpty }) else {
                throw .invalid("audience_uids must be a list[str] (non-empty strings) when audience_mode='specific'")
            }
            sortedUIDs = Set(uids.map(\.pythonStripped)).sorted(by: StationState.byteOrder)
        }
        var envelopes = OrderedMap<String>()
        let selfRow = FollowerRow(uid: state.uid, deviceUID: state.uid, mlkemPublicKey: identity.mlkemPublicHex,
                                  allowed: "Allowed")
        for row in [selfRow] + recipients {
            guard let sealed = seal(key, toHex: row.mlkemPublicKey) else {
                log.warning("Skipping follower \(row.uid): invalid ML-KEM pubkey", logger: "cipher_station.manifest")
                continue
            }
            envelopes[row.uid] = sealed
        }
        let envelopesCID = publishEnvelopes(postCID: postCID, envelopes: envelopes)
        let entry = PostEntry(postCID: postCID, audienceMode: AudienceMode(wireValue: mode), isEncrypted: true,
                              envelopesCID: envelopesCID, envelopesCount: envelopes.count, createdAt: createdAt,
                              audienceUIDs: sortedUIDs, metadata: metadataHex.map { .sealed(hex: $0) })
        state.ledger.append(entry, toClient: client)
        publishManifest(&state)
        return (envelopesCID, envelopes.count)
    }

    // MARK: POST /post

    func createPost(_ request: StationRequest) async -> StationResponse {
        // Form parsing happens with the dependencies: a body that is not multipart leaves the form empty.
        var parts: [FormPart] = []
        var formError: StationResponse?
        switch MultipartParser.boundary(contentType: request.header("content-type")) {
        case .none: formError = .detail(400, "There was an error parsing the body")
        case .some(.none): break
        case let .some(.some(boundary)):
            do { parts = try MultipartParser.parse(request.body, boundary: boundary) } catch {
                formError = .detail(400, "There was an error parsing the body")
            }
        }
        if let formError { return formError }
        func field(_ name: String) -> String? { parts.first { $0.name == name && $0.filename == nil }?.text }
        let file = parts.first { $0.name == "file" && $0.filename != nil }
        let missingFile = [BodyModel.error("missing", loc: ["body", "file"], "Field required", input: .null)]

        switch await authorize(request, owner: true) {
        case let .denied(response):
            // FastAPI reports missing headers and missing form fields together.
            if response.status == 422, file == nil, var object = (try? WireJSON.parse(response.body))?.objectValue,
               let errors = object["detail"]?.arrayValue {
                object["detail"] = .array(errors + missingFile)
                return .json(422, JSONOut.compact(object))
            }
            return response
        case .granted: break
        }
        guard let file else { return BodyModel.unprocessable(missingFile) }
        let requestedMode = field("audience_mode") ?? "all"
        let selfEnvelope = field("self_envelope")
        guard requestedMode == "public" || !(selfEnvelope ?? "").isEmpty else {
            return .detail(400, "self_envelope is required for non-public posts")
        }
        let metadataText = field("metadata")
        let client = field("client")
        var audienceUIDs: [String]?
        if let text = field("audience_uids"), !text.isEmpty {
            if let parsed = try? WireJSON.parse(Array(text.utf8)), let items = parsed.arrayValue {
                audienceUIDs = items.compactMap(\.stringValue)
            } else {
                audienceUIDs = text.split(separator: ",").map { String($0).pythonStripped }.filter { !$0.isEmpty }
            }
        }
        guard let mode = Self.normalizeAudienceMode(requestedMode) else {
            return .detail(400, "Invalid audience_mode: \(requestedMode)")
        }
        let createdAt = Int(now)

        if mode == "public" {
            var metadata: JSONObject?
            if let metadataText, !metadataText.isEmpty {
                if let parsed = try? WireJSON.parse(Array(metadataText.utf8)) { metadata = parsed.objectValue } else {
                    log.warning("Invalid metadata JSON")
                }
            }
            let cid = blocks.add(file.data)
            log.info("Public (unencrypted) post uploaded: CID=\(cid)", logger: "cipher_station.posts")
            let total: Int = state.withLock { state in
                state.ledger.append(.publicPost(postCID: cid, createdAt: createdAt, metadata: metadata), toClient: client)
                publishManifest(&state)
                return state.manifest.postCount
            }
            return .json(200, JSONOut.compact([
                "status": "post_ok", "cid": .string(cid), "envelopes_cid": .null, "audience_mode": "public",
                "encrypted": false, "audience_uids": .null, "followers_raw": 0, "followers_used": 0,
                "manifest_posts": JSONOut.int(total),
            ]))
        }

        guard let selfEnvelope, let key = openWithStationKey(selfEnvelope) else {
            return .detail(400, "Failed to recover symmetric key from self_envelope")
        }
        let cid = blocks.add(file.data)
        log.info("Encrypted post uploaded: CID=\(cid)", logger: "cipher_station.posts")
        let metadataHex = (metadataText?.isEmpty ?? true) ? nil : metadataText
        let outcome: Result<JSONObject, AudienceError> = state.withLock { state in
            do throws(AudienceError) {
                let chosen = try recipients(state, mode: mode, uids: audienceUIDs)
                let (envelopesCID, _) = try appendEncryptedPost(
                    &state, postCID: cid, key: key, recipients: chosen, mode: mode, audienceUIDs: audienceUIDs,
                    metadataHex: metadataHex, client: client, createdAt: createdAt)
                return .success([
                    "status": "post_ok", "cid": .string(cid), "envelopes_cid": .string(envelopesCID),
                    "audience_mode": .string(mode),
                    "audience_uids": mode == "specific" ? .array((audienceUIDs ?? []).map { .string($0) }) : .null,
                    "followers_raw": JSONOut.int(state.followers.count), "followers_used": JSONOut.int(chosen.count + 1),
                    "manifest_posts": JSONOut.int(state.manifest.postCount),
                ])
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case let .success(object): return .json(200, JSONOut.compact(object))
        case let .failure(.invalid(message)): return .detail(400, message)
        }
    }

    // MARK: POST /rewrap

    func rewrap(_ request: StationRequest) async -> StationResponse {
        let model = BodyModel(fields: [.required("uid"), .required("device_uid"), .required("post_cid"), .optional("envelopes_cid")])
        let device: AuthenticatedDevice, body: JSONObject
        switch await authorize(request, owner: true, body: model) {
        case let .denied(response): return response
        case let .granted(authenticated, object): (device, body) = (authenticated, object ?? [:])
        }
        let uid = body["uid"]?.stringValue ?? "", deviceUID = body["device_uid"]?.stringValue ?? ""
        let postCID = body["post_cid"]?.stringValue ?? ""
        guard device.uid == uid, device.deviceUID == deviceUID else { return .detail(401, "header/body mismatch") }
        let result = rewrapResult(uid: uid, deviceUID: deviceUID, postCID: postCID, override: body["envelopes_cid"]?.stringValue)
        return .json(200, JSONOut.compact(["status": "ok", "result": .object(result)]))
    }

    /// `handle_rewrap_request`: the post key re-sealed to the calling device's ML-KEM key.
    func rewrapResult(uid: String, deviceUID: String, postCID: String, override: String?) -> JSONObject {
        func failure(_ text: String) -> JSONObject { ["error": .string(text)] }
        guard !uid.isEmpty else { return failure("missing uid") }
        guard !deviceUID.isEmpty else { return failure("missing device_uid") }
        guard !postCID.isEmpty else { return failure("missing post_cid") }
        let (entry, devices) = state.withLock { state in
            (state.ledger.entry(forPostCID: postCID)?.entry, state.sortedFollowers.filter { $0.uid == uid })
        }
        guard let entry else { return failure("post_cid \(postCID) not found") }
        guard let envelopesCID = (override?.isEmpty == false ? override : nil) ?? entry.envelopesCID, !envelopesCID.isEmpty else {
            return failure("post_cid \(postCID) missing envelopes_cid")
        }
        let map = envelopesMap(envelopesCID) ?? OrderedMap()
        guard let root = map[uid], !root.isEmpty else {
            return failure("root envelope missing for uid \(uid) on post_cid \(postCID)")
        }
        guard let key = openWithStationKey(root) else { return failure("open_envelope failed: ValueError('bad envelope')") }
        guard let row = devices.first(where: { $0.deviceUID == deviceUID }) else {
            return failure("device key lookup failed: 'Unknown device_uid \(deviceUID) for uid \(uid)'")
        }
        guard row.mlkemPublicKey.utf8.count == 2368 else {
            return failure("device key lookup failed: Device \(deviceUID) found but has invalid mlkem_public_key")
        }
        guard let envelope = seal(key, toHex: row.mlkemPublicKey) else { return failure("failed to create delegate envelope") }
        return ["status": "rewrap_ok", "uid": .string(uid), "device_uid": .string(deviceUID), "post_cid": .string(postCID),
                "envelope": .string(envelope)]
    }

    // MARK: POST /post/share

    func share(_ request: StationRequest) async -> StationResponse {
        let model = BodyModel(fields: [.required("post_cid"), .optional("audience_mode"), .optional("audience_uids", .stringList),
                                       .optional("client")])
        return await ownerRoute(request, body: model) { body in
            let postCID = body["post_cid"]?.stringValue ?? ""
            let requested = body["audience_mode"]?.stringValue ?? "specific"
            let audienceUIDs = body["audience_uids"]?.arrayValue?.compactMap(\.stringValue)
            guard let mode = Self.normalizeAudienceMode(requested) else { return .detail(400, "Invalid audience_mode: \(requested)") }
            guard mode != "public" else {
                return .detail(400, "Resharing to/from 'public' is not supported; create a new public post instead")
            }
            let now = Int(self.now)
            return state.withLock { state -> StationResponse in
                guard let (client, old) = state.ledger.entry(forPostCID: postCID) else {
                    return .detail(404, "Post \(postCID) not found")
                }
                guard let oldEnvelopes = old.envelopesCID, !oldEnvelopes.isEmpty else { return .detail(500, "Post has no envelopes_cid") }
                guard let selfEnvelope = envelopesMap(oldEnvelopes)?[state.uid], !selfEnvelope.isEmpty else {
                    return .detail(500, "No self envelope found; cannot recover key")
                }
                guard let key = openWithStationKey(selfEnvelope) else { return .detail(500, "Failed to recover symmetric key") }
                do throws(AudienceError) {
                    let chosen = try recipients(state, mode: mode, uids: audienceUIDs)
                    state.ledger.removeEntry(postCID: postCID, client: client)
                    // Deliberate exception (WIRE_NOTES §0.4): the station unpins and garbage-collects the
                    // post's bytes here; the emulator keeps them and drops only the old envelopes,
                    // unless told to reproduce the station.
                    if configuration.losesResharedContent { blocks.unpin(postCID) }
                    if !isReferenced(oldEnvelopes, state) { blocks.unpin(oldEnvelopes) }
                    blocks.collectGarbage()
                    let sealedMetadata = old.metadata?.sealedHex
                    let (_, count) = try appendEncryptedPost(
                        &state, postCID: postCID, key: key, recipients: chosen, mode: mode, audienceUIDs: audienceUIDs,
                        metadataHex: sealedMetadata, client: client, createdAt: now)
                    return .json(200, JSONOut.compact([
                        "status": "shared", "post_cid": .string(postCID), "audience_mode": .string(mode),
                        "audience_uids": mode == "specific" ? .array((audienceUIDs ?? []).map { .string($0) }) : .null,
                        "envelopes_count": JSONOut.int(count),
                    ]))
                } catch {
                    guard case let .invalid(message) = error else { return .detail(400, "\(error)") }
                    return .detail(400, message)
                }
            }
        }
    }

    // MARK: POST /post/delete

    func deletePost(_ request: StationRequest) async -> StationResponse {
        let model = BodyModel(fields: [.required("post_cid"), .optional("client")])
        return await ownerRoute(request, body: model) { body in
            let postCID = body["post_cid"]?.stringValue ?? ""
            let client = body["client"]?.stringValue
            return state.withLock { state -> StationResponse in
                let requestedClient = (client?.isEmpty ?? true) ? nil : client
                guard let (name, unpinned, collected) = removePost(&state, postCID: postCID, client: requestedClient) else {
                    return .detail(404, "Post \(postCID) not found in manifest")
                }
                return .json(200, JSONOut.compact([
                    "status": "deleted", "post_cid": .string(postCID), "client": .string(name),
                    "manifest_posts": JSONOut.int(state.manifest.postCount), "unpinned": .array(unpinned.map { .string($0) }),
                    "gc_objects_removed": JSONOut.int(collected),
                ]))
            }
        }
    }

    // MARK: GET /content/{cid}

    func content(_ request: StationRequest, cid: String) async -> StationResponse {
        if case let .denied(response) = await authorize(request, owner: true) { return response }
        let servable = state.withLock { isReferenced(cid, $0) }
        guard (try? CID(cid)) != nil, servable else { return .detail(404, "content not found") }
        guard !faults.isIPFSDown else { return .detail(503, "content store unavailable") }
        guard let size = servedFileSize(cid) else { return .detail(404, "content not found") }
        switch Self.rangeRequest(request.header("range"), size: size) {
        case .unsatisfiable: return .detail(416, "requested range not satisfiable")
        case .whole:
            let bytes = servedFile(cid) ?? []
            return StationResponse(status: 200, headers: [
                ("accept-ranges", "bytes"), ("content-length", String(bytes.count)), ("etag", "\"\(cid)\""),
                ("content-type", "application/octet-stream"),
            ], body: Data(bytes))
        case let .part(range):
            let bytes = servedFile(cid, range: range) ?? []
            return StationResponse(status: 206, headers: [
                ("accept-ranges", "bytes"), ("content-length", String(bytes.count)),
                ("content-range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"), ("etag", "\"\(cid)\""),
                ("content-type", "application/octet-stream"),
            ], body: Data(bytes))
        }
    }

    /// The size of the file served for `cid`: the stored file's, or that of the bytes a fault
    /// put in its place (``FaultInjector/replaceContent(of:with:)``).
    func servedFileSize(_ cid: String) -> UInt64? {
        if let replaced = faults.replacedContent(of: cid) { return UInt64(replaced.count) }
        return blocks.fileSize(cid)
    }

    /// The file (or `range` of it) served for `cid`, as ``servedFileSize(_:)`` describes.
    func servedFile(_ cid: String, range: Range<UInt64>? = nil) -> [UInt8]? {
        guard let replaced = faults.replacedContent(of: cid) else { return blocks.read(cid, range: range) }
        guard let range else { return replaced }
        return Array(replaced[Int(range.lowerBound)..<Int(min(range.upperBound, UInt64(replaced.count)))])
    }

    enum RangeAnswer: Equatable {
        case whole
        case part(Range<UInt64>)
        case unsatisfiable
    }

    /// A single `bytes=` range against a file of `size` bytes, as the IPFS gateway answers it: a
    /// header that is not a bytes range (or names several) is ignored.
    static func rangeRequest(_ header: String?, size: UInt64) -> RangeAnswer {
        guard let header, header.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(",") else { return .whole }
        let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard bounds.count == 2 else { return .unsatisfiable }
        if bounds[0].isEmpty {
            guard let suffix = UInt64(bounds[1]), suffix > 0, size > 0 else { return .unsatisfiable }
            return .part((size - min(suffix, size))..<size)
        }
        guard let start = UInt64(bounds[0]), start < size else { return .unsatisfiable }
        if bounds[1].isEmpty { return .part(start..<size) }
        guard let end = UInt64(bounds[1]), end >= start else { return .unsatisfiable }
        return .part(start..<(min(end, size - 1) + 1))
    }
}
