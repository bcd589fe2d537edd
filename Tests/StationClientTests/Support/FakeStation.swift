import Envelope
import Foundation
import Manifest
import PQCrypto
import Signing
import Sodium
import Transport

/// A small in-memory Cipher Station answering like WIRE_NOTES says, for unit-testing the client
/// until the full `StationEmulator` lands. It verifies signatures with `Signing.RequestVerifier`,
/// opens `self_envelope`s with its own ML-KEM key, rewraps to device keys, computes real CIDs,
/// and serves a gateway (`/ipfs`, `/ipns`) on a second host. Fault switches drive failure tests.
actor FakeStation {
    static let gatewayHost = "gateway.test"

    let uid = "da27af3e-b2ac-4d02-a894-3c22d638d1ba"
    let kemKey = MLKEM768.PrivateKey.generate()
    let signingKey = MLDSA65.PrivateKey.generate()
    let ipnsName = "k51qzi5uqu5dlwnmtajufakestation"
    /// The host the station answers on; others refuse connections.
    var host = "station-a.test"
    /// The endpoint `public.json` advertises when served over loopback (else `http://<host>`).
    var advertisedEndpoint: URL?
    var pin = "123456"

    // Fault switches.
    var isDown = false
    var clockSkew: Int64 = 0
    var losePostAnswers = 0
    var throttleConfirm = false
    var expireSessions = false
    var tunnelErrorsLeft = 0
    var contentUnavailable = false
    /// Streamed `/content` answers break after this many bytes (once each), to test resuming.
    var breakStreamsAfter: [Int] = []

    // Observations.
    var requestLog: [String] = []
    var postRequests = 0
    var rewrapRequests = 0

    private var sessions: [String: (deviceUID: String, kem: String, dsa: String, attempts: Int, status: String)] = [:]
    private var devices: [String: (kem: String, dsa: String)] = [:]
    private var followers: [String: (kem: String, dsa: String, allowed: Bool)] = [:]
    private var blobs: [String: [UInt8]] = [:]
    private var manifest = Manifest()
    private var manifestCID: String?
    private var selfEnvelopes: [String: String] = [:]
    private let nonces = InMemoryNonceStore()
    private var graphCIDs: (followers: String, following: String, decoders: String)?

    var endpoint: URL { URL(string: "http://\(host)")! }
    var kemPublicKeyHex: String { Hex.encode(kemKey.publicKey.rawRepresentation) }

    func update(_ body: @Sendable (isolated FakeStation) -> Void) { body(self) }
    func blob(_ cid: String) -> [UInt8]? { blobs[cid] }
    func takeStreamBreak() -> Int? { breakStreamsAfter.isEmpty ? nil : breakStreamsAfter.removeFirst() }
    func setBlob(_ cid: String, _ bytes: [UInt8]) { blobs[cid] = bytes }
    func posts(in namespace: String) -> [PostEntry] { manifest.posts(in: namespace) }
    func pairedDevices() -> [String] { Array(devices.keys) }

    /// Replaces the envelope set of a post with garbage that still parses (the envelope does not open).
    func corruptEnvelope(of postCID: String) {
        guard let envelope = selfEnvelopes[postCID] else { return }
        var bytes = (try? Hex.decode(envelope)) ?? []
        bytes[bytes.count - 1] ^= 1
        selfEnvelopes[postCID] = Hex.encode(bytes)
    }

    /// Flips a bit in a post's sealed metadata in the manifest (the metadata no longer opens).
    func corruptMetadata(of postCID: String) {
        guard let found = manifest.entry(forPostCID: postCID), case .sealed(let hex)? = found.entry.metadata,
              var namespace = manifest.clients[found.client],
              let index = namespace.posts.firstIndex(where: { $0.postCID == postCID }) else { return }
        var bytes = (try? Hex.decode(hex)) ?? []
        bytes[bytes.count - 1] ^= 1
        namespace.posts[index].metadata = .sealed(hex: Hex.encode(bytes))
        manifest.clients[found.client] = namespace
        publishManifest()
    }

    // MARK: Transport

    func handle(_ request: HTTPRequest, body: [UInt8]) async throws -> HTTPResponse {
        let host = request.url.port.map { "\(request.url.host ?? ""):\($0)" } ?? request.url.host ?? ""
        let path = request.url.path
        requestLog.append("\(request.method) \(host)\(path)")
        if host == Self.gatewayHost { return gateway(path) }
        guard host == self.host, !isDown else {
            throw TransportError(.cannotConnect, method: request.method, url: request.url, message: "connection refused")
        }
        if tunnelErrorsLeft > 0 {
            tunnelErrorsLeft -= 1
            return HTTPResponse(status: 502, body: .data(Data("Bad Gateway".utf8)))
        }
        switch (request.method, path) {
        case (.get, "/health"):
            return json(200, ["status": "healthy", "checks": ["database": true, "ipfs": true, "identity": true]])
        case (.get, "/profile"):
            return json(200, profileObject())
        case (.post, "/delegate/start"):
            return delegateStart(body)
        case (.post, "/delegate/confirm"):
            return delegateConfirm(body)
        case (.post, "/inbox"):
            return inbox(body)
        default:
            break
        }
        // Signed owner endpoints.
        let now = Int64(Date().timeIntervalSince1970) + clockSkew
        let hashed = RequestVerifier.bodyHashedPaths.contains(path) ? SHA256.hash(data: body) : nil
        let keys = devices.mapValues(\.dsa)
        let directory = DeviceDirectory { _, deviceUID in
            guard let key = keys[deviceUID] else { return .notAuthorized }
            return .authorized(mldsaPublicKeyHex: key)
        }
        let verifier = RequestVerifier(devices: directory, nonces: nonces)
        do {
            let device = try await verifier.verify(
                method: request.method.rawValue, path: path,
                headers: request.headers.map { (name: $0.name, value: $0.value) }, rawBodySHA256: hashed, now: now)
            try RequestVerifier.requireOwner(device, stationUID: uid)
        } catch {
            var response = HTTPResponse(status: error.status, body: .data(Data(error.responseBody.utf8)))
            response.headers.add("Date", value: Self.httpDate(now))
            return response
        }
        switch (request.method, path) {
        case (.post, "/post"): return post(request, body)
        case (.post, "/rewrap"): return rewrap(body)
        case (.post, "/post/delete"): return delete(body)
        case (.post, "/post/share"): return share(body)
        case (.get, "/followers/pending"):
            let pending: [JSONValue] = followers.filter { !$0.value.allowed }.map { uid, value in
                .object(["uid": .string(uid), "device_uid": .string(uid), "mlkem_public_key": .string(value.kem),
                         "mldsa_public_key": .string(value.dsa), "alias": nil, "allowed": "Pending", "endpoint": nil, "ipns_id": nil])
            }
            return json(200, ["status": "ok", "pending": .array(pending)])
        case (.get, "/followers"):
            let list: [JSONValue] = followers.filter(\.value.allowed).map { uid, _ in
                .object(["uid": .string(uid), "alias": nil, "endpoint": nil, "ipns_id": nil])
            }
            return json(200, ["status": "ok", "followers": .array(list)])
        case (.post, "/followers/approve"): return approve(body)
        default:
            if request.method == .get, path.hasPrefix("/content/") { return content(String(path.dropFirst(9)), request) }
            return json(404, ["detail": "Not Found"])
        }
    }

    static func httpDate(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    private func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: .data(Data(WireJSON.serialize(value))))
    }

    private func parse(_ body: [UInt8]) -> JSONObject { (try? WireJSON.parse(body).objectValue) ?? [:] }

    func profileObject() -> JSONValue {
        .object([
            "uid": .string(uid), "mlkem_public_key": .string(kemPublicKeyHex),
            "mldsa_public_key": .string(Hex.encode(signingKey.publicKey.rawRepresentation)), "endpoint": nil,
            "ipfs_peer_id": "12D3KooWFake", "ipns_name": .string(ipnsName),
            "manifest_cid": manifestCID.map { .string($0) } ?? nil, "followers_count": 0, "following_count": 0,
            "manifest_posts": .number(JSONNumber(manifest.postCount)), "manifest_posts_total": .number(JSONNumber(manifest.postCount)),
            "manifest_posts_by_client": .object(manifest.postCountsByClient.mapValues { .number(JSONNumber($0)) }),
        ])
    }

    // MARK: Pairing

    private func delegateStart(_ body: [UInt8]) -> HTTPResponse {
        let object = parse(body)
        guard let deviceUID = object["device_uid"]?.stringValue, let kem = object["mlkem_public_key"]?.stringValue,
              let dsa = object["mldsa_public_key"]?.stringValue else {
            return json(422, ["detail": [["type": "missing", "loc": ["body", "device_uid"], "msg": "Field required", "input": nil]]])
        }
        guard kem.count == 2368 else { return json(400, ["detail": "device_mlkem_public_key must be 2368 hex chars"]) }
        guard dsa.count == 3904 else { return json(400, ["detail": "device_mldsa_public_key must be 3904 hex chars"]) }
        let id = "pair\(sessions.count)" + String(repeating: "x", count: 20)
        sessions[id] = (deviceUID, kem, dsa, 0, "pending")
        return json(200, ["status": "ok", "pairing_id": .string(id), "expires_in_seconds": 300])
    }

    private func delegateConfirm(_ body: [UInt8]) -> HTTPResponse {
        if throttleConfirm { return json(429, ["detail": "too many failed pairing attempts; pairing is temporarily locked"]) }
        let object = parse(body)
        guard let id = object["pairing_id"]?.stringValue, var session = sessions[id] else {
            return json(400, ["detail": "pairing_id not found"])
        }
        guard session.status == "pending" else {
            return json(400, .object(["detail": .string("pairing session is not pending (status=\(session.status))")]))
        }
        if expireSessions { return json(400, ["detail": "pairing session expired"]) }
        guard session.attempts < 5 else { return json(400, ["detail": "pairing session locked (too many attempts)"]) }
        guard object["pin"]?.stringValue == pin else {
            session.attempts += 1
            sessions[id] = session
            return json(400, ["detail": "invalid PIN"])
        }
        session.status = "confirmed"
        sessions[id] = session
        devices[session.deviceUID] = (session.kem, session.dsa)
        return json(200, ["status": "ok", "action": "delegate_added", "uid": .string(uid), "device_uid": .string(session.deviceUID)])
    }

    // MARK: Posts

    private func post(_ request: HTTPRequest, _ body: [UInt8]) -> HTTPResponse {
        postRequests += 1
        guard let contentType = request.headers["Content-Type"], let range = contentType.range(of: "boundary=") else {
            return json(422, ["detail": [["type": "missing", "loc": ["body", "file"], "msg": "Field required", "input": nil]]])
        }
        let parts = Self.multipartParts(body, boundary: String(contentType[range.upperBound...]))
        guard let file = parts["file"] else {
            return json(422, ["detail": [["type": "missing", "loc": ["body", "file"], "msg": "Field required", "input": nil]]])
        }
        let mode = parts["audience_mode"].map { String(decoding: $0, as: UTF8.self) } ?? "all"
        let client = parts["client"].map { String(decoding: $0, as: UTF8.self) }
        let cid = UnixFS.cid(of: file).description
        if mode == "public" {
            blobs[cid] = file
            let metadata = parts["metadata"].flatMap { try? WireJSON.parse($0).objectValue }
            appendEntry(.publicPost(postCID: cid, createdAt: Int(Date().timeIntervalSince1970), metadata: metadata), client: client)
            return json(200, ["status": "post_ok", "cid": .string(cid), "envelopes_cid": nil, "audience_mode": "public",
                              "encrypted": false, "audience_uids": nil, "followers_raw": 0, "followers_used": 0,
                              "manifest_posts": .number(JSONNumber(manifest.postCount))])
        }
        guard let envelopeBytes = parts["self_envelope"] else {
            return json(400, ["detail": "self_envelope is required for non-public posts"])
        }
        let envelope = String(decoding: envelopeBytes, as: UTF8.self)
        guard let key = try? Envelope.open(envelope, with: kemKey) else {
            return json(400, ["detail": "Failed to recover symmetric key from self_envelope"])
        }
        var uids: [String]?
        if mode == "specific" {
            let text = parts["audience_uids"].map { String(decoding: $0, as: UTF8.self) } ?? "[]"
            uids = (try? WireJSON.parse(Array(text.utf8)).arrayValue?.compactMap(\.stringValue)) ?? []
            let unknown = (uids ?? []).filter { followers[$0]?.allowed != true }
            guard unknown.isEmpty else {
                return json(400, .object(["detail": .string("Specific audience contains uids that are not Allowed followers (or unknown): \(unknown.joined(separator: ","))")]))
            }
        }
        blobs[cid] = file
        selfEnvelopes[cid] = envelope
        let envelopesCID = storeEnvelopes(for: cid, key: key, mode: mode, uids: uids)
        let metadataHex = parts["metadata"].map { String(decoding: $0, as: UTF8.self) }
        appendEntry(.encrypted(postCID: cid, audienceMode: AudienceMode(wireValue: mode), envelopesCID: envelopesCID.cid,
                               envelopesCount: envelopesCID.count, createdAt: Int(Date().timeIntervalSince1970),
                               audienceUIDs: uids, sealedMetadataHex: metadataHex), client: client)
        if losePostAnswers > 0 {
            losePostAnswers -= 1
            return HTTPResponse(status: -1)
        }
        return json(200, ["status": "post_ok", "cid": .string(cid), "envelopes_cid": .string(envelopesCID.cid),
                          "audience_mode": .string(mode), "audience_uids": uids.map { .array($0.map { .string($0) }) } ?? nil,
                          "followers_raw": 2, "followers_used": 1, "manifest_posts": .number(JSONNumber(manifest.postCount))])
    }

    private func storeEnvelopes(for postCID: String, key: SymmetricKey, mode: String, uids: [String]?) -> (cid: String, count: Int) {
        var envelopes: OrderedMap<String> = [uid: selfEnvelopes[postCID] ?? ""]
        let readers: [String]
        switch mode {
        case "all": readers = followers.filter(\.value.allowed).map(\.key).sorted()
        case "specific": readers = uids ?? []
        default: readers = []
        }
        for reader in readers {
            if let follower = followers[reader], let pk = try? MLKEM768.PublicKey(rawRepresentation: Hex.decode(follower.kem)) {
                envelopes[reader] = try? Envelope.seal(key, to: pk)
            }
        }
        let bytes = WireJSON.serialize(.object(["v": 1, "post_cid": .string(postCID),
                                                "envelopes": .object(envelopes.mapValues { .string($0) })]))
        let cid = UnixFS.cid(of: bytes).description
        blobs[cid] = bytes
        return (cid, envelopes.count)
    }

    private func appendEntry(_ entry: PostEntry, client: String?) {
        manifest.append(entry, toClient: client)
        publishManifest()
    }

    private func publishManifest() {
        let bytes = (try? WireJSON.encode(manifest)) ?? []
        let cid = UnixFS.cid(of: bytes).description
        blobs[cid] = bytes
        manifestCID = cid
    }

    private func rewrap(_ body: [UInt8]) -> HTTPResponse {
        rewrapRequests += 1
        let object = parse(body)
        guard let postCID = object["post_cid"]?.stringValue, let deviceUID = object["device_uid"]?.stringValue else {
            return json(422, ["detail": "missing"])
        }
        guard manifest.entry(forPostCID: postCID) != nil, let envelope = selfEnvelopes[postCID] else {
            return json(200, ["status": "ok", "result": .object(["error": .string("post_cid \(postCID) not found")])])
        }
        guard let device = devices[deviceUID], let pk = try? MLKEM768.PublicKey(rawRepresentation: Hex.decode(device.kem)) else {
            return json(200, ["status": "ok", "result": ["error": "device key lookup failed: unknown device"]])
        }
        // A corrupted stored envelope is passed on as garbage (the device cannot open it).
        let rewrapped: String
        if let key = try? Envelope.open(envelope, with: kemKey), let sealed = try? Envelope.seal(key, to: pk) {
            rewrapped = sealed
        } else {
            rewrapped = envelope
        }
        return json(200, ["status": "ok", "result": .object([
            "status": "rewrap_ok", "uid": .string(uid), "device_uid": .string(deviceUID), "post_cid": .string(postCID),
            "envelope": .string(rewrapped)])])
    }

    private func content(_ cid: String, _ request: HTTPRequest) -> HTTPResponse {
        if contentUnavailable { return json(503, ["detail": "content store unavailable"]) }
        let servable = cid == manifestCID || manifest.entry(forPostCID: cid) != nil
            || manifest.allPosts.contains { $0.entry.envelopesCID == cid }
        guard servable, let bytes = blobs[cid] else { return json(404, ["detail": "content not found"]) }
        if let range = request.headers["Range"], range.hasPrefix("bytes="), range.hasSuffix("-"),
           let start = Int(range.dropFirst(6).dropLast()) {
            guard start < bytes.count else { return json(416, ["detail": "requested range not satisfiable"]) }
            return HTTPResponse(status: 206, headers: ["Content-Range": "bytes \(start)-\(bytes.count - 1)/\(bytes.count)",
                                                       "Content-Length": "\(bytes.count - start)"],
                                body: .data(Data(bytes[start...])))
        }
        return HTTPResponse(status: 200, headers: ["Content-Length": "\(bytes.count)", "ETag": "\"\(cid)\""], body: .data(Data(bytes)))
    }

    private func delete(_ body: [UInt8]) -> HTTPResponse {
        let object = parse(body)
        let postCID = object["post_cid"]?.stringValue ?? ""
        guard let removed = manifest.removeEntry(postCID: postCID) else {
            return json(404, .object(["detail": .string("Post \(postCID) not found in manifest")]))
        }
        blobs[postCID] = nil
        publishManifest()
        return json(200, ["status": "deleted", "post_cid": .string(postCID), "client": .string(removed.client),
                          "manifest_posts": .number(JSONNumber(manifest.postCount)),
                          "unpinned": .array([.string(postCID)]), "gc_objects_removed": 1])
    }

    /// Reproduces the upstream bug: the bytes are garbage-collected during a reshare.
    private func share(_ body: [UInt8]) -> HTTPResponse {
        let object = parse(body)
        let postCID = object["post_cid"]?.stringValue ?? ""
        guard let found = manifest.entry(forPostCID: postCID) else {
            return json(404, .object(["detail": .string("Post \(postCID) not found")]))
        }
        let mode = object["audience_mode"]?.stringValue ?? "specific"
        if mode == "public" { return json(400, ["detail": "Resharing to/from 'public' is not supported; create a new public post instead"]) }
        _ = manifest.removeEntry(postCID: postCID)
        blobs[postCID] = nil
        var entry = found.entry
        entry.audienceMode = AudienceMode(wireValue: mode)
        manifest.append(entry, toClient: found.client)
        publishManifest()
        return json(200, ["status": "shared", "post_cid": .string(postCID), "audience_mode": .string(mode), "audience_uids": nil,
                          "envelopes_count": 1])
    }

    // MARK: Followers

    private func inbox(_ body: [UInt8]) -> HTTPResponse {
        let object = parse(body)
        guard object["type"]?.stringValue == "follow_request", let followerUID = object["uid"]?.stringValue,
              let device = object["devices"]?.arrayValue?.first,
              let kem = device["mlkem_public_key"]?.stringValue, let dsa = device["mldsa_public_key"]?.stringValue else {
            return json(200, ["status": "ok", "result": ["error": "unsupported inbox message"]])
        }
        guard kem.count == 2368 else {
            return json(200, ["status": "ok", "result": ["error": "follow_request mlkem_public_key must be 2368 hex chars"]])
        }
        let added = followers[followerUID] == nil ? 1 : 0
        if added == 1 { followers[followerUID] = (kem, dsa, false) }
        return json(200, ["status": "ok", "result": .object([
            "status": "follow_request_pending_multi_device", "rewrap_triggered": false,
            "devices_added": .number(JSONNumber(added)), "pending_approval": 1])])
    }

    private func approve(_ body: [UInt8]) -> HTTPResponse {
        let object = parse(body)
        guard let followerUID = object["uid"]?.stringValue, var follower = followers[followerUID] else {
            return json(404, ["detail": "no matching follower"])
        }
        follower.allowed = true
        followers[followerUID] = follower
        // Rewrap every `all` post so the new follower gets an envelope.
        for (client, entry) in manifest.allPosts where entry.audienceMode == .all {
            guard let envelope = selfEnvelopes[entry.postCID], let key = try? Envelope.open(envelope, with: kemKey) else { continue }
            let stored = storeEnvelopes(for: entry.postCID, key: key, mode: "all", uids: nil)
            if var namespace = manifest.clients[client],
               let index = namespace.posts.firstIndex(where: { $0.postCID == entry.postCID }) {
                namespace.posts[index].envelopesCID = stored.cid
                namespace.posts[index].envelopesCount = stored.count
                manifest.clients[client] = namespace
            }
        }
        publishManifest()
        rebuildGraph()
        return json(200, ["status": "ok", "action": "approve_follower", "uid": .string(followerUID), "device_uid": nil,
                          "devices_approved": 1])
    }

    /// The station's encrypted social graph: one fresh key seals both graphs; each allowed
    /// follower gets a decoder envelope holding it.
    private func rebuildGraph() {
        let key = SymmetricKey(randomByteCount: 32)
        let allowed = followers.filter(\.value.allowed).map(\.key).sorted()
        func publish(_ value: JSONValue) -> String {
            let sealed = [UInt8]((try? SecretBox.seal(WireJSON.serialize(value, style: .pythonDefault), using: key)) ?? Data())
            let cid = UnixFS.cid(of: sealed).description
            blobs[cid] = sealed
            return cid
        }
        let followersCID = publish(.object(["version": 1, "followers": .array(allowed.map { .object(["uid": .string($0)]) })]))
        let followingCID = publish(.object(["version": 1, "following": []]))
        var envelopes = JSONObject()
        for uid in allowed {
            guard let follower = followers[uid], let pk = try? MLKEM768.PublicKey(rawRepresentation: Hex.decode(follower.kem)),
                  let envelope = try? Envelope.seal(key, to: pk) else { continue }
            envelopes[uid] = .array([.object(["device_uid": .string(uid), "envelope": .string(envelope)])])
        }
        let decoders = WireJSON.serialize(.object(["version": 1, "envelopes": .object(envelopes)]), style: .pythonDefault)
        let decodersCID = UnixFS.cid(of: decoders).description
        blobs[decodersCID] = decoders
        graphCIDs = (followersCID, followingCID, decodersCID)
    }

    // MARK: Gateway

    private func gateway(_ path: String) -> HTTPResponse {
        if path.hasPrefix("/ipfs/") {
            guard let bytes = blobs[String(path.dropFirst(6))] else { return HTTPResponse(status: 404) }
            return HTTPResponse(status: 200, body: .data(Data(bytes)))
        }
        if path == "/ipns/\(ipnsName)" {
            let document: JSONValue = .object([
                "uid": .string(uid), "mlkem_public_key": .string(kemPublicKeyHex),
                "mldsa_public_key": .string(Hex.encode(signingKey.publicKey.rawRepresentation)),
                "endpoint": .string((advertisedEndpoint ?? endpoint).absoluteString), "manifest_pointer": manifestCID.map { .string($0) } ?? nil,
                "ipns_name": .string(ipnsName),
                "followers_cid": graphCIDs.map { .string($0.followers) } ?? nil,
                "following_cid": graphCIDs.map { .string($0.following) } ?? nil,
                "follow_decoder_envelopes_cid": graphCIDs.map { .string($0.decoders) } ?? nil,
            ])
            return HTTPResponse(status: 200, body: .data(Data(WireJSON.serialize(document, style: .pythonIndented))))
        }
        return HTTPResponse(status: 404)
    }

    static func multipartParts(_ body: [UInt8], boundary: String) -> [String: [UInt8]] {
        let data = Data(body)
        let delimiter = Data("--\(boundary)".utf8)
        var parts: [String: [UInt8]] = [:]
        var cursor = data.startIndex
        while let start = data.range(of: delimiter, in: cursor..<data.endIndex) {
            let afterDelimiter = start.upperBound
            guard let next = data.range(of: Data("\r\n--\(boundary)".utf8), in: afterDelimiter..<data.endIndex) else { break }
            let part = data[afterDelimiter..<next.lowerBound]
            if let split = part.range(of: Data("\r\n\r\n".utf8)) {
                let head = String(decoding: part[part.startIndex..<split.lowerBound], as: UTF8.self)
                if let nameRange = head.range(of: "name=\"") {
                    let name = String(head[nameRange.upperBound...].prefix { $0 != "\"" })
                    parts[name] = [UInt8](part[split.upperBound...])
                }
            }
            cursor = next.lowerBound + 2
        }
        return parts
    }
}

