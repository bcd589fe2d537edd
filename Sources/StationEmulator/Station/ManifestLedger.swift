import Manifest

/// The station's manifest with each entry's compact JSON kept beside it, so that publishing after
/// a post encodes only that post: the document is assembled from the kept bytes, which are
/// exactly what `WireJSON.encode(manifest, style: .compact)` writes (a test pins this), and the
/// DAG of the last published document is kept so the next one hashes only the chunks that
/// changed. It also indexes the manifest by post CID and counts the CIDs it names, so lookups by
/// CID do not walk every post.
///
/// Change the manifest only through the ledger's methods; read it through ``manifest``.
struct ManifestLedger: Sendable {
    /// One namespace's kept bytes.
    private struct Encoded: Sendable {
        /// Each post's compact JSON, in manifest order.
        var posts: [[UInt8]] = []
        /// `posts` joined with commas; `nil` after a change other than an append (rebuilt by the
        /// next ``ManifestLedger/document()``).
        var joined: [UInt8]? = []
        /// The profile's compact JSON, when the namespace has one.
        var profile: [UInt8]?
        /// The first position of each post CID (what `/rewrap` and `/post/share` look up).
        var firstIndex: [String: Int] = [:]

        mutating func append(_ bytes: [UInt8], postCID: String) {
            if firstIndex[postCID] == nil { firstIndex[postCID] = posts.count }
            if joined != nil {
                if !posts.isEmpty { joined?.append(UInt8(ascii: ",")) }
                joined?.append(contentsOf: bytes)
            }
            posts.append(bytes)
        }

        /// Removes the post at `index`; `remaining` are the model's posts after the removal.
        mutating func remove(at index: Int, remaining: [PostEntry]) {
            posts.remove(at: index)
            joined = nil
            reindex(remaining)
        }

        mutating func replace(at index: Int, with bytes: [UInt8]) {
            posts[index] = bytes
            joined = nil
        }

        /// Rebuilds ``firstIndex`` from the model's posts (after a removal shifted them).
        mutating func reindex(_ entries: [PostEntry]) {
            firstIndex = [:]
            for (position, entry) in entries.enumerated() where firstIndex[entry.postCID] == nil {
                firstIndex[entry.postCID] = position
            }
        }
    }

    /// The manifest, as the station would serve it.
    private(set) var manifest: Manifest
    private var encoded: [String: Encoded] = [:]
    /// How many times the manifest names each CID (post, envelopes, avatar).
    private var referenceCounts: [String: Int] = [:]
    /// The DAG of the last published document.
    var publishedFile = UnixFS.RevisedFile()

    /// A ledger holding `manifest` (each entry encoded once, here).
    init(_ manifest: Manifest = Manifest()) {
        self.manifest = manifest
        for (name, namespace) in manifest.clients {
            var kept = Encoded()
            for entry in namespace.posts {
                kept.append(Self.encode(entry), postCID: entry.postCID)
                count(entry, by: 1)
            }
            kept.profile = namespace.profile.map(Self.encode)
            count(namespace.profile, by: 1)
            encoded[name] = kept
        }
    }

    // MARK: Reading

    /// Whether the manifest names `cid` (a post, envelopes or avatar CID).
    func references(_ cid: String) -> Bool { referenceCounts[cid, default: 0] > 0 }

    /// The first entry with `postCID` and its namespace, as ``Manifest/entry(forPostCID:)``.
    func entry(forPostCID postCID: String) -> (client: String, entry: PostEntry)? {
        for name in manifest.clients.keys {
            if let index = encoded[name]?.firstIndex[postCID], let entry = manifest.clients[name]?.posts[index] {
                return (name, entry)
            }
        }
        return nil
    }

