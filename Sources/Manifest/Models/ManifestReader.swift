// A manifest read straight from its parsed JSON, with the rules of the `Decodable` path
// (`Manifest.init(from:)`, `ClientNamespace.init(from:)`, `PostEntry.init(from:)`): a listing of
// a large namespace reads every entry on every manifest change, and the generic path (a decoder,
// a keyed container and a coding key per field) costs several times the parse.

extension Manifest {
    /// Reads a manifest from its bytes exactly as `WireJSON.decode(Manifest.self, from:)` does
    /// (the same namespaces, entries, issues and errors), without the generic `Decodable` path.
    ///
    /// - Throws: ``WireFormatError`` when the bytes are not JSON, or the document is not an object.
    package static func read(_ bytes: [UInt8]) throws(WireFormatError) -> Manifest {
        try read(WireJSON.parse(bytes))
    }

    /// Reads a manifest from a parsed document (see ``read(_:)-([UInt8])``).
    ///
    /// - Throws: ``WireFormatError/typeMismatch(path:expected:found:)`` when the document is not an object.
    package static func read(_ document: JSONValue) throws(WireFormatError) -> Manifest {
        guard case let .object(top) = document else {
            throw .typeMismatch(path: "", expected: "an object", found: document.kindName)
        }
        var manifest = Manifest()
        if case let .object(namespaces)? = top["clients"] {
            for (name, value) in namespaces {
                guard case let .object(members) = value else {
                    // The station replaces a namespace that is not an object with an empty one.
                    var empty = ClientNamespace()
                    empty.issues = [ManifestIssue(client: name, index: nil, reason: "namespace is not an object")]
                    manifest.clients[name] = empty
                    continue
                }
                manifest.clients[name] = ClientNamespace.read(members, client: name, path: "clients." + name)
            }
            return manifest
        }
        if top.contains(key: "clients") {
            manifest.topLevelIssues.append(ManifestIssue(client: nil, index: nil, reason: "clients is not an object"))
        }
        guard top.contains(key: "posts") || top.contains(key: "client") else { return manifest }
        // Legacy flat form: the station keeps the client name as written unless it is blank.
        manifest.wasLegacyFlat = true
        var name = "default"
        if case let .string(client)? = top["client"], !pythonStrip(client).isEmpty { name = client }
        var namespace = ClientNamespace()
        (namespace.posts, namespace.issues) = ClientNamespace.readPosts(top["posts"], client: name, path: "posts")
        manifest.clients[name] = namespace
        return manifest
    }
}

extension ClientNamespace {
    /// Reads a namespace object as ``init(from:)`` does; `path` is where it is (`clients.<name>`).
    static func read(_ members: JSONObject, client: String, path: String) -> ClientNamespace {
        var namespace = ClientNamespace()
        (namespace.posts, namespace.issues) = readPosts(members["posts"], client: client, path: path + ".posts")
        if let profile = members["profile"], !profile.isNull {
            if case let .object(fields) = profile {
                namespace.profile = ClientProfile(fields: fields)
            } else {
                namespace.issues.append(ManifestIssue(client: client, index: nil, reason: "profile is not an object"))
            }
        }
        return namespace
    }

    /// Reads a `posts` value entry by entry: absent or `null` is empty, another non-array is
    /// empty with an issue, a bad entry is skipped with an issue naming `path[index]`.
    static func readPosts(_ value: JSONValue?, client: String?, path: String) -> ([PostEntry], [ManifestIssue]) {
        guard let value, !value.isNull else { return ([], []) }
        guard case let .array(elements) = value else {
            return ([], [ManifestIssue(client: client, index: nil, reason: "posts is not an array")])
        }
        var posts = [PostEntry]()
        posts.reserveCapacity(elements.count)
        var issues = [ManifestIssue]()
        for (index, element) in elements.enumerated() {
            do throws(WireFormatError) {
                posts.append(try PostEntry.read(element, path: { "\(path)[\(index)]" }))
            } catch {
                issues.append(ManifestIssue(client: client, index: index, reason: error.description))
            }
        }
        return (posts, issues)
    }
}

extension PostEntry {
    /// Reads one entry as ``init(from:)`` does, from its parsed JSON; `path` names it in errors
    /// (built only on failure).
    ///
    /// - Throws: ``WireFormatError`` with the messages of the `Decodable` path: the entry is not
    ///   an object, or has no usable `post_cid` (nor legacy `cid`).
    package static func read(_ value: JSONValue, path: () -> String) throws(WireFormatError) -> PostEntry {
        guard case let .object(members) = value else {
            throw .typeMismatch(path: path(), expected: "an object", found: value.kindName)
        }
        func string(_ key: String) -> String? {
            if case let .string(text)? = members[key] { return text }
            return nil
        }
        func nonEmpty(_ key: String) -> String? {
            guard let text = string(key), !text.isEmpty else { return nil }
            return text
        }
        guard let cid = nonEmpty("post_cid") ?? nonEmpty("cid") else {
            if members.contains(key: "post_cid") {
                throw .invalidValue(path: path() + ".post_cid", reason: "post_cid is not a non-empty string")
            }
            throw .missingField(path: path() + ".post_cid")
        }
        let audienceMode: AudienceMode
        switch members["audience_mode"] {
        case let .string(text)?: audienceMode = AudienceMode(wireValue: text)
        case nil, .null?: audienceMode = .all
        case let other?: audienceMode = .unknown(other.description)
        }
        var isEncrypted = audienceMode != .public
        if case let .bool(flag)? = members["encrypted"] { isEncrypted = flag }
        var audienceUIDs: [String]?
        if case let .array(elements)? = members["audience_uids"] { audienceUIDs = elements.compactMap(\.stringValue) }
        var metadata: PostMetadata?
        if let value = members["metadata"], !value.isNull { metadata = PostMetadata(jsonValue: value) }
        return PostEntry(
            postCID: cid, audienceMode: audienceMode, isEncrypted: isEncrypted, envelopesCID: string("envelopes_cid"),
            envelopesCount: WireInteger.lenient(members["envelopes_count"]), createdAt: WireInteger.lenient(members["created_at"]),
            audienceUIDs: audienceUIDs, metadata: metadata)
    }
}

/// Integers as the wire decoder reads them.
enum WireInteger {
    /// An `Int` as the wire decoder reads one (`3`, `3.0`, `-0`), or `nil` for anything else
    /// (missing, `null`, another type, a fraction, out of range), as a lenient read of the
    /// `Decodable` path gives.
    static func lenient(_ value: JSONValue?) -> Int? {
        guard case let .number(number)? = value else { return nil }
        if number.isInteger, let exact = Int(number.text) { return exact }
        if number.text == "-0" { return 0 }
        let double = number.doubleValue
        guard double.isFinite, double.rounded(.towardZero) == double else { return nil }
        return Int(exactly: double)
    }
}
