import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import Envelope
import Transport
import OrderedJSON
import ContentAddressing

extension StationClient {
    /// Reads this app's namespace and decrypts every post's metadata into `Metadata`.
    ///
    /// `/profile` gives the manifest CID; the manifest comes from the station's `/content` (or, if
    /// that fails, from the gateway, verified against the CID); only the configured namespace is
    /// read. For each encrypted post the key comes from the cache or from `/rewrap` (at most
    /// ``StationClientConfiguration/rewrapConcurrency`` at once), the envelope is opened with the
    /// device key and the metadata decrypted. Public posts are read as plaintext. A post that
    /// fails is reported in ``PostListing/skipped`` and never fails the listing.
    ///
    /// When the station is unreachable, returns the last listing read online (marked
    /// ``PostListing/isOffline``) instead of failing.
    ///
    /// - Parameter type: the app's metadata type (`DriveFileMetadata` for `drive`, or
    ///   `JSONValue` for raw JSON).
    /// - Throws: ``StationClientError`` when the station is unreachable and there is no offline
    ///   listing, when the manifest cannot be read, or when cancelled.
    public func listPosts<Metadata: Decodable & Sendable>(as type: Metadata.Type) async throws -> PostListing<Metadata> {
        let namespace = try self.namespace(nil)
        let operation = "listing namespace \(namespace)"
        let profile: StationProfile
        do {
            profile = try await self.profile()
        } catch let error as StationClientError where error.kind == .unreachable {
            if let offline = try await offlineListing(namespace: namespace, as: type) {
                log(.warning, "\(operation): station unreachable, showing the offline listing")
                return offline
            }
            throw error
        }
        guard let manifestCID = profile.manifestCID else {
            return PostListing(posts: [], skipped: [], isOffline: false, manifestCID: nil)
        }
        let manifest = try await fetchManifest(cid: manifestCID)
        let entries = manifest.posts(in: namespace)
        try await loadPersistedPostKeys()
        let context = readContext()
        let (posts, skipped) = try await readEntries(entries, context: context)
        for skip in skipped { log(.warning, "\(operation): skipped \(skip)") }
        let typed = Self.typed(posts, as: type, dates: configuration.metadataDateDecoding, operation: operation)
        try await recordListing(posts, namespace: namespace, complete: skipped.isEmpty && typed.skipped.isEmpty,
                                manifestCID: manifestCID)
        return PostListing(posts: typed.posts, skipped: skipped + typed.skipped, isOffline: false, manifestCID: manifestCID)
    }

    /// The posts with their metadata as `type`; a post whose metadata is not JSON, or not a
    /// `Metadata`, is skipped. Raw JSON and drive metadata take paths of their own (specialized,
    /// not generic per post: a listing of 10,000 posts spent more on generic copies than on
    /// decoding).
    static func typed<Metadata: Decodable & Sendable>(
        _ posts: [ListedPost<JSONValue>], as type: Metadata.Type, dates: WireJSON.DateDecoding, operation: String
    ) -> (posts: [ListedPost<Metadata>], skipped: [SkippedPost]) {
        // The bit casts are between identical types: each branch runs only when Metadata is that type.
        if Metadata.self == JSONValue.self {
            let json = convert(posts, as: JSONValue.self, operation: operation) { try Self.typed($0, as: JSONValue.self) }
            return (unsafeBitCast(json.posts, to: [ListedPost<Metadata>].self), json.skipped)
        }
        if Metadata.self == DriveFileMetadata.self {
            let drive = convert(posts, as: DriveFileMetadata.self, operation: operation, Self.typedAsDriveMetadata)
            return (unsafeBitCast(drive.posts, to: [ListedPost<Metadata>].self), drive.skipped)
        }
        return convert(posts, as: type, operation: operation) { try Self.typed($0, as: type, dates: dates) }
    }

