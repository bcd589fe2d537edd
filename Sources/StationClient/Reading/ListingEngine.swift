import Foundation
import Manifest
import ContentAddressing
import OrderedJSON
import PQCrypto
import ClassicalCrypto
import Transport

/// The one listing engine: reads manifest entries into listed posts, with their keys from a
/// ``PostKeySource`` (`/rewrap` for the owner's device, `envelopes[uid]` for a follower). Used by
/// ``StationClient/listPosts(as:)``, ``StationClient/posts(as:)`` and the followed-station
/// listing (``FollowedStationReader/listPosts(of:namespace:as:)``).
struct ListingEngine: Sendable {
    /// Where post keys that are not cached come from.
    let keys: PostKeySource

    /// What the engine read of a listing's entries, in manifest order.
    struct Read: Sendable {
        var posts: [ListedPost<JSONValue>] = []
        var skipped: [SkippedPost] = []
        /// Keys fetched by this listing, by post CID.
        var learnedKeys: [(postCID: String, key: SymmetricKey)] = []
    }

    /// The outcome of one entry: read, skipped (and why), or not shared with this reader (a
    /// follower's post without an envelope for its uid, left out of the listing).
    enum Outcome: Sendable {
        case read(ReadPost)
        case skipped(SkippedPost)
        case notShared
    }

    /// One post read for a listing, and the key it learned.
    struct ReadPost: Sendable {
        var post: ListedPost<JSONValue>
        var newKey: SymmetricKey?
    }

