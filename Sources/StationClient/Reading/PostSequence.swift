import Foundation
import Manifest
import OrderedJSON

extension StationClient {
    /// This app's namespace as an asynchronous sequence: each post is read (its key fetched
    /// through `/rewrap` when it is not cached, its metadata decrypted) as the sequence is
    /// consumed, with at most ``StationClientConfiguration/rewrapConcurrency`` posts read ahead.
    ///
    /// Each element is a readable post or a ``SkippedPost`` saying why one could not be read; a
    /// bad post never ends the sequence. Stop iterating (or cancel the task) and the reads ahead
    /// are cancelled. Reading to the end keeps the new post keys and the offline listing, as
    /// ``listPosts(as:)`` does.
    ///
    /// ```swift
    /// import Manifest
    /// import StationClient
    ///
    /// func printDrive(_ client: StationClient) async throws {
    ///     for try await item in client.posts(as: DriveFileMetadata.self) {
    ///         switch item {
    ///         case .success(let post): print(post.metadata?.filename ?? post.postCID)
    ///         case .failure(let skipped): print("skipped \(skipped.postCID): \(skipped.error)")
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// The sequence reads online only: when the station is unreachable its first step throws
    /// `.unreachable`; ``listPosts(as:)`` gives the offline view instead.
    ///
    /// - Parameter type: the app's metadata type (`DriveFileMetadata` for `drive`, or `JSONValue`).
    public nonisolated func posts<Metadata: Decodable & Sendable>(as type: Metadata.Type) -> PostSequence<Metadata> {
        PostSequence(client: self)
    }

    /// The first step of a ``PostSequence``: the namespace's entries and what reading them needs.
    func sequencePlan() async throws -> SequencePlan? {
        let namespace = try self.namespace(nil)
        guard let namedCID = try await profile().manifestCID else { return nil }
        let (manifestCID, manifest) = try await fetchCurrentManifest(cid: namedCID)
        await postKeys.load()
        let entries = manifest.posts(in: namespace)
        let skipped = ListingEngine.skippedEntries(of: manifest, namespace: namespace, operation: "listing namespace \(namespace)")
        return SequencePlan(entries: entries, skipped: skipped, engine: ListingEngine(keys: ownKeySource(posts: entries.count)),
                            manifestCID: manifestCID, namespace: namespace)
    }

    /// What a ``PostSequence`` reads: the namespace's entries, the entries the manifest reader
    /// skipped (yielded first), and the engine with the listing's `/rewrap` budget.
    struct SequencePlan {
        var entries: [PostEntry]
        var skipped: [SkippedPost]
        var engine: ListingEngine
        var manifestCID: String
        var namespace: String
    }

    /// Keeps the outcome of one post a ``PostSequence`` read: a new key is cached, a key that
    /// did not open its post is dropped.
    nonisolated func recordSequenceRead(_ outcome: ListingEngine.Outcome) async {
        switch outcome {
        case .read(let read): if let key = read.newKey { await postKeys.cache(key, for: read.post.postCID) }
        case .skipped(let skipped): await postKeys.drop(skipped.postCID)
        case .notShared: break
        }
    }
}

/// The posts of a namespace, read as they are consumed (see ``StationClient/posts(as:)``).
public struct PostSequence<Metadata: Decodable & Sendable>: AsyncSequence, Sendable {
    /// A readable post, or one that could not be read and why.
    public typealias Element = Result<ListedPost<Metadata>, SkippedPost>

    let client: StationClient

    /// Starts a reading of the namespace (each iterator reads the current manifest afresh).
    public func makeAsyncIterator() -> Iterator { Iterator(reader: PostSequenceReader(client: client)) }

    /// Reads the next post, with the posts after it already on their way.
    public struct Iterator: AsyncIteratorProtocol {
        let reader: PostSequenceReader<Metadata>

        /// The next post in manifest order, or `nil` after the last one.
        ///
        /// - Throws: ``StationClientError`` when the profile or the manifest cannot be read (the
        ///   first step), or `.cancelled`.
        public mutating func next() async throws -> Element? { try await reader.next() }
    }
}

/// The state of one iteration: the entries, the window of reads in flight, and what was read.
/// Used by one iterator at a time, never shared.
final class PostSequenceReader<Metadata: Decodable & Sendable> {
    private typealias Read = ListingEngine.Outcome

    private let client: StationClient
    private var started = false
    private var entries: [PostEntry] = []
    private var skippedEntries: [SkippedPost] = []
    private var engine: ListingEngine?
    private var manifestCID: String?
    private var namespace = ""
    private var nextToStart = 0
    private var nextToYield = 0
    private var inFlight: [Int: Task<Read, any Error>] = [:]
    private var read: [ListedPost<JSONValue>] = []
    private var complete = true
    private var recorded = false
    /// What the metadata trees of this iteration's posts may take together, as for a listing.
    private var memory: JSONMemoryBudget

    init(client: StationClient) {
        self.client = client
        memory = JSONMemoryBudget(limit: client.configuration.maximumListingMemory)
    }

    deinit {
        for task in inFlight.values { task.cancel() }
    }

    func next() async throws -> Result<ListedPost<Metadata>, SkippedPost>? {
        if !started {
            started = true
            guard let plan = try await client.sequencePlan() else { return nil }
            (entries, engine, manifestCID, namespace) = (plan.entries, plan.engine, plan.manifestCID, plan.namespace)
            skippedEntries = plan.skipped.reversed()
        }
        if let skipped = skippedEntries.popLast() {
            complete = false
            return .failure(skipped)
        }
        guard let engine, nextToYield < entries.count else {
            try await recordOnce()
            return nil
        }
        // As for a listing: each read ahead holds at most one /rewrap answer of ResponseLimit.rewrap bytes.
        let width = ResponseLimit.listingWidth(rewrapConcurrency: client.configuration.rewrapConcurrency, entryCount: entries.count)
        while nextToStart < entries.count, nextToStart - nextToYield < width {
            let entry = entries[nextToStart]
            let client = client
            inFlight[nextToStart] = Task {
                let cached = await client.postKeys.key(for: entry.postCID)
                return try await engine.read(entry, cachedKey: cached)
            }
            nextToStart += 1
        }
        guard let task = inFlight.removeValue(forKey: nextToYield) else { return nil }
        nextToYield += 1
        let outcome = try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
        await client.recordSequenceRead(outcome)
        switch outcome {
        case .read(let post):
            read.append(post.post)
            do {
                return .success(try ListingEngine.typed(post.post, as: Metadata.self,
                                                        dates: client.configuration.metadataDateDecoding, memory: &memory))
            } catch {
                // As in a listing: the post was read, but its metadata is not JSON or not a Metadata.
                complete = false
                return .failure(ListingEngine.unreadable(post.post, as: Metadata.self, error: error,
                                                         operation: "reading post \(post.post.postCID)"))
            }
        case .skipped(let skipped):
            complete = false
            return .failure(skipped)
        case .notShared:
            // The owner's key source lists every post; a follower's sequence would leave this one out.
            return try await next()
        }
    }

    /// At the end, keeps the keys and the offline listing once.
    private func recordOnce() async throws {
        guard !recorded, let manifestCID else { return }
        recorded = true
        try await client.recordListing(read, namespace: namespace, complete: complete, manifestCID: manifestCID)
    }
}