/// The fake station as an `HTTPTransport`. A response with status -1 means "the answer was lost":
/// the request was processed, then the connection broke.
struct FakeTransport: HTTPTransport {
    let station: FakeStation

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        let bytes = try await body.collect(upTo: 200 << 20, for: request)
        options.progress?(TransferProgress(bytesSent: Int64(bytes.count), expectedBytesToSend: body.knownLength,
                                           bytesReceived: 0, expectedBytesToReceive: nil))
        let response = try await station.handle(request, body: [UInt8](bytes))
        if response.status == -1 {
            throw TransportError(.connectionLost, method: request.method, url: request.url, message: "the answer was lost")
        }
        let data = response.body.data ?? Data()
        if case .stream = options.response, request.url.path.hasPrefix("/content/"),
           let cut = await station.takeStreamBreak(), cut < data.count {
            let sent = Locked(false)
            let stream = HTTPBodyStream(length: nil) {
                if sent.withLock({ let was = $0; $0 = true; return was }) {
                    throw TransportError(.connectionLost, method: request.method, url: request.url, message: "connection reset")
                }
                return data.prefix(cut)
            }
            return HTTPResponse(status: response.status, headers: response.headers, body: .stream(stream))
        }
        return HTTPResponse(status: response.status, headers: response.headers, body: try options.response.deliver(data, for: request))
    }
}
