import Envelope
import Foundation
import Manifest
import ContentAddressing
import OrderedJSON
import PQCrypto
import ClassicalCrypto
import Transport

/// Where a listing's post keys come from: what differs between listing one's own station and a
/// followed one.
enum PostKeySource: Sendable {
    /// The owner's device: `/rewrap` through its station, opened with the device's ML-KEM key.
    case rewrap(StationClient, StationClient.ReadContext)
    /// A follower: the envelope sealed to its uid in the post's envelope set (`envelopes[uid]`),
    /// read from the gateway, each set at most once per listing.
    case envelopes(EnvelopeKeys)

    /// The key of `entry`, or `nil` when it was not shared with this reader.
    ///
    /// - Throws: ``StationClientError`` when the key cannot be had (the station refuses, the
    ///   envelope set cannot be read, the envelope does not open).
    func key(for entry: PostEntry) async throws -> SymmetricKey? {
        switch self {
        case .rewrap(let client, let context):
            try await client.rewrappedPostKey(for: entry.postCID, envelopesCID: entry.envelopesCID, context: context)
        case .envelopes(let keys):
            try await keys.key(for: entry)
        }
    }

    /// Whether only posts this source holds a key for are listed (a follower sees the posts
    /// shared with it; the owner sees every post, one without metadata needing no key).
    var listsOnlySharedPosts: Bool {
        if case .envelopes = self { return true }
        return false
    }
}

/// A follower's post keys: the envelope for its uid in each post's envelope set, from the
/// gateway (verified against the CID). Each set is fetched and parsed at most once per instance
/// (one listing, one download), however many posts name it, and concurrent readers of the same
/// set wait for a single fetch.
final class EnvelopeKeys: Sendable {
    let identity: FollowerIdentity
    let gateway: IPFSGateway
    private let opened = Locked<[String: Task<SymmetricKey?, any Error>]>([:])

    init(identity: FollowerIdentity, gateway: IPFSGateway) {
        self.identity = identity
        self.gateway = gateway
    }

    deinit {
        for task in opened.value.values { task.cancel() }
    }

    /// The post key from `envelopes[uid]`, or `nil` when the post has no envelope for this follower.
    ///
    /// - Throws: ``StationClientError`` when the envelope set cannot be read or the envelope does not open.
    func key(for entry: PostEntry) async throws -> SymmetricKey? {
        guard let envelopesCID = entry.envelopesCID else { return nil }
        let task = opened.withLock { tasks in
            if let running = tasks[envelopesCID] { return running }
            let (identity, gateway) = (identity, gateway)
            let started = Task { try await Self.key(in: envelopesCID, for: identity, gateway: gateway, postCID: entry.postCID) }
            tasks[envelopesCID] = started
            return started
        }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    /// Fetches and parses one envelope set and opens the envelope sealed to `identity`.
    private static func key(
        in envelopesCID: String, for identity: FollowerIdentity, gateway: IPFSGateway, postCID: String
    ) async throws -> SymmetricKey? {
        let operation = "opening the envelope of \(postCID)"
        let set: EnvelopeSet
        do {
            set = try WireJSON.decode(EnvelopeSet.self, from: try await gateway.fetch(cid: envelopesCID, limit: ResponseLimit.envelopeSet))
        } catch let error as StationClientError {
            throw error
        } catch {
            throw StationClientError(.invalidResponse, operation: operation, message: "not an envelope set", underlying: error)
        }
        guard let envelope = set.envelope(for: identity.uid) else { return nil }
        do {
            return try Envelope.open(envelope, with: identity.kemPrivateKey)
        } catch {
            throw StationClientError(.integrity, operation: operation, message: "the envelope does not open", underlying: error)
        }
    }
}

extension StationClient {
    /// What reading posts needs from the credentials, read once for a listing.
    struct ReadContext: Sendable {
        let kemKey: any MLKEM768DecapsulationKey
        let stationUID: String
        let deviceUID: String
        /// The `/rewrap` calls a listing may still make, or `nil` outside a listing.
        var budget: CallBudget?
    }

