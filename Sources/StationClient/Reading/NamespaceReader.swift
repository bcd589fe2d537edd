import Foundation
import Manifest
import ContentAddressing
import OrderedJSON

extension StationClient {
    /// Reads this app's namespace and decrypts every post's metadata into `Metadata`.
    ///
    /// `/profile` gives the manifest CID and ``fetchManifest(cid:)`` the manifest (where from, and
    /// within which limits, is said there); only the configured namespace is read. For each
    /// encrypted post the key comes from the cache or from `/rewrap` (at most
    /// ``StationClientConfiguration/rewrapConcurrency`` at once), the envelope is opened with the
    /// device key and the metadata decrypted. Public posts are read as plaintext. A post that
    /// fails is reported in ``PostListing/skipped`` and never fails the listing; so is a manifest
    /// entry that is not a post, or that the manifest's limits left out. A listing makes at most
    /// one `/rewrap` call per post it lists.
    ///
    /// When the station is unreachable, returns the last listing read online (marked
    /// ``PostListing/isOffline``) instead of failing.
    ///
    /// - Parameter type: the app's metadata type (`DriveFileMetadata` for `drive`, or
    ///   `JSONValue` for raw JSON).
    /// - Throws: ``StationClientError`` when the station is unreachable and there is no offline
    ///   listing, when ``fetchManifest(cid:)`` fails (the offline view is then kept as it was), or
    ///   when cancelled.
    public func listPosts<Metadata: Decodable & Sendable>(as type: Metadata.Type) async throws -> PostListing<Metadata> {
        let namespace = try self.namespace(nil)
        let operation = "listing namespace \(namespace)"
        let profile: StationProfile
        do {
            profile = try await self.profile()
        } catch let error as StationClientError where error.kind == .unreachable {
            let item = CacheItem.offlineListing(station: credentials.stationUID, namespace: namespace)
            if let offline = await offline.listing(item: item, as: type, dates: configuration.metadataDateDecoding,
                                                   memoryLimit: configuration.maximumListingMemory) {
                configuration.log(.warning, "\(operation): station unreachable, showing the offline listing")
                return offline
            }
            throw error
        }
        guard let namedCID = profile.manifestCID else {
            return PostListing(posts: [], skipped: [], isOffline: false, manifestCID: nil)
        }
        let (manifestCID, manifest) = try await fetchCurrentManifest(cid: namedCID)
        let entries = manifest.posts(in: namespace)
        let refused = ListingEngine.skippedEntries(of: manifest, namespace: namespace, operation: operation)
        let cachedKeys = await postKeys.keys(for: entries.map(\.postCID))
        // Each worker holds at most one /rewrap answer of at most ResponseLimit.rewrap bytes.
        let width = ResponseLimit.listingWidth(rewrapConcurrency: configuration.rewrapConcurrency, entryCount: entries.count)
        let read = try await ListingEngine(keys: ownKeySource(posts: entries.count)).read(entries, cachedKeys: cachedKeys, width: width)
        await postKeys.keep(read.learnedKeys, skipped: read.skipped)
        for skip in refused + read.skipped { configuration.log(.warning, "\(operation): skipped \(skip)") }
        let typed = ListingEngine.typed(read.posts, as: type, dates: configuration.metadataDateDecoding,
                                        memoryLimit: configuration.maximumListingMemory, operation: operation)
        let skipped = refused + read.skipped + typed.skipped
        try await recordListing(read.posts, namespace: namespace, complete: skipped.isEmpty, manifestCID: manifestCID)
        return PostListing(posts: typed.posts, skipped: skipped, isOffline: false, manifestCID: manifestCID)
    }
}
