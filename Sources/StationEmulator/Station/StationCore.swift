import Envelope
import Foundation
import Transport
import Manifest
import PQCrypto
import Signing
import ClassicalCrypto
import SHA2
import OrderedJSON
import ContentAddressing

/// The station itself: identity, tables, manifest, IPFS repository, and the handlers of every
/// route. Thread-safe: state lives behind one lock, and a mutation (post, share, approve, …)
/// runs under it from start to end, like the station's `STATE_LOCK`.
final class StationCore: Sendable {
    let identity: StationIdentity
    let state: Locked<StationState>
    let blocks: BlockStore
    let log: StationLog
    let clock: any StationClock
    let configuration: StationEmulator.Configuration
    let faults: FaultInjector
    let nonces: InMemoryNonceStore
    let verifier: RequestVerifier

    init(configuration: StationEmulator.Configuration, log: StationLog, faults: FaultInjector) throws {
        self.configuration = configuration
        self.log = log
        self.faults = faults
        clock = configuration.clock
        let directory = configuration.dataDirectory
        if let directory { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        blocks = try BlockStore(directory: directory)

        var restored: StationState?
        if let directory {
            let (keys, created) = try StationIdentity.loadOrCreate(in: directory)
            identity = keys
            let stateURL = directory.appendingPathComponent("state.json")
            if !created, let data = FileManager.default.contents(atPath: stateURL.path) {
                do {
                    restored = try JSONDecoder().decode(StationSnapshot.self, from: data).restore(blocks: blocks)
                } catch {
                    throw StationEmulatorError.corruptState(path: stateURL.path, reason: "\(error)")
                }
            }
        } else {
            identity = StationIdentity.generate()
        }
        let keys = identity
        var fresh = restored ?? StationState(publicDocument: PublicDocument(
            uid: UUID().uuidString.lowercased(), mlkemPublicKey: keys.mlkemPublicHex, mldsaPublicKey: keys.mldsaPublicHex))
        // Startup, as on a station: the keys in public.json follow the key files, and the station
        // is (re-)registered as its own Allowed follower.
        fresh.publicDocument.mlkemPublicKey = keys.mlkemPublicHex
        fresh.publicDocument.mldsaPublicKey = keys.mldsaPublicHex
        fresh.upsertFollower(FollowerRow(
            uid: fresh.uid, deviceUID: fresh.uid, mlkemPublicKey: keys.mlkemPublicHex, mldsaPublicKey: keys.mldsaPublicHex,
            alias: fresh.publicDocument.alias, allowed: "Allowed"))
        let shared = Locked(fresh)
        state = shared
        let clock = configuration.clock
        nonces = InMemoryNonceStore(clock: { Int64(clock.now()) })
        verifier = RequestVerifier(
            devices: DeviceDirectory { uid, deviceUID in
                shared.withLock { state in
                    guard let row = state.followers.first(where: {
                        $0.uid == uid && $0.deviceUID == deviceUID && $0.allowed == "Allowed"
                    }) else { return .notAuthorized }
                    return .authorized(mldsaPublicKeyHex: row.mldsaPublicKey)
                }
            },
            nonces: nonces)
        let node = identity.node
        state.withLock { state in
            // Kubo keeps its IPNS record across restarts; a reopened emulator signs its last one again.
            guard state.ipnsRecords.isEmpty, let cid = state.publishedPublicCID else { return }
            state.ipnsSequence = max(state.ipnsSequence, 1)
            state.ipnsRecords = [IPNSRecord.make(
                value: "/ipfs/\(cid)", sequence: state.ipnsSequence,
                validity: Date(timeIntervalSince1970: clock.now() + Self.ipnsRecordLifetime), signingKey: node.key)]
        }
        state.withLock { persist($0) }
        log.info("Station ready: uid=\(fresh.uid), device_uid=\(fresh.uid)")
    }

    var uid: String { state.withLock { $0.uid } }

    var now: Int64 { Int64(clock.now().rounded(.down)) }

    // MARK: Persistence

    /// Writes the state to the data directory (when there is one). Call under the state lock.
    func persist(_ state: StationState) {
        guard let directory = configuration.dataDirectory,
              let data = try? JSONEncoder().encode(StationSnapshot(state)) else { return }
        try? data.write(to: directory.appendingPathComponent("state.json"), options: .atomic)
    }

    // MARK: Publishing (call under the state lock)

    /// Publishes the manifest (compact JSON) and points `public.json` at it; returns its CID.
    /// The ledger keeps the document's bytes and says where they changed, so only the chunks
    /// from there on are hashed.
    @discardableResult
    func publishManifest(_ state: inout StationState) -> String {
        let document = state.ledger.document()
        let cid = blocks.add(document.bytes, unchangedPrefix: document.unchangedPrefix, revising: &state.ledger.publishedFile)
        state.publicDocument.manifestPointer = cid
        publishPublicDocument(&state)
        return cid
    }

    /// The IPNS publish: `public.json` (indent=2) is added to the repository and `/ipns/<name>`
    /// resolves to it. The first publish also records the node's peer id and IPNS name, as the
    /// station's publisher does. The emulator publishes at once instead of 2 s later.
    func publishPublicDocument(_ state: inout StationState) {
        if state.publicDocument.ipfsPeerID == nil { state.publicDocument.ipfsPeerID = identity.node.peerID }
        if state.publicDocument.ipnsName == nil { state.publicDocument.ipnsName = identity.node.ipnsName }
        let value = (try? WireJSON.value(of: state.publicDocument)) ?? .null
        let cid = blocks.add(JSONOut.indented(value))
        if let previous = state.publishedPublicCID, previous != cid, !isReferenced(previous, state) {
            blocks.unpin(previous)
        }
        state.publishedPublicCID = cid
        // The IPNS record: signed by the node's key, the next sequence, valid 48 hours (Kubo's default).
        state.ipnsSequence += 1
        let record = IPNSRecord.make(value: "/ipfs/\(cid)", sequence: state.ipnsSequence,
                                     validity: Date(timeIntervalSince1970: clock.now() + Self.ipnsRecordLifetime),
                                     signingKey: identity.node.key)
        state.ipnsRecords.append(record)
        if state.ipnsRecords.count > 32 { state.ipnsRecords.removeFirst(state.ipnsRecords.count - 32) }
        persist(state)
    }

    /// How long a published IPNS record is valid: Kubo's default `--lifetime` of 48 hours.
    static let ipnsRecordLifetime: Double = 48 * 3600

    /// Publishes a post's envelopes document `{"v":1,"post_cid":…,"envelopes":{…}}`.
    func publishEnvelopes(postCID: String, envelopes: OrderedMap<String>) -> String {
        let bytes = (try? WireJSON.encode(EnvelopeSet(postCID: postCID, envelopes: envelopes), style: .compact)) ?? []
        return blocks.add(bytes)
    }

    /// The `uid → envelope hex` map of a published envelopes document, or `nil` when it is not
    /// local or not an envelopes document.
    func envelopesMap(_ cid: String) -> OrderedMap<String>? {
        guard let bytes = blocks.read(cid), let document = try? WireJSON.parse(bytes),
              let envelopes = document["envelopes"]?.objectValue else { return nil }
        var map = OrderedMap<String>()
        for (uid, value) in envelopes { if let text = value.stringValue { map[uid] = text } }
        return map
    }

    /// Whether the station's state references `cid`: what `/content` may serve
    /// (`station_content_cids`: the manifest's posts, envelopes and avatars, and the documents
    /// `public.json` points at).
    func isReferenced(_ cid: String, _ state: StationState) -> Bool {
        guard !cid.isEmpty else { return false }
        let document = state.publicDocument
        return state.ledger.references(cid)
            || [document.manifestPointer, document.followingCID, document.followersCID, document.followDecoderEnvelopesCID].contains(cid)
    }

    /// Seals `key` to a recipient's ML-KEM public key given in hex; `nil` when the key is not a
    /// valid 1184-byte encapsulation key (the station skips such recipients).
    func seal(_ key: SymmetricKey, toHex publicKeyHex: String) -> String? {
        guard publicKeyHex.utf8.count == 2 * MLKEM768.publicKeyByteCount,
              let bytes = try? Hex.decode(publicKeyHex),
              let publicKey = try? MLKEM768.PublicKey(rawRepresentation: bytes) else { return nil }
        return try? Envelope.seal(key, to: publicKey)
    }

    /// Opens an envelope with the station's ML-KEM key; `nil` on any failure.
    func openWithStationKey(_ envelopeHex: String) -> SymmetricKey? {
        guard let key = try? Envelope.open(envelopeHex, with: identity.mlkem), key.bitCount == 256 else { return nil }
        return key
    }

    // MARK: Auth

    enum Access {
        case granted(AuthenticatedDevice, JSONObject?)
        case denied(StationResponse)
    }

    /// Runs `require_delegate` (and `require_owner` when `owner`), then validates the JSON body
    /// against `model`, in FastAPI's order: header errors and body errors share one 422;
    /// authentication failures come before body validation.
    func authorize(_ request: StationRequest, owner: Bool, body model: BodyModel? = nil) async -> Access {
        let path = request.path
        let hashed = RequestVerifier.bodyHashedPaths.contains(path)
        let now = hashed ? Int64(request.receivedAt.rounded(.down)) : self.now
        let device: AuthenticatedDevice
        do {
            device = try await verifier.verify(
                method: request.method, path: path, headers: request.headers,
                rawBodySHA256: hashed ? SHA256.hash(data: request.body) : nil, now: now)
            if owner { try RequestVerifier.requireOwner(device, stationUID: uid) }
        } catch {
            if case let .missingHeaders(names) = error {
                var errors = BodyModel.missingHeaderErrors(names)
                if let model, case let .failure(bodyErrors) = model.validate(request.body) { errors += bodyErrors.items }
                return .denied(BodyModel.unprocessable(errors))
            }
            return .denied(StationResponse(status: error.status, headers: [("content-type", error.contentType)],
                                           body: Data(error.responseBody.utf8)))
        }
        guard let model else { return .granted(device, nil) }
        switch model.validate(request.body) {
        case let .success(object): return .granted(device, object)
        case let .failure(errors): return .denied(BodyModel.unprocessable(errors.items))
        }
    }

    /// Answers an owner-only route with a JSON body: the denial of ``authorize(_:owner:body:)``
    /// (401, 403, or one 422 for missing headers and what `model` rejects in the body), else
    /// `handle`'s answer to the validated body.
    func ownerRoute(_ request: StationRequest, body model: BodyModel,
                    _ handle: (JSONObject) async -> StationResponse) async -> StationResponse {
        switch await authorize(request, owner: true, body: model) {
        case let .denied(response): return response
        case let .granted(_, object): return await handle(object ?? [:])
        }
    }
}

extension JSONValue {
    /// Python truthiness: `None`, `False`, `0`, `""`, `[]`, `{}` are false.
    var isTruthy: Bool {
        switch self {
        case .null: false
        case let .bool(flag): flag
        case let .number(number): number.doubleValue != 0
        case let .string(text): !text.isEmpty
        case let .array(items): !items.isEmpty
        case let .object(object): !object.isEmpty
        }
    }
}

extension String {
    /// Python's `str.strip()` (whitespace at both ends).
    var pythonStripped: String {
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }

    /// Lower-case hexadecimal digits only, and an even count (`bytes.fromhex` without spaces).
    var isStrictHex: Bool {
        utf8.count % 2 == 0 && utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0) }
    }
}
