import Manifest
import OrderedJSON
import ContentAddressing

/// The station's manifest with each entry's compact JSON kept beside it, so that publishing after
/// a post encodes only that post: the document is assembled from the kept bytes, which are
/// exactly what `WireJSON.encode(manifest, style: .compact)` writes (a test pins this). An
/// append inserts the entry's bytes into the kept document and records where the document
/// started to differ, so the published DAG is rebuilt only from there; any other change
/// reassembles it. It also indexes the manifest by post CID and counts the CIDs it names, so
/// lookups by CID do not walk every post.
///
/// Change the manifest only through the ledger's methods; read it through ``manifest``.
struct ManifestLedger: Sendable {
    /// One namespace's kept bytes.
    private struct Encoded: Sendable {
        /// The namespace's name as a JSON string.
        let key: [UInt8]
        /// Each post's compact JSON, in manifest order.
        var posts: [[UInt8]] = []
        /// `posts` joined with commas; `nil` after a change other than an append (rebuilt by the
        /// next ``ManifestLedger/document()``).
        var joined: [UInt8]? = []
        /// The profile's compact JSON, when the namespace has one.
        var profile: [UInt8]?
        /// The first position of each post CID (what `/rewrap` and `/post/share` look up).
        var firstIndex: [String: Int] = [:]

        init(name: String) { key = WireJSON.serialize(.string(name)) }

        /// The length of the namespace's member in the document (`"name":{"posts":[…]…}`);
        /// `joined` must be current.
        var length: Int {
            key.count + ManifestLedger.postsOpen.count + (joined?.count ?? 0) + 1
                + (profile.map { ManifestLedger.profileKey.count + $0.count } ?? 0) + 1
        }

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