    /// Each post through `convert`; a post it throws for is skipped. Called with concrete types
    /// only, so the optimizer specializes it for each.
    private static func convert<Metadata: Sendable>(
        _ posts: [ListedPost<JSONValue>], as type: Metadata.Type, operation: String,
        _ convert: (ListedPost<JSONValue>) throws -> ListedPost<Metadata>
    ) -> (posts: [ListedPost<Metadata>], skipped: [SkippedPost]) {
        var typed: [ListedPost<Metadata>] = []
        typed.reserveCapacity(posts.count)
        var skipped: [SkippedPost] = []
        // By index, so each post is lent to `convert` rather than copied out of the array.
        for index in posts.indices {
            do {
                typed.append(try convert(posts[index]))
            } catch {
                skipped.append(unreadable(posts[index], as: Metadata.self, error: error, operation: operation))
            }
        }
        return (typed, skipped)
    }

    /// One post with drive metadata, read from the decrypted text when the listing kept it.
    private static func typedAsDriveMetadata(_ post: ListedPost<JSONValue>) throws -> ListedPost<DriveFileMetadata> {
        let metadata: DriveFileMetadata?
        switch post.rawMetadataSource {
        case .text(let text)?: metadata = try DriveFileMetadata.read(jsonBytes: text)
        case .value(let value)?: metadata = try DriveFileMetadata.read(value)
        case nil: metadata = nil
        }
        return ListedPost(postCID: post.postCID, envelopesCID: post.envelopesCID, audienceMode: post.audienceMode,
                          createdAt: post.createdAt, isPublic: post.isPublic, metadata: metadata,
                          rawMetadataSource: post.rawMetadataSource)
    }

    /// The skip of a post whose metadata is not JSON, or not a `Metadata`.
    static func unreadable<Metadata>(
        _ post: ListedPost<JSONValue>, as type: Metadata.Type, error: any Error, operation: String
    ) -> SkippedPost {
        let message = Self.isNotJSON(error) ? "the metadata is not JSON" : "the metadata is not a \(Metadata.self): \(error)"
        return SkippedPost(postCID: post.postCID, error: StationClientError(
            .invalidResponse, operation: operation, message: message, underlying: error))
    }

    /// Whether `error` says the text was not JSON at all (rather than JSON of another shape).
    static func isNotJSON(_ error: any Error) -> Bool {
        (error as? WireFormatError)?.isSyntaxError == true
    }

    /// Keeps what a listing learned: the new post keys, and the listing for the offline view.
    /// - Parameter complete: whether every post was read (a listing with skipped posts is stored
    ///   but read again next time).
    func recordListing(_ posts: [ListedPost<JSONValue>], namespace: String, complete: Bool, manifestCID: String) async throws {
        try await persistPostKeys()
        await removeLegacyCaches()
        // The same manifest read without failures gives the same listing: store it only when it changed.
        let unchanged = complete && offlineListingSources[namespace] == manifestCID && offlineListings[namespace] != nil
        if !unchanged {
            try await storeOfflineListing(posts, namespace: namespace, manifestCID: manifestCID)
            offlineListingSources[namespace] = complete ? manifestCID : nil
        }
    }

    /// What reading posts needs from the actor, read once so each post's work runs off it.
    struct ReadContext: Sendable {
        let kemKey: MLKEM768.PrivateKey
        let stationUID: String
        let deviceUID: String
        let call: CallState
    }

    func readContext() -> ReadContext {
        ReadContext(kemKey: credentials.kemPrivateKey, stationUID: credentials.stationUID, deviceUID: credentials.deviceUID,
                    call: callState())
    }

    /// One post with its metadata as `type`. Metadata still held as decrypted text is parsed
    /// here (drive metadata read from the text directly).
    ///
    /// - Throws: ``WireFormatError`` when the text is not JSON or not drive metadata; the
    ///   decoder's error when the JSON is not a `Metadata`.
    static func typed<Metadata: Decodable & Sendable>(
        _ post: ListedPost<JSONValue>, as type: Metadata.Type, dates: WireJSON.DateDecoding = .flexible
    ) throws -> ListedPost<Metadata> {
        var source = post.rawMetadataSource
        let metadata: Metadata?
        switch source {
        case nil:
            metadata = nil
        case .value(let value)?:
            metadata = try decodeMetadata(type, from: value, dates: dates)
        case .text(let text)?:
            if Metadata.self == DriveFileMetadata.self {
                metadata = try DriveFileMetadata.read(jsonBytes: text) as? Metadata
            } else {
                let value = try WireJSON.parse(text)
                source = .value(value)
                metadata = try decodeMetadata(type, from: value, dates: dates)
            }
        }
        return ListedPost(postCID: post.postCID, envelopesCID: post.envelopesCID, audienceMode: post.audienceMode,
                          createdAt: post.createdAt, isPublic: post.isPublic, metadata: metadata, rawMetadataSource: source)
    }

