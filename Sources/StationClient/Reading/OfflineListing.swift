import Foundation
import Manifest
import ContentAddressing
import OrderedJSON
import PQCrypto
import ClassicalCrypto
import Transport

/// The offline view: the last listing read online of each namespace, one's own station's or a
/// followed one's, kept in memory and (with ``StationClientConfiguration/persistsOfflineListing``)
/// in the cache store, and given back marked ``PostListing/isOffline`` when the station cannot be
/// reached. Items are named by ``CacheItem``.
final class OfflineListings: Sendable {
    private struct State {
        /// The serialized listing of each item.
        var listings: [String: [UInt8]] = [:]
        /// The manifest CID each stored listing was made from, when it was complete.
        var sources: [String: String] = [:]
    }

    private let state = Locked(State())
    let cacheStore: any CacheStore
    let persists: Bool
    let log: LogHandler?

    init(cacheStore: any CacheStore, persists: Bool, log: LogHandler?) {
        self.cacheStore = cacheStore
        self.persists = persists
        self.log = log
    }

    /// Keeps `posts` as the offline listing of `item`, made from `manifestCID`.
    /// - Parameter complete: whether every post was read (a listing with skipped posts is stored
    ///   but stored again next time).
    func record(_ posts: [ListedPost<JSONValue>], item: String, complete: Bool, manifestCID: String) async {
        // The same manifest read without failures gives the same listing: store it only when it changed.
        let unchanged = state.withLock { complete && $0.sources[item] == manifestCID && $0.listings[item] != nil }
        guard !unchanged else { return }
        var bytes = Self.serialize(posts, manifestCID: manifestCID)
        state.withLock { state in
            if var old = state.listings[item] { SecureMemory.zero(&old) }
            state.listings[item] = bytes
            state.sources[item] = complete ? manifestCID : nil
        }
        guard persists else { return }
        defer { SecureMemory.zero(&bytes) }
        do {
            try await cacheStore.save(bytes, as: item)
        } catch {
            log?(LogEvent(level: .warning, message: "cannot persist the offline listing: \(error)"))
        }
    }

    /// The offline listing of `item` with its metadata as `type`, or `nil` when there is none.
    func listing<Metadata: Decodable & Sendable>(
        item: String, as type: Metadata.Type, dates: WireJSON.DateDecoding
    ) async -> PostListing<Metadata>? {
        var stored = state.withLock { $0.listings[item] }
        if stored == nil, persists {
            stored = try? await cacheStore.load(item)
        }
        guard let bytes = stored, let object = try? WireJSON.parse(bytes).objectValue,
              let items = object["posts"]?.arrayValue else { return nil }
        var listing = PostListing<Metadata>(posts: [], skipped: [], isOffline: true, manifestCID: object["manifest_cid"]?.stringValue)
        for item in items {
            guard let cid = item["post_cid"]?.stringValue else { continue }
            let metadata = item["metadata"].flatMap { $0.isNull ? nil : $0 }
            let raw = ListedPost<JSONValue>(
                postCID: cid, envelopesCID: item["envelopes_cid"]?.stringValue,
                audienceMode: AudienceMode(wireValue: item["audience_mode"]?.stringValue ?? "all"),
                createdAt: item["created_at"]?.intValue, isPublic: item["public"]?.boolValue ?? false,
                metadata: metadata, rawMetadata: metadata)
            do {
                listing.posts.append(try ListingEngine.typed(raw, as: type, dates: dates))
            } catch {
                listing.skipped.append(SkippedPost(postCID: cid, error: StationClientError(
                    .invalidResponse, operation: "reading the offline listing", message: "\(error)", underlying: error)))
            }
        }
        return listing
    }

    /// Drops the in-memory copies, zeroing them first (the cache store's copies stay).
    func clearMemory() {
        state.withLock { state in
            for item in Array(state.listings.keys) {
                if var bytes = state.listings.removeValue(forKey: item) { SecureMemory.zero(&bytes) }
            }
            state.sources.removeAll()
        }
    }

    /// The listing as stored: `{"manifest_cid":…,"posts":[{post_cid, audience_mode, public,
    /// envelopes_cid, created_at, metadata}]}`.
    private static func serialize(_ posts: [ListedPost<JSONValue>], manifestCID: String) -> [UInt8] {
        var items: [JSONValue] = []
        for post in posts {
            let metadata: JSONValue?
            switch post.rawMetadataSource {
            case .text(let text)?:
                // Metadata that is not JSON made the listing skip the post: the offline view leaves it out too.
                guard let value = try? WireJSON.parse(text) else { continue }
                metadata = value
            case .value(let value)?: metadata = value
            case nil: metadata = nil
            }
            var object: JSONObject = ["post_cid": .string(post.postCID), "audience_mode": .string(post.audienceMode.wireValue),
                                      "public": .bool(post.isPublic)]
            object["envelopes_cid"] = post.envelopesCID.map { .string($0) } ?? .null
            object["created_at"] = post.createdAt.map { .number(JSONNumber($0)) } ?? .null
            object["metadata"] = metadata ?? .null
            items.append(.object(object))
        }
        return WireJSON.serialize(.object(["manifest_cid": .string(manifestCID), "posts": .array(items)]))
    }
}

extension StationClient {
    /// Keeps what a listing learned: the new post keys, and the listing for the offline view.
    /// - Parameter complete: whether every post was read (a listing with skipped posts is stored
    ///   but read again next time).
    func recordListing(_ posts: [ListedPost<JSONValue>], namespace: String, complete: Bool, manifestCID: String) async throws {
        await writePostKeys(manifestCID: manifestCID)
        await removeLegacyCaches()
        await offline.record(posts, item: CacheItem.offlineListing(namespace: namespace), complete: complete, manifestCID: manifestCID)
    }

    /// Drops the in-memory copy of the offline listing of every namespace (one's own station's
    /// and the followed stations' read through ``reader(for:gateway:)``), zeroing it first: it
    /// holds every listed post's decrypted metadata (file names and the like). With
    /// ``StationClientConfiguration/persistsOfflineListing`` (the default) the copy in the cache
    /// store stays (sealed, in the default ``EncryptedFileCacheStore``), and the offline view is
    /// read from there; without it, a listing that cannot reach the station fails until a listing
    /// has reached it again.
    public func clearOfflineListingCache() { offline.clearMemory() }
}