    private static let documentOpen = Array(#"{"clients":{"#.utf8)
    private static let postsOpen = Array(#":{"posts":["#.utf8)
    private static let profileKey = Array(#","profile":"#.utf8)

    /// The manifest, as the station would serve it.
    private(set) var manifest: Manifest
    private var encoded: [String: Encoded] = [:]
    /// The document, kept current by appends; `nil` after any other change (every namespace's
    /// `joined` is current while it is not `nil`).
    private var assembled: [UInt8]?
    /// How many leading bytes of the document are those of the last ``document()``.
    private var unchangedPrefix = 0
    /// How many times the manifest names each CID (post, envelopes, avatar).
    private var referenceCounts: [String: Int] = [:]
    /// The DAG of the last published document.
    var publishedFile = UnixFS.RevisedFile()

    /// A ledger holding `manifest` (each entry encoded once, here).
    init(_ manifest: Manifest = Manifest()) {
        self.manifest = manifest
        for (name, namespace) in manifest.clients {
            var kept = Encoded(name: name)
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

    /// The manifest document (`WireJSON.encode(manifest, style: .compact)`), and how many of its
    /// leading bytes are those of the previous call's document.
    mutating func document() -> (bytes: [UInt8], unchangedPrefix: Int) {
        if assembled == nil {
            unchangedPrefix = 0
            assembled = assemble()
        }
        let bytes = assembled ?? []
        defer { unchangedPrefix = bytes.count }
        return (bytes, unchangedPrefix)
    }

    /// The document, built from the kept bytes.
    private mutating func assemble() -> [UInt8] {
        var output = Self.documentOpen
        for (position, name) in manifest.clients.keys.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            if encoded[name]?.joined == nil { rejoin(name) }
            guard let kept = encoded[name] else { continue }
            output.append(contentsOf: kept.key)
            output.append(contentsOf: Self.postsOpen)
            output.append(contentsOf: kept.joined ?? [])
            output.append(UInt8(ascii: "]"))
            if let profile = kept.profile {
                output.append(contentsOf: Self.profileKey)
                output.append(contentsOf: profile)
            }
            output.append(UInt8(ascii: "}"))
        }
        output.append(contentsOf: "}}".utf8)
        return output
    }

    /// Where a post appended to namespace `name` goes in the kept document (before its `]`), or
    /// `nil` when there is no kept document or the namespace is new.
    private func insertionOffset(inNamespace name: String) -> Int? {
        guard assembled != nil else { return nil }
        var offset = Self.documentOpen.count
        for other in manifest.clients.keys {
            guard let kept = encoded[other] else { return nil }
            if other == name { return offset + kept.key.count + Self.postsOpen.count + (kept.joined?.count ?? 0) }
            offset += kept.length + 1
        }
        return nil
    }

    /// Drops the kept document: the next ``document()`` assembles it again.
    private mutating func invalidate() {
        assembled = nil
        unchangedPrefix = 0
    }

    // MARK: Changing

    /// Appends `entry` to a namespace, as ``Manifest/append(_:toClient:)`` (`POST /post`).
    mutating func append(_ entry: PostEntry, toClient client: String?) {
        let name = Manifest.namespaceName(for: client)
        let bytes = Self.encode(entry)
        let offset = insertionOffset(inNamespace: name)
        let first = encoded[name]?.posts.isEmpty ?? true
        manifest.append(entry, toClient: client)
        encoded[name, default: Encoded(name: name)].append(bytes, postCID: entry.postCID)
        count(entry, by: 1)
        guard let offset else { return invalidate() }
        assembled?.insert(contentsOf: first ? bytes : [UInt8(ascii: ",")] + bytes, at: offset)
        unchangedPrefix = min(unchangedPrefix, offset)
    }

    /// Removes an entry, as ``Manifest/removeEntry(postCID:client:)`` (`/post/delete`, reshare).
    @discardableResult
    mutating func removeEntry(postCID: String, client: String?) -> (client: String, entry: PostEntry)? {
        guard let index = position(ofPostCID: postCID, client: client),
              let removed = manifest.removeEntry(postCID: postCID, client: client) else { return nil }
        encoded[removed.client]?.remove(at: index, remaining: manifest.posts(in: removed.client))
        count(removed.entry, by: -1)
        invalidate()
        return removed
    }

    /// Replaces the entry at `index` of namespace `client` (which must exist), as `/rewrap_all`
    /// does with new envelopes.
    mutating func replaceEntry(at index: Int, inClient client: String, with entry: PostEntry) {
        guard let old = manifest.clients[client]?.posts[index] else { return }
        manifest.clients.updateValue(forKey: client, default: ClientNamespace()) { $0.posts[index] = entry }
        encoded[client, default: Encoded(name: client)].replace(at: index, with: Self.encode(entry))
        if old.postCID != entry.postCID { encoded[client]?.reindex(manifest.posts(in: client)) }
        count(old, by: -1)
        count(entry, by: 1)
        invalidate()
    }

    /// Sets a namespace's profile (the namespace is added at the end when new).
    mutating func setProfile(_ profile: ClientProfile, forClient client: String) {
        count(manifest.clients[client]?.profile, by: -1)
        manifest.clients.updateValue(forKey: client, default: ClientNamespace()) { $0.profile = profile }
        encoded[client, default: Encoded(name: client)].profile = Self.encode(profile)
        count(profile, by: 1)
        invalidate()
    }

    // MARK: Helpers

    /// Where ``Manifest/removeEntry(postCID:client:)`` will find `postCID`.
    private func position(ofPostCID postCID: String, client: String?) -> Int? {
        let candidates = client.map { [Manifest.namespaceName(for: $0)] } ?? manifest.clients.keys
        return candidates.lazy.compactMap { encoded[$0]?.firstIndex[postCID] }.first
    }

    private mutating func rejoin(_ name: String) {
        let posts = encoded[name]?.posts ?? []
        encoded[name]?.joined = Array(posts.joined(separator: [UInt8(ascii: ",")]))
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

// Writing a manifest is the station's side (a client only reads one), so it lives here.
extension Manifest {
    /// Appends `entry` to a namespace (created at the end if new), as `POST /post` does.
    /// `client` is normalized with ``namespaceName(for:)``.
    mutating func append(_ entry: PostEntry, toClient client: String?) {
        clients.updateValue(forKey: Self.namespaceName(for: client), default: ClientNamespace()) { $0.posts.append(entry) }
    }

    /// Removes the first entry with `postCID`, from `client`'s namespace when given, else from
    /// the first namespace holding it (as `/post/delete` does). Returns the namespace and entry,
    /// or `nil` when not found.
    @discardableResult
    mutating func removeEntry(postCID: String, client: String? = nil) -> (client: String, entry: PostEntry)? {
        let candidates = client.map { [Self.namespaceName(for: $0)] } ?? clients.keys
        for name in candidates {
            guard let index = clients[name]?.posts.firstIndex(where: { $0.postCID == postCID }) else { continue }
            let removed = clients.updateValue(forKey: name, default: ClientNamespace()) { $0.posts.remove(at: index) }
            return (name, removed)
        }
        return nil
    }
}
