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
        // A new client over the same store: the stored listing, when it is the complete one of
        // this manifest, is this listing already; it is taken as the memory copy, not rebuilt.
        if complete, persists, await adoptStored(item: item, manifestCID: manifestCID) { return }
        var bytes = Self.serialize(posts, manifestCID: manifestCID, complete: complete)
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

    /// Takes the stored listing of `item` as the memory copy when it is the complete listing of
    /// `manifestCID` (as its header says) and memory holds none; whether it did.
    private func adoptStored(item: String, manifestCID: String) async -> Bool {
        guard state.withLock({ $0.listings[item] == nil }),
              var stored = try? await cacheStore.load(item) else { return false }
        guard stored.starts(with: Self.header(manifestCID: manifestCID, complete: true)) else {
            SecureMemory.zero(&stored)
            return false
        }
        state.withLock { state in
            if var old = state.listings[item] { SecureMemory.zero(&old) }
            state.listings[item] = stored
            state.sources[item] = manifestCID
        }
        return true
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

    /// The start of a stored listing, up to its posts: `{"manifest_cid":…,"complete":…,`.
    /// Listings stored before `complete` was written have no such start, and are stored again.
    private static func header(manifestCID: String, complete: Bool) -> [UInt8] {
        var bytes = WireJSON.serialize(.object(["manifest_cid": .string(manifestCID), "complete": .bool(complete)]))
        bytes.removeLast()  // the closing brace
        bytes.append(UInt8(ascii: ","))
        return bytes
    }

    /// The listing as stored: `{"manifest_cid":…,"complete":…,"posts":[{post_cid, audience_mode,
    /// public, envelopes_cid, created_at, metadata}]}`. Metadata still held as the decrypted text
    /// goes in as that text, checked but not parsed and written again (the first listing of a
    /// relaunched client spent most of its extra time there).
    private static func serialize(_ posts: [ListedPost<JSONValue>], manifestCID: String, complete: Bool) -> [UInt8] {
        var bytes = header(manifestCID: manifestCID, complete: complete)
        // Reserved up front: a buffer outgrown would be freed holding metadata, unzeroed.
        var textBytes = 0
        for post in posts { if case .text(let text)? = post.rawMetadataSource { textBytes += text.count } }
        bytes.reserveCapacity(bytes.count + textBytes + posts.count * 256 + 16)
        bytes += Array(#""posts":["#.utf8)
        var first = true
        for post in posts {
            // The decrypted text is shared with the listing's posts (only its slice is written);
            // a value is written into a buffer of its own, zeroed after.
            var serialized: [UInt8] = []
            defer { SecureMemory.zero(&serialized) }
            let metadata: ArraySlice<UInt8>
            switch post.rawMetadataSource {
            case .text(let text)?:
                // Metadata that is not JSON made the listing skip the post: the offline view leaves it out too.
                guard let start = jsonStart(text) else { continue }
                metadata = text[start...]
            case .value(let value)?:
                serialized = WireJSON.serialize(value)
                metadata = serialized[...]
            case nil: metadata = ArraySlice("null".utf8)
            }
            var fields: JSONObject = ["post_cid": .string(post.postCID), "audience_mode": .string(post.audienceMode.wireValue),
                                      "public": .bool(post.isPublic)]
            fields["envelopes_cid"] = post.envelopesCID.map { .string($0) } ?? .null
            fields["created_at"] = post.createdAt.map { .number(JSONNumber($0)) } ?? .null
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            bytes += WireJSON.serialize(.object(fields)).dropLast()  // the closing brace: metadata follows
            bytes += Array(#","metadata":"#.utf8)
            bytes += metadata
            bytes.append(UInt8(ascii: "}"))
        }
        bytes += Array("]}".utf8)
        return bytes
    }

    /// Where the one JSON value of `text` starts (after a leading byte-order mark), or `nil`
    /// when `text` is not JSON or would nest too deep inside the stored listing.
    private static func jsonStart(_ text: [UInt8]) -> Int? {
        text.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer, maximumDepth: WireJSON.maximumDepth)
            parser.skipByteOrderMark()
            let start = parser.index
            // Inside the document, the posts array and the post's object.
            guard (try? parser.skipValue(depth: 3)) != nil else { return nil }
            parser.skipWhitespace()
            return parser.index == buffer.count ? start : nil
        }
    }
}

extension StationClient {
    /// Keeps what a listing learned: the new post keys, and the listing for the offline view.
    /// - Parameter complete: whether every post was read (a listing with skipped posts is stored
    ///   but read again next time).
    func recordListing(_ posts: [ListedPost<JSONValue>], namespace: String, complete: Bool, manifestCID: String) async throws {
        await writePostKeys(manifestCID: manifestCID)
        await removeLegacyCaches()
        await offline.record(posts, item: CacheItem.offlineListing(station: credentials.stationUID, namespace: namespace),
                             complete: complete, manifestCID: manifestCID)
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