    nonisolated func readContext() -> ReadContext {
        let credentials = connection.credentials
        return ReadContext(kemKey: credentials.kemPrivateKey, stationUID: credentials.stationUID, deviceUID: credentials.deviceUID)
    }

    /// The key source of a listing of `posts` entries by this device: at most one `/rewrap` call
    /// per entry, retries included.
    nonisolated func ownKeySource(posts: Int) -> PostKeySource {
        var context = readContext()
        context.budget = CallBudget(calls: posts)
        return .rewrap(self, context)
    }

    /// The post key from the store, or through `/rewrap` and the device's ML-KEM key (then kept).
    ///
    /// - Throws: ``StationClientError``: `.notFound` when the station has no such post,
    ///   `.station` when it refuses the rewrap otherwise (its `result.error` text), `.integrity`
    ///   when the envelope does not open.
    nonisolated func postKey(for postCID: String, envelopesCID: String?, context: ReadContext) async throws -> SymmetricKey {
        if let cached = await postKeys.key(for: postCID) { return cached }
        let key = try await rewrappedPostKey(for: postCID, envelopesCID: envelopesCID, context: context)
        await postKeys.cache(key, for: postCID)
        return key
    }

    /// `/rewrap` and the device's ML-KEM key, without the store (see ``postKey(for:envelopesCID:context:)``).
    nonisolated func rewrappedPostKey(for postCID: String, envelopesCID: String?, context: ReadContext) async throws -> SymmetricKey {
        let operation = "POST /rewrap for \(postCID)"
        let body = Self.rewrapBody(uid: context.stationUID, deviceUID: context.deviceUID, postCID: postCID,
                                   envelopesCID: envelopesCID)
        let response = try await sendSigned(.post, "/rewrap", body: .json(body), limit: ResponseLimit.rewrap, operation: operation,
                                            budget: context.budget)
        return try Self.postKey(fromRewrap: response, postCID: postCID, kemKey: context.kemKey, operation: operation)
    }

    /// The post key in a `/rewrap` answer, opened with the device's ML-KEM key.
    ///
    /// - Throws: ``StationClientError``: the station's refusal, an unexpected answer, or
    ///   `.integrity` when the envelope does not open.
    static func postKey(fromRewrap response: HTTPResponse, postCID: String, kemKey: any MLKEM768DecapsulationKey,
                        operation: String) throws -> SymmetricKey {
        guard response.isSuccess else { throw StationClientError.station(response, operation: operation) }
        let rewrap: RewrapResponse
        do {
            rewrap = try RewrapResponse.read([UInt8](response.body.data ?? Data()))
        } catch {
            throw StationClientError(.invalidResponse, operation: operation, status: response.status,
                                     message: "unexpected answer: \(error)", underlying: error)
        }
        let envelopeHex: String
        switch rewrap.result {
        case .failed(let message):
            // Upstream's rewrap raises `KeyError("post_cid <cid> not found")` for a post it does not have.
            let unknown = message.hasPrefix("post_cid ") && message.hasSuffix(" not found")
            throw StationClientError(unknown ? .notFound : .station, operation: operation,
                                     message: unknown ? "the station has no such post" : "the station cannot rewrap the post",
                                     status: response.status, stationMessage: message)
        case .rewrapped(_, _, let returnedCID, let hex):
            guard returnedCID == postCID else {
                throw StationClientError(.invalidResponse, operation: operation, message: "the station rewrapped another post")
            }
            envelopeHex = hex
        }
        do {
            return try Envelope.open(envelopeHex, with: kemKey)
        } catch {
            throw StationClientError(.integrity, operation: operation, message: "the envelope does not open", underlying: error)
        }
    }

    /// The `/rewrap` body, `{"uid":…,"device_uid":…,"post_cid":…,"envelopes_cid":…}` in compact
    /// JSON (`envelopes_cid` is `null` for a post without one).
    static func rewrapBody(uid: String, deviceUID: String, postCID: String, envelopesCID: String?) -> [UInt8] {
        WireJSON.serialize(.object([
            "uid": .string(uid), "device_uid": .string(deviceUID), "post_cid": .string(postCID),
            "envelopes_cid": envelopesCID.map { .string($0) } ?? .null,
        ]))
    }
}