    /// A post's metadata as `type`: raw JSON as is, drive metadata through its direct reader (the
    /// same result as the `Decodable` path, without its generic cost per post), else `Decodable`.
    static func decodeMetadata<Metadata: Decodable>(
        _ type: Metadata.Type, from value: JSONValue, dates: WireJSON.DateDecoding = .flexible
    ) throws -> Metadata {
        if Metadata.self == JSONValue.self, let same = value as? Metadata { return same }
        // DriveFileMetadata keeps its times as integers, so the date strategy does not apply to it.
        if Metadata.self == DriveFileMetadata.self, let drive = try DriveFileMetadata.read(value) as? Metadata { return drive }
        return try WireJSON.decode(type, from: value, dates: dates)
    }

    /// Reads entries with bounded concurrency, keeping manifest order: `rewrapConcurrency` workers
    /// take the next entry until none is left, fetching the keys that are not cached through
    /// `/rewrap`. Cached keys are looked up on the actor before the workers start and new keys
    /// stored when they are done, so a read never waits for the actor and no task is created per
    /// post. Each worker puts its result in the entry's slot, moved out in order at the end.
    private func readEntries(
        _ entries: [PostEntry], context: ReadContext
    ) async throws -> (posts: [ListedPost<JSONValue>], skipped: [SkippedPost]) {
        let cachedKeys = entries.map { postKeys[$0.postCID] }
        // Each worker holds at most one /rewrap answer of at most ResponseLimit.rewrap bytes.
        let width = ResponseLimit.listingWidth(rewrapConcurrency: configuration.rewrapConcurrency, entryCount: entries.count)
        let queue = ReadQueue(count: entries.count)
        let slots = ReadSlots(count: entries.count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<width {
                group.addTask {
                    while let index = queue.next() {
                        // A post whose key is at hand (or needs none) is read without suspending,
                        // its entry lent rather than copied into an async frame.
                        if Self.needsRewrap(entries[index], cachedKey: cachedKeys[index]) {
                            slots.put(try await self.readEntry(entries[index], cachedKey: nil, context: context), at: index)
                        } else {
                            slots.put(Self.readResult(entries[index], key: cachedKeys[index], isNew: false), at: index)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try Task.checkCancellation()
        var posts: [ListedPost<JSONValue>] = []
        posts.reserveCapacity(entries.count)
        var skipped: [SkippedPost] = []
        for index in entries.indices {
            switch slots.take(at: index) {
            case .success(let read)?:
                if let key = read.newKey { postKeys[read.post.postCID] = key }
                posts.append(read.post)
            case .failure(let skip)?:
                // A cached key that did not open the post is not kept.
                postKeys[skip.postCID] = nil
                skipped.append(skip)
            case nil:
                break
            }
        }
        return (posts, skipped)
    }

    /// One result slot per entry of a listing. Each slot is written by the one worker that took
    /// its index from the ``ReadQueue`` and read after every worker is done, so no two threads
    /// touch a slot at once; results move in and out without a copy of the array around them.
    final class ReadSlots: @unchecked Sendable {
        private let slots: UnsafeMutableBufferPointer<Result<ReadPost, SkippedPost>?>

        init(count: Int) {
            slots = .allocate(capacity: count)
            slots.initialize(repeating: nil)
        }

        deinit {
            slots.deinitialize()
            slots.deallocate()
        }

        func put(_ result: consuming Result<ReadPost, SkippedPost>, at index: Int) { slots[index] = result }

        func take(at index: Int) -> Result<ReadPost, SkippedPost>? { slots[index].take() }
    }

    /// Hands out entry indices to a listing's workers, each index once.
    final class ReadQueue: @unchecked Sendable {
        private let lock = NSLock()
        private var nextIndex = 0
        private let count: Int

        init(count: Int) { self.count = count }

        func next() -> Int? {
            lock.lock()
            defer { lock.unlock() }
            guard nextIndex < count else { return nil }
            defer { nextIndex += 1 }
            return nextIndex
        }
    }

    /// One post read for a listing, and the key it learned.
    struct ReadPost: Sendable {
        var post: ListedPost<JSONValue>
        var newKey: SymmetricKey?
    }

    /// Reads one entry, with its cached key or one from `/rewrap`. A failure becomes a skipped
    /// post; only cancellation is thrown.
    nonisolated func readEntry(
        _ entry: PostEntry, cachedKey: SymmetricKey?, context: ReadContext
    ) async throws -> Result<ReadPost, SkippedPost> {
        guard Self.needsRewrap(entry, cachedKey: cachedKey) else { return Self.readResult(entry, key: cachedKey, isNew: false) }
        let key: SymmetricKey
        do {
            key = try await rewrappedPostKey(for: entry.postCID, envelopesCID: entry.envelopesCID, context: context)
        } catch let error as StationClientError where error.kind == .cancelled {
            throw error
        } catch {
            return .failure(Self.skip(entry, error))
        }
        return Self.readResult(entry, key: key, isNew: true)
    }

    /// Reads one entry with `key` (or without, when it needs none); a failure becomes a skipped post.
    static func readResult(_ entry: PostEntry, key: SymmetricKey?, isNew: Bool) -> Result<ReadPost, SkippedPost> {
        do {
            return .success(try read(entry, key: key, isNew: isNew))
        } catch {
            return .failure(skip(entry, error))
        }
    }

    /// The skip of an entry that could not be read.
    private static func skip(_ entry: PostEntry, _ error: any Error) -> SkippedPost {
        SkippedPost(postCID: entry.postCID, error: StationClientError.wrap(error, operation: "reading post \(entry.postCID)"))
    }

    /// Whether reading the entry needs a post key from `/rewrap`: it is encrypted, has metadata,
    /// and its key is not cached.
    private static func needsRewrap(_ entry: PostEntry, cachedKey: SymmetricKey?) -> Bool {
        cachedKey == nil && entry.isEncrypted && entry.metadata != nil
    }

    /// Reads one entry: plaintext metadata for public posts, otherwise opens the metadata with
    /// `key` (which `isNew` when it came from `/rewrap` rather than the cache).
    private static func read(_ entry: PostEntry, key: SymmetricKey?, isNew: Bool) throws -> ReadPost {
        var operation: String { "reading post \(entry.postCID)" }
        var post = ListedPost<JSONValue>(
            postCID: entry.postCID, envelopesCID: entry.envelopesCID, audienceMode: entry.audienceMode,
            createdAt: entry.createdAt, isPublic: !entry.isEncrypted, metadata: nil, rawMetadata: nil)
        guard entry.isEncrypted else {
            post.rawMetadata = entry.metadata?.jsonValue
            post.metadata = post.rawMetadata
            return ReadPost(post: post)
        }
        guard let metadata = entry.metadata else { return ReadPost(post: post) }
        guard let key else {
            throw StationClientError(.invalidResponse, operation: operation, message: "no post key")
        }
        let sealed: [UInt8]
        do {
            sealed = try metadata.sealedBytes()
        } catch {
            throw StationClientError(.integrity, operation: operation, message: "the metadata is not sealed hex", underlying: error)
        }
        // Into an array rather than `Data`: a listing opens thousands of these small boxes.
        var plaintext = [UInt8](repeating: 0, count: max(0, sealed.count - SecretBox.overheadByteCount))
        do {
            try sealed.withUnsafeBytes { source in
                try plaintext.withUnsafeMutableBytes { target in try SecretBox.open(source, into: target, using: key) }
            }
        } catch {
            // A cached key that no longer opens the post is dropped (by the caller, on the actor).
            throw StationClientError(.integrity, operation: operation, message: "the metadata does not open with the post key",
                                     underlying: error)
        }
        // Parsed (or read as drive metadata) when the listing gives it its type.
        post.rawMetadataSource = .text(plaintext)
        return ReadPost(post: post, newKey: isNew ? key : nil)
    }

    /// The post key from the cache, or through `/rewrap` and the device's ML-KEM key.
    ///
    /// - Throws: ``StationClientError``: `.notFound` when the station has no such post,
    ///   `.station` when it refuses the rewrap otherwise (its `result.error` text), `.integrity`
    ///   when the envelope does not open.
    nonisolated func postKey(for postCID: String, envelopesCID: String?, context: ReadContext) async throws -> SymmetricKey {
        if let cached = await cachedPostKey(postCID) { return cached }
        let key = try await rewrappedPostKey(for: postCID, envelopesCID: envelopesCID, context: context)
        await cachePostKey(key, for: postCID)
        return key
    }

    /// `/rewrap` and the device's ML-KEM key, without the cache (see ``postKey(for:envelopesCID:context:)``).
    nonisolated func rewrappedPostKey(for postCID: String, envelopesCID: String?, context: ReadContext) async throws -> SymmetricKey {
        let operation = "POST /rewrap for \(postCID)"
        let body = Self.rewrapBody(uid: context.stationUID, deviceUID: context.deviceUID, postCID: postCID,
                                   envelopesCID: envelopesCID)
        let response = try await signed(.post, "/rewrap", body: .json(body), limit: ResponseLimit.rewrap, operation: operation,
                                        state: context.call)
        return try Self.postKey(fromRewrap: response, postCID: postCID, kemKey: context.kemKey, operation: operation)
    }

    /// The post key in a `/rewrap` answer, opened with the device's ML-KEM key.
    ///
    /// - Throws: ``StationClientError``: the station's refusal, an unexpected answer, or
    ///   `.integrity` when the envelope does not open.
    static func postKey(fromRewrap response: HTTPResponse, postCID: String, kemKey: MLKEM768.PrivateKey,
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

    func cachedPostKey(_ postCID: String) -> SymmetricKey? { postKeys[postCID] }
    func cachePostKey(_ key: SymmetricKey, for postCID: String) { postKeys[postCID] = key }
    func forgetPostKey(_ postCID: String) { postKeys[postCID] = nil }

    /// The number of post keys in the in-memory cache.
    public var cachedPostKeyCount: Int { postKeys.count }

    /// Empties the in-memory post-key cache (the persisted copy stays until the next listing).
    public func clearPostKeyCache() { postKeys.removeAll() }

    /// Drops the in-memory copy of the last manifest read, for example when the app receives a
    /// memory warning (a manifest of 10,000 posts holds several megabytes). The next listing
    /// fetches the manifest again and checks it against its CID; post keys and the offline
    /// listing stay.
    public func clearManifestCache() { manifestCache = nil }

    /// Drops the in-memory copy of the offline listing of every namespace, zeroing it first: it
    /// holds every listed post's decrypted metadata (file names and the like). With
    /// ``StationClientConfiguration/persistsOfflineListing`` (the default) the copy in the cache
    /// store stays (sealed, in the default ``EncryptedFileCacheStore``), and the offline view is
    /// read from there; without it, a listing that cannot reach the station fails until a listing
    /// has reached it again.
    public func clearOfflineListingCache() {
        for namespace in Array(offlineListings.keys) {
            if var bytes = offlineListings.removeValue(forKey: namespace) { SecureMemory.zero(&bytes) }
        }
    }

    /// The manifest with this CID: from the station's `/content`, or from the gateway when that
    /// fails; either way verified against the CID, and at most as long as a manifest of
    /// ``StationClientConfiguration/maximumManifestPosts`` posts can be.
    ///
    /// - Throws: ``StationClientError`` when neither source gives bytes matching the CID, or the
    ///   bytes are not a manifest.
    public func fetchManifest(cid: String) async throws -> Manifest {
        if let cached = manifestCache, cached.cid == cid { return cached.manifest }
        let operation = "reading manifest \(cid)"
        let parsed = try IPFSGateway.parse(cid, operation: operation)
        let manifestLimit = ResponseLimit.manifest(maximumPosts: configuration.maximumManifestPosts)
        // Read in place, not copied to an array: a 10,000-post manifest is several megabytes.
        var bytes: Data?
        var firstError: (any Error)?
        do {
            let response = try await signed(.get, "/content/\(cid)", limit: manifestLimit, operation: operation)
            if response.isSuccess {
                let data = response.body.data ?? Data()
                if parsed.matches(fileBytes: data) {
                    bytes = data
                } else {
                    firstError = StationClientError(.integrity, operation: operation, message: "the station's bytes do not match the CID")
                }
            } else {
                firstError = StationClientError.station(response, operation: operation)
            }
        } catch let error as StationClientError where error.kind != .cancelled {
            firstError = error
        }
        if bytes == nil {
            guard let gateway = configuration.gateway else { throw firstError ?? StationClientError(.unreachable, operation: operation, message: "no source") }
            log(.info, "\(operation): falling back to the gateway (\(firstError.map { "\($0)" } ?? ""))")
            bytes = Data(try await gateway.fetch(cid: cid, limit: manifestLimit))
        }
        do {
            // The direct reader: the same manifest as the `Decodable` path, several times faster.
            let manifest = try Manifest.read(bytes ?? Data())
            manifestCache = (cid, manifest)
            return manifest
        } catch {
            throw StationClientError(.invalidResponse, operation: operation, message: "not a manifest: \(error)", underlying: error)
        }
    }

    // MARK: Persistence of post keys and the offline listing

    func loadPersistedPostKeys() async throws {
        guard configuration.persistsPostKeys, !postKeysLoaded else { return }
        postKeysLoaded = true
        guard var bytes = try? await configuration.cacheStore.load(CacheItem.postKeys) else { return }
        defer { SecureMemory.zero(&bytes) }
        guard let object = try? WireJSON.parse(bytes).objectValue else { return }
        for (cid, value) in object {
            if let hex = value.stringValue, let raw = try? Hex.decode(hex), raw.count == 32, postKeys[cid] == nil {
                postKeys[cid] = SymmetricKey(data: raw)
            }
        }
    }

    func persistPostKeys() async throws {
        guard configuration.persistsPostKeys else { return }
        var object = JSONObject()
        for (cid, key) in postKeys.sorted(by: { $0.key < $1.key }) {
            object[cid] = .string(key.withUnsafeBytes { Hex.encode($0) })
        }
        var bytes = WireJSON.serialize(.object(object))
        defer { SecureMemory.zero(&bytes) }
        do {
            try await configuration.cacheStore.save(bytes, as: CacheItem.postKeys)
        } catch {
            log(.warning, "cannot persist post keys: \(error)")
        }
    }

    /// Removes the caches earlier versions wrote to the key store (once per client; failures
    /// only logged): they now live in the cache store.
    func removeLegacyCaches() async {
        guard !legacyCachesRemoved else { return }
        legacyCachesRemoved = true
        var names = [KeyStoreItem.legacyPostKeys]
        if let namespace = try? Self.normalizedNamespace(configuration.namespace) {
            names.append(KeyStoreItem.legacyOfflineListing(namespace: namespace))
        }
        for name in names {
            do {
                try await configuration.keyStore.delete(name)
            } catch {
                log(.warning, "cannot remove the old cache item \(name) from the key store: \(error)")
            }
        }
    }

    private func storeOfflineListing(_ posts: [ListedPost<JSONValue>], namespace: String, manifestCID: String) async throws {
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
        var bytes = WireJSON.serialize(.object(["manifest_cid": .string(manifestCID), "posts": .array(items)]))
        offlineListings[namespace] = bytes
        guard configuration.persistsOfflineListing else { return }
        defer { SecureMemory.zero(&bytes) }
        do {
            try await configuration.cacheStore.save(bytes, as: CacheItem.offlineListing(namespace: namespace))
        } catch {
            log(.warning, "cannot persist the offline listing: \(error)")
        }
    }

    private func offlineListing<Metadata: Decodable & Sendable>(
        namespace: String, as type: Metadata.Type
    ) async throws -> PostListing<Metadata>? {
        var stored = offlineListings[namespace]
        if stored == nil, configuration.persistsOfflineListing {
            stored = try? await configuration.cacheStore.load(CacheItem.offlineListing(namespace: namespace))
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
                listing.posts.append(try Self.typed(raw, as: type, dates: configuration.metadataDateDecoding))
            } catch {
                listing.skipped.append(SkippedPost(postCID: cid, error: StationClientError(
                    .invalidResponse, operation: "reading the offline listing", message: "\(error)", underlying: error)))
            }
        }
        return listing
    }
}
