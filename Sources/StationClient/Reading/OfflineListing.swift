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

    /// The offline listing of `item` with its metadata as `type`, or `nil` when there is none
    /// (or the stored one cannot be read). It is read as a manifest is: straight from the bytes,
    /// each post's metadata kept as its text until typed, the trees built for `type` charged to
    /// one budget of `memoryLimit` bytes (a post past it is skipped, `.tooLarge`).
    func listing<Metadata: Decodable & Sendable>(
        item: String, as type: Metadata.Type, dates: WireJSON.DateDecoding, memoryLimit: Int
    ) async -> PostListing<Metadata>? {
        var stored = state.withLock { $0.listings[item] }
        if stored == nil, persists {
            stored = try? await cacheStore.load(item)
        }
        guard let bytes = stored else { return nil }
        let read = bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer, maximumDepth: WireJSON.maximumDepth,
                                    memory: JSONMemoryBudget(limit: WireJSON.documentMemoryLimit + buffer.count))
            return try? parser.readStoredListing()
        }
        guard let read else { return nil }
        var listing = PostListing<Metadata>(posts: [], skipped: [], isOffline: true, manifestCID: read.manifestCID)
        var memory = JSONMemoryBudget(limit: memoryLimit)
        for raw in read.posts {
            do {
                listing.posts.append(try ListingEngine.typed(raw, as: type, dates: dates, memory: &memory))
            } catch {
                listing.skipped.append(ListingEngine.unreadable(raw, as: type, error: error, operation: "reading the offline listing"))
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

    /// Drops every listing from memory and `item` from the cache store.
    func forget(item: String) async throws {
        clearMemory()
        try await cacheStore.delete(item)
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

    /// Where the JSON value that is all of `text` starts (after a leading byte-order mark), or `nil`
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

extension JSONParser {
    /// A stored listing read straight from its bytes (the form ``OfflineListings`` writes): its
    /// manifest CID and posts, each post's metadata kept as its JSON text. An element that is not
    /// an object or has no string `post_cid` is left out; members it does not know are skipped.
    /// Every post and the text it keeps are charged to ``memory``.
    ///
    /// - Throws: `WireFormatError` when the bytes are not JSON, not an object, or past ``memory``.
    fileprivate mutating func readStoredListing() throws(WireFormatError) -> (manifestCID: String?, posts: [ListedPost<JSONValue>]) {
        skipByteOrderMark()
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else {
            throw .typeMismatch(path: "", expected: "an object", found: "another value")
        }
        var manifestCID: String?
        var posts: [ListedPost<JSONValue>] = []
        if try openContainer(depth: 1) {
            repeat {
                let key = try parseMemberKey()
                switch key {
                case "manifest_cid":
                    manifestCID = try parseMemberValue(depth: 1).stringValue
                case "posts" where index < bytes.count && bytes[index] == UInt8(ascii: "["):
                    guard try openContainer(depth: 2) else { break }
                    repeat {
                        if let post = try readStoredPost(depth: 3) { posts.append(post) }
                    } while try containerContinues(closingWith: UInt8(ascii: "]"))
                default:
                    _ = try skipValue(depth: 1)
                }
            } while try containerContinues(closingWith: UInt8(ascii: "}"))
        }
        skipWhitespace()
        guard index == bytes.count else { throw fail("extra data after the JSON value") }
        return (manifestCID, posts)
    }

    /// One stored post whose object opens at `depth`, or `nil` when it is not one.
    private mutating func readStoredPost(depth: Int) throws(WireFormatError) -> ListedPost<JSONValue>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else {
            _ = try skipValue(depth: depth - 1)
            return nil
        }
        var postCID: String?
        var envelopesCID: String?
        var audienceMode = "all"
        var createdAt: Int?
        var isPublic = false
        var metadata: [UInt8]?
        if try openContainer(depth: depth) {
            repeat {
                let key = try parseMemberKey()
                switch key {
                case "post_cid": postCID = try parseMemberValue(depth: depth).stringValue
                case "envelopes_cid": envelopesCID = try parseMemberValue(depth: depth).stringValue
                case "audience_mode": audienceMode = try parseMemberValue(depth: depth).stringValue ?? "all"
                case "created_at": createdAt = try parseMemberValue(depth: depth).intValue
                case "public": isPublic = try parseMemberValue(depth: depth).boolValue ?? false
                case "metadata":
                    let start = index
                    _ = try skipValue(depth: depth)
                    let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    metadata = Self.bytes(text, are: "null") ? nil : Array(text)
                default:
                    _ = try skipValue(depth: depth)
                }
            } while try containerContinues(closingWith: UInt8(ascii: "}"))
        }
        guard let postCID else { return nil }
        try memory.charge(MemoryLayout<ListedPost<JSONValue>>.stride + 96 + postCID.utf8.count
                          + (envelopesCID?.utf8.count ?? 0) + (metadata?.count ?? 0))
        return ListedPost(postCID: postCID, envelopesCID: envelopesCID, audienceMode: AudienceMode(wireValue: audienceMode),
                          createdAt: createdAt, isPublic: isPublic, metadata: nil, rawMetadataSource: metadata.map { .text($0) })
    }
}

extension StationClient {
    /// Keeps what a listing learned: the new post keys, and the listing for the offline view.
    /// - Parameter complete: whether every post was read (a listing with skipped posts is stored
    ///   but read again next time).
    func recordListing(_ posts: [ListedPost<JSONValue>], namespace: String, complete: Bool, manifestCID: String) async throws {
        await postKeys.write(pruningTo: manifests.cached(cid: manifestCID))
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