    /// The manifest document: `WireJSON.encode(manifest, style: .compact)`, assembled from the
    /// kept bytes.
    mutating func document() -> [UInt8] {
        var output = Array(#"{"clients":{"#.utf8)
        for (position, name) in manifest.clients.keys.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: WireJSON.serialize(.string(name)))
            output.append(contentsOf: #":{"posts":["#.utf8)
            let posts = encoded[name]?.joined ?? rejoin(name)
            output.append(contentsOf: posts)
            output.append(UInt8(ascii: "]"))
            if let profile = encoded[name]?.profile {
                output.append(contentsOf: #","profile":"#.utf8)
                output.append(contentsOf: profile)
            }
            output.append(UInt8(ascii: "}"))
        }
        output.append(contentsOf: "}}".utf8)
        return output
    }

    // MARK: Changing

    /// Appends `entry` to a namespace, as ``Manifest/append(_:toClient:)`` (`POST /post`).
    mutating func append(_ entry: PostEntry, toClient client: String?) {
        manifest.append(entry, toClient: client)
        encoded[Manifest.namespaceName(for: client), default: Encoded()].append(Self.encode(entry), postCID: entry.postCID)
        count(entry, by: 1)
    }

    /// Removes an entry, as ``Manifest/removeEntry(postCID:client:)`` (`/post/delete`, reshare).
    @discardableResult
    mutating func removeEntry(postCID: String, client: String?) -> (client: String, entry: PostEntry)? {
        guard let index = position(ofPostCID: postCID, client: client),
              let removed = manifest.removeEntry(postCID: postCID, client: client) else { return nil }
        encoded[removed.client]?.remove(at: index, remaining: manifest.posts(in: removed.client))
        count(removed.entry, by: -1)
        return removed
    }

    /// Replaces the entry at `index` of namespace `client` (which must exist), as `/rewrap_all`
    /// does with new envelopes.
    mutating func replaceEntry(at index: Int, inClient client: String, with entry: PostEntry) {
        guard let old = manifest.clients[client]?.posts[index] else { return }
        manifest.clients.updateValue(forKey: client, default: ClientNamespace()) { $0.posts[index] = entry }
        encoded[client, default: Encoded()].replace(at: index, with: Self.encode(entry))
        if old.postCID != entry.postCID { encoded[client]?.reindex(manifest.posts(in: client)) }
        count(old, by: -1)
        count(entry, by: 1)
    }

    /// Sets a namespace's profile (the namespace is added at the end when new).
    mutating func setProfile(_ profile: ClientProfile, forClient client: String) {
        count(manifest.clients[client]?.profile, by: -1)
        manifest.clients.updateValue(forKey: client, default: ClientNamespace()) { $0.profile = profile }
        encoded[client, default: Encoded()].profile = Self.encode(profile)
        count(profile, by: 1)
    }

    // MARK: Helpers

    /// Where ``Manifest/removeEntry(postCID:client:)`` will find `postCID`.
    private func position(ofPostCID postCID: String, client: String?) -> Int? {
        let candidates = client.map { [Manifest.namespaceName(for: $0)] } ?? manifest.clients.keys
        return candidates.lazy.compactMap { encoded[$0]?.firstIndex[postCID] }.first
    }

    private mutating func rejoin(_ name: String) -> [UInt8] {
        let posts = encoded[name]?.posts ?? []
        let joined = Array(posts.joined(separator: [UInt8(ascii: ",")]))
        encoded[name]?.joined = joined
        return joined
    }

    private static func encode(_ model: some Encodable) -> [UInt8] {
        // The wire encoder throws only when a model's `encode(to:)` does; these models' do not.
        (try? WireJSON.encode(model, style: .compact)) ?? []
    }

    private mutating func count(_ entry: PostEntry, by change: Int) {
        count(entry.postCID, by: change)
        if let envelopes = entry.envelopesCID { count(envelopes, by: change) }
    }

    private mutating func count(_ profile: ClientProfile?, by change: Int) {
        if let avatar = profile?.avatarCID { count(avatar, by: change) }
    }

    private mutating func count(_ cid: String, by change: Int) {
        guard !cid.isEmpty else { return }
        let total = referenceCounts[cid, default: 0] + change
        referenceCounts[cid] = total > 0 ? total : nil
    }
}