    /// Reads `entries` with bounded concurrency, keeping manifest order: `width` workers take the
    /// next entry until none is left. A post whose key is at hand (`cachedKeys`, same order) or
    /// needs none is read without suspending, its entry lent rather than copied into an async
    /// frame; no task is created per post. Each worker puts its outcome in the entry's slot,
    /// moved out in order at the end.
    ///
    /// - Throws: only cancellation.
    func read(_ entries: [PostEntry], cachedKeys: [SymmetricKey?], width: Int) async throws -> Read {
        let queue = ReadQueue(count: entries.count)
        let slots = ReadSlots(count: entries.count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<max(1, width) {
                group.addTask {
                    while let index = queue.next() {
                        if needsKey(entries[index], cachedKey: cachedKeys[index]) {
                            slots.put(try await self.read(entries[index], cachedKey: nil), at: index)
                        } else {
                            slots.put(Self.outcome(entries[index], key: cachedKeys[index], isNew: false), at: index)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try Task.checkCancellation()
        var read = Read()
        read.posts.reserveCapacity(entries.count)
        for index in entries.indices {
            switch slots.take(at: index) {
            case .read(let post)?:
                if let key = post.newKey { read.learnedKeys.append((post.post.postCID, key)) }
                read.posts.append(post.post)
            case .skipped(let skip)?:
                read.skipped.append(skip)
            case .notShared?, nil:
                break
            }
        }
        return read
    }

    /// Reads one entry, with its cached key or one from the key source. A failure becomes a
    /// skipped post; only cancellation is thrown.
    func read(_ entry: PostEntry, cachedKey: SymmetricKey?) async throws -> Outcome {
        guard needsKey(entry, cachedKey: cachedKey) else { return Self.outcome(entry, key: cachedKey, isNew: false) }
        let key: SymmetricKey?
        do {
            key = try await keys.key(for: entry)
        } catch let error as StationClientError where error.kind == .cancelled {
            throw error
        } catch is CancellationError {
            throw StationClientError(.cancelled, operation: "reading post \(entry.postCID)", message: "cancelled")
        } catch {
            return .skipped(Self.skip(entry, error))
        }
        guard let key else { return .notShared }
        return Self.outcome(entry, key: key, isNew: true)
    }

    /// Whether reading the entry needs a post key from the source: it is encrypted, its key is
    /// not cached, and it has metadata (or the source lists only the posts it holds a key for).
    func needsKey(_ entry: PostEntry, cachedKey: SymmetricKey?) -> Bool {
        cachedKey == nil && entry.isEncrypted && (entry.metadata != nil || keys.listsOnlySharedPosts)
    }

    /// Reads one entry with `key` (or without, when it needs none); a failure becomes a skipped post.
    static func outcome(_ entry: PostEntry, key: SymmetricKey?, isNew: Bool) -> Outcome {
        do {
            return .read(try read(entry, key: key, isNew: isNew))
        } catch {
            return .skipped(skip(entry, error))
        }
    }

    /// The entries of `namespace` the manifest reader left out (not a post, no `post_cid`,
    /// metadata past the configured caps), as skipped posts named by their CID (or
    /// `posts[index]` when they have none).
    static func skippedEntries(of manifest: Manifest, namespace: String, operation: String) -> [SkippedPost] {
        (manifest.clients[Manifest.namespaceName(for: namespace)]?.issues ?? []).compactMap { issue in
            guard let index = issue.index else { return nil }
            return SkippedPost(postCID: issue.postCID ?? "posts[\(index)]", error: StationClientError(
                .invalidResponse, operation: operation, message: "the manifest entry was skipped: \(issue.reason)"))
        }
    }

    /// The skip of an entry that could not be read.
    private static func skip(_ entry: PostEntry, _ error: any Error) -> SkippedPost {
        SkippedPost(postCID: entry.postCID, error: StationClientError.wrap(error, operation: "reading post \(entry.postCID)"))
    }

    /// Reads one entry: plaintext metadata for public posts, otherwise opens the metadata with
    /// `key` (which `isNew` when it came from the key source rather than the cache).
    private static func read(_ entry: PostEntry, key: SymmetricKey?, isNew: Bool) throws -> ReadPost {
        var operation: String { "reading post \(entry.postCID)" }
        var post = ListedPost<JSONValue>(
            postCID: entry.postCID, envelopesCID: entry.envelopesCID, audienceMode: entry.audienceMode,
            createdAt: entry.createdAt, isPublic: !entry.isEncrypted, metadata: nil, rawMetadata: nil)
        post.audienceUIDs = entry.audienceUIDs
        guard entry.isEncrypted else {
            // Kept as the manifest's text, parsed only when the listing gives it its type.
            if let text = entry.metadata?.plaintextJSON {
                post.rawMetadataSource = .text(text)
            } else if let hex = entry.metadata?.sealedHex {
                post.rawMetadataSource = .value(.string(hex))
            }
            return ReadPost(post: post)
        }
        guard let metadata = entry.metadata else { return ReadPost(post: post, newKey: isNew ? key : nil) }
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

    /// One result slot per entry of a listing. Each slot is written only by the worker that took
    /// its index from the ``ReadQueue`` and read after every worker is done, so no two threads
    /// touch a slot at once; results move in and out without a copy of the array around them.
    final class ReadSlots: @unchecked Sendable {
        private let slots: UnsafeMutableBufferPointer<Outcome?>

        init(count: Int) {
            slots = .allocate(capacity: count)
            slots.initialize(repeating: nil)
        }

        deinit {
            slots.deinitialize()
            slots.deallocate()
        }

        func put(_ outcome: consuming Outcome, at index: Int) { slots[index] = outcome }

        func take(at index: Int) -> Outcome? { slots[index].take() }
    }

    /// Hands out entry indices to a listing's workers, each index once.
    final class ReadQueue: Sendable {
        private let nextIndex = Locked(0)
        private let count: Int

        init(count: Int) { self.count = count }

        func next() -> Int? {
            nextIndex.withLock { next in
                guard next < count else { return nil }
                defer { next += 1 }
                return next
            }
        }
    }
}

// MARK: Typing the listed posts

extension ListingEngine {
    /// The posts with their metadata as `type`; a post whose metadata is not JSON, or not a
    /// `Metadata`, is skipped. Raw JSON and drive metadata take paths of their own (specialized,
    /// not generic per post: a listing of 10,000 posts spent more on generic copies than on
    /// decoding).
    ///
    /// The JSON trees built for the metadata of all posts together are charged to one budget of
    /// `memoryLimit` bytes; a post whose tree would pass it is skipped (`.tooLarge`).
    static func typed<Metadata: Decodable & Sendable>(
        _ posts: [ListedPost<JSONValue>], as type: Metadata.Type, dates: WireJSON.DateDecoding, memoryLimit: Int,
        operation: String
    ) -> (posts: [ListedPost<Metadata>], skipped: [SkippedPost]) {
        var memory = JSONMemoryBudget(limit: memoryLimit)
        // The bit casts are between identical types: each branch runs only when Metadata is that type.
        if Metadata.self == JSONValue.self {
            let json = convert(posts, as: JSONValue.self, operation: operation) { try Self.typed($0, as: JSONValue.self, memory: &memory) }
            return (unsafeBitCast(json.posts, to: [ListedPost<Metadata>].self), json.skipped)
        }
        if Metadata.self == DriveFileMetadata.self {
            let drive = convert(posts, as: DriveFileMetadata.self, operation: operation, Self.typedAsDriveMetadata)
            return (unsafeBitCast(drive.posts, to: [ListedPost<Metadata>].self), drive.skipped)
        }
        return convert(posts, as: type, operation: operation) { try Self.typed($0, as: type, dates: dates, memory: &memory) }
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

    /// One post with drive metadata, read by its one reader (from the decrypted text when the
    /// listing kept it).
    private static func typedAsDriveMetadata(_ post: ListedPost<JSONValue>) throws -> ListedPost<DriveFileMetadata> {
        let metadata: DriveFileMetadata?
        switch post.rawMetadataSource {
        case .text(let text)?: metadata = try DriveFileMetadata.read(jsonBytes: text)
        case .value(let value)?: metadata = try DriveFileMetadata.read(jsonBytes: WireJSON.serialize(value))
        case nil: metadata = nil
        }
        return post.typed(metadata, source: post.rawMetadataSource)
    }

    /// The skip of a post whose metadata is not JSON, or not a `Metadata`.
    static func unreadable<Metadata>(
        _ post: ListedPost<JSONValue>, as type: Metadata.Type, error: any Error, operation: String
    ) -> SkippedPost {
        if let error = error as? WireFormatError, let limit = error.limit, error == .memoryLimitExceeded(limit: limit) {
            return SkippedPost(postCID: post.postCID, error: StationClientError(
                .tooLarge, operation: operation,
                message: "the listing's metadata would take more than \(limit) bytes of memory (maximumListingMemory)",
                underlying: error, limit: Int64(limit)))
        }
        let message = Self.isNotJSON(error) ? "the metadata is not JSON" : "the metadata is not a \(Metadata.self): \(error)"
        return SkippedPost(postCID: post.postCID, error: StationClientError(
            .invalidResponse, operation: operation, message: message, underlying: error))
    }

    /// Whether `error` says the text was not JSON at all (rather than JSON of another shape).
    static func isNotJSON(_ error: any Error) -> Bool {
        (error as? WireFormatError)?.isSyntaxError == true
    }

    /// One post with its metadata as `type`. Metadata still held as decrypted text is parsed
    /// here (drive metadata read from the text directly).
    ///
    /// - Throws: `WireFormatError` when the text is not JSON or not drive metadata; the
    ///   decoder's error when the JSON is not a `Metadata`.
    static func typed<Metadata: Decodable & Sendable>(
        _ post: ListedPost<JSONValue>, as type: Metadata.Type, dates: WireJSON.DateDecoding = .flexible,
        memory: inout JSONMemoryBudget
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
                let value = try WireJSON.parse(text, charging: &memory)
                source = .value(value)
                metadata = try decodeMetadata(type, from: value, dates: dates)
            }
        }
        return post.typed(metadata, source: source)
    }

    /// A post's metadata as `type`: raw JSON as is, drive metadata through its one reader, else
    /// `Decodable` (an app's own type).
    static func decodeMetadata<Metadata: Decodable>(
        _ type: Metadata.Type, from value: JSONValue, dates: WireJSON.DateDecoding = .flexible
    ) throws -> Metadata {
        if Metadata.self == JSONValue.self, let same = value as? Metadata { return same }
        // DriveFileMetadata keeps its times as integers, so the date strategy does not apply to it.
        if Metadata.self == DriveFileMetadata.self,
           let drive = try DriveFileMetadata.read(jsonBytes: WireJSON.serialize(value)) as? Metadata {
            return drive
        }
        return try WireJSON.decode(type, from: value, dates: dates)
    }
}
