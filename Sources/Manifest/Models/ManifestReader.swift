import OrderedJSON

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ContentAddressing

// The one reader of a manifest: straight from the bytes, without a JSON tree or a decoder (a
// listing of a large namespace reads every entry on every manifest change, and a tree or the
// generic `Decodable` path cost several times the parse).

extension Manifest {
    /// Reads a manifest from its bytes, tolerantly: the station's form
    /// (`{"clients":{"<client>":{"posts":[…],"profile":{…}}}}`) and the legacy flat form
    /// (`{"client":"…","posts":[…]}`, read as one namespace, ``wasLegacyFlat``). A bad entry, a
    /// `posts` that is not an array, a namespace or profile that is not an object is skipped
    /// and listed in ``issues``; members it does not know are ignored; of a repeated key the last
    /// value counts (at the first one's place). Reading a document `WireJSON` wrote gives back
    /// the manifest that was written.
    ///
    /// Bytes from an untrusted source are read with `limits` (see ``ManifestLimits``): past
    /// ``ManifestLimits/maximumPosts`` the read stops; an entry whose metadata is past the metadata
    /// caps is skipped, listed in ``issues``. The default, ``ManifestLimits/unlimited``, is for
    /// manifests one trusts.
    ///
    /// - Throws: `WireFormatError` when the bytes are not JSON (or nest deeper than
    ///   `WireJSON.maximumDepth` outside a measured metadata value), the document is not an
    ///   object, or it holds more posts than `limits` allow (`limitExceeded(path:limit:)`).
    public static func read(_ bytes: [UInt8], limits: ManifestLimits = .unlimited) throws(WireFormatError) -> Manifest {
        try bytes.withUnsafeBufferPointer { buffer throws(WireFormatError) in try read(buffer, limits: limits) }
    }

    /// Reads a manifest from `Data` in place, as ``read(_:limits:)-([UInt8],_)`` reads an array: a
    /// 10,000-post manifest is several megabytes, better not copied to be read.
    ///
    /// - Throws: as ``read(_:limits:)-([UInt8],_)``.
    public static func read(_ data: Data, limits: ManifestLimits = .unlimited) throws(WireFormatError) -> Manifest {
        let result = data.withUnsafeBytes { raw in
            Result { () throws(WireFormatError) in try read(raw.bindMemory(to: UInt8.self), limits: limits) }
        }
        return try result.get()
    }

    /// ``read(_:limits:)-([UInt8],_)`` over bytes in place.
    static func read(_ bytes: UnsafeBufferPointer<UInt8>, limits: ManifestLimits) throws(WireFormatError) -> Manifest {
        var parser = JSONParser(bytes: bytes, maximumDepth: WireJSON.maximumDepth,
                                memory: JSONMemoryBudget(limit: limits.maximumMemory))
        var budget = ManifestBudget(limits: limits)
        return try parser.readManifest(&budget)
    }
}

/// The limits of one read and the posts counted so far (the memory is the parser's own budget).
struct ManifestBudget {
    let limits: ManifestLimits
    var posts = 0

    /// What an entry costs beside the text it keeps: the entry itself and its allocations' overhead.
    static let entryCost = MemoryLayout<PostEntry>.stride + 96
    /// What a namespace costs beside its name: its entry in the map, its arrays, an issue.
    static let namespaceCost = MemoryLayout<ClientNamespace>.stride + MemoryLayout<ManifestIssue>.stride + 160
}

extension PostEntry {
    /// Reads an entry from its known members (see ``Manifest`` for the rules); `path` names it in
    /// errors (built only on failure).
    ///
    /// - Throws: `WireFormatError` when the entry has no usable `post_cid` (nor legacy `cid`).
    static func read(_ members: EntryMembers, path: () -> String) throws(WireFormatError) -> PostEntry {
        func string(_ value: JSONValue?) -> String? {
            if case let .string(text)? = value { return text }
            return nil
        }
        func nonEmpty(_ value: JSONValue?) -> String? {
            guard let text = string(value), !text.isEmpty else { return nil }
            return text
        }
        guard let cid = nonEmpty(members.postCID) ?? nonEmpty(members.cid) else {
            if members.postCID != nil {
                throw .invalidValue(path: path() + ".post_cid", reason: "post_cid is not a non-empty string")
            }
            throw .missingField(path: path() + ".post_cid")
        }
        let audienceMode: AudienceMode
        switch members.audienceMode {
        case let .string(text)?: audienceMode = AudienceMode(wireValue: text)
        case nil, .null?: audienceMode = .all
        case let other?: audienceMode = .unknown(other.description)
        }
        var isEncrypted = audienceMode != .public
        if case let .bool(flag)? = members.encrypted { isEncrypted = flag }
        var audienceUIDs: [String]?
        if case let .array(elements)? = members.audienceUIDs { audienceUIDs = elements.compactMap(\.stringValue) }
        return PostEntry(
            postCID: cid, audienceMode: audienceMode, isEncrypted: isEncrypted, envelopesCID: string(members.envelopesCID),
            envelopesCount: members.envelopesCount.integer.flatMap { $0 >= 0 ? $0 : nil },
            createdAt: members.createdAt.integer.flatMap(UnixSeconds.checked),
            audienceUIDs: audienceUIDs, metadata: members.metadata)
    }

    /// The members of an entry that reading it looks at (the last value of a repeated key, as in
    /// the JSON tree); the others are ignored.
    struct EntryMembers {
        var postCID: JSONValue?
        var cid: JSONValue?
        var audienceMode: JSONValue?
        var encrypted: JSONValue?
        var envelopesCID: JSONValue?
        var envelopesCount = LenientInteger.absent
        var createdAt = LenientInteger.absent
        var audienceUIDs: JSONValue?
        /// `nil` for an absent or `null` metadata.
        var metadata: PostMetadata?

        /// The keys an entry's reading looks at.
        enum Key: JSONMemberName {
            case postCID, cid, audienceMode, encrypted, envelopesCID, envelopesCount, createdAt, audienceUIDs, metadata

            /// The key whose UTF-8 is `bytes`, compared without making a `String` (the reader
            /// meets six keys per post).
            init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
                func matches(_ name: StaticString) -> Bool { JSONParser.bytes(bytes, are: name) }
                switch bytes.count {
                case 3 where matches("cid"): self = .cid
                case 8 where matches("post_cid"): self = .postCID
                case 8 where matches("metadata"): self = .metadata
                case 9 where matches("encrypted"): self = .encrypted
                case 10 where matches("created_at"): self = .createdAt
                case 13 where matches("audience_mode"): self = .audienceMode
                case 13 where matches("envelopes_cid"): self = .envelopesCID
                case 13 where matches("audience_uids"): self = .audienceUIDs
                case 15 where matches("envelopes_count"): self = .envelopesCount
                default: return nil
                }
            }
        }

        mutating func set(_ key: Key, _ value: JSONValue) {
            switch key {
            case .postCID: postCID = value
            case .cid: cid = value
            case .audienceMode: audienceMode = value
            case .encrypted: encrypted = value
            case .envelopesCID: envelopesCID = value
            case .envelopesCount: envelopesCount = .value(value)
            case .createdAt: createdAt = .value(value)
            case .audienceUIDs: audienceUIDs = value
            case .metadata: metadata = value.isNull ? nil : PostMetadata(jsonValue: value)
            }
        }
    }
}

/// The manifest read straight from the bytes (see ``Manifest/read(_:limits:)-([UInt8],_)``). Syntax
/// errors (and too deep a nesting) fail the whole document, as for any JSON; what is JSON but not
/// the expected shape becomes an issue.
extension JSONParser {
    private var next: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// The top-level `clients` member as read: its namespaces, or another value.
    private enum ClientsMember {
        case namespaces(OrderedMap<ClientNamespace>)
        case notAnObject
    }

    mutating func readManifest(_ budget: inout ManifestBudget) throws(WireFormatError) -> Manifest {
        skipByteOrderMark()
        skipWhitespace()
        guard next == UInt8(ascii: "{") else {
            // Not an object: whatever it is (or why it is not JSON), as the parser reports it.
            let value = try parseDocument()
            throw .typeMismatch(path: "", expected: "an object", found: value.kindName)
        }
        var clients: ClientsMember?
        var legacyClient: JSONValue?
        var legacyPosts: ([PostEntry], [ManifestIssue])?
        if try openContainer(depth: 1) {
            repeat {
                let key = try parseMemberKey()
                switch key {
                case "clients":
                    if next == UInt8(ascii: "{") {
                        clients = .namespaces(try readClients(&budget))
                    } else {
                        _ = try parseValue(depth: 1)
                        clients = .notAnObject
                    }
                case "client": legacyClient = try parseValue(depth: 1)
                case "posts": legacyPosts = try readPosts(depth: 1, path: "posts", client: nil, budget: &budget)
                default: _ = try skipValue(depth: 1)
                }
            } while try containerContinues(closingWith: UInt8(ascii: "}"))
        }
        skipWhitespace()
        guard index == bytes.count else { throw fail("extra data after the JSON value") }

        var manifest = Manifest()
        switch clients {
        case .namespaces(let namespaces)?:
            manifest.clients = namespaces
            return manifest
        case .notAnObject?:
            manifest.topLevelIssues.append(ManifestIssue(client: nil, index: nil, reason: "clients is not an object"))
        case nil:
            break
        }
        guard legacyClient != nil || legacyPosts != nil else { return manifest }
        // Legacy flat form: the station keeps the client name as written unless it is blank.
        manifest.wasLegacyFlat = true
        var name = "default"
        if case let .string(client)? = legacyClient, !pythonStrip(client).isEmpty { name = client }
        var namespace = ClientNamespace()
        if let (posts, issues) = legacyPosts {
            namespace.posts = posts
            namespace.issues = issues.map { ManifestIssue(client: name, index: $0.index, reason: $0.reason, postCID: $0.postCID) }
        }
        manifest.clients[name] = namespace
        return manifest
    }

    private mutating func readClients(_ budget: inout ManifestBudget) throws(WireFormatError) -> OrderedMap<ClientNamespace> {
        var clients = OrderedMap<ClientNamespace>()
        guard try openContainer(depth: 2) else { return clients }
        repeat {
            let name = try parseMemberKey()
            try memory.charge(ManifestBudget.namespaceCost + name.utf8.count)
            if next == UInt8(ascii: "{") {
                clients[name] = try readNamespace(name, budget: &budget)
            } else {
                // The station replaces a namespace that is not an object with an empty one.
                _ = try skipValue(depth: 2)
                var empty = ClientNamespace()
                empty.issues = [ManifestIssue(client: name, index: nil, reason: "namespace is not an object")]
                clients[name] = empty
            }
        } while try containerContinues(closingWith: UInt8(ascii: "}"))
        return clients
    }

    private mutating func readNamespace(_ name: String, budget: inout ManifestBudget) throws(WireFormatError) -> ClientNamespace {
        var namespace = ClientNamespace()
        var profile: JSONValue?
        var profileIssue: String?
        if try openContainer(depth: 3) {
            repeat {
                let key = try parseMemberKey()
                switch key {
                case "posts":
                    (namespace.posts, namespace.issues) = try readPosts(depth: 3, path: "clients.\(name).posts", client: name,
                                                                        budget: &budget)
                case "profile":
                    switch try readMeasuredValue(depth: 3, limits: budget.limits, name: "profile") {
                    case .success(let value): (profile, profileIssue) = (value, nil)
                    case .failure(let issue): (profile, profileIssue) = (nil, issue.reason)
                    }
                default: _ = try skipValue(depth: 3)
                }
            } while try containerContinues(closingWith: UInt8(ascii: "}"))
        }
        if let profileIssue { namespace.issues.append(ManifestIssue(client: name, index: nil, reason: profileIssue)) }
        if let profile, !profile.isNull {
            if case let .object(fields) = profile {
                namespace.profile = ClientProfile(fields: fields)
            } else {
                namespace.issues.append(ManifestIssue(client: name, index: nil, reason: "profile is not an object"))
            }
        }
        return namespace
    }

    /// A `posts` value inside `depth` open containers: `null` is empty, another non-array is empty
    /// with an issue, a bad entry is skipped with an issue naming `path[index]`.
    private mutating func readPosts(
        depth: Int, path: String, client: String?, budget: inout ManifestBudget
    ) throws(WireFormatError) -> ([PostEntry], [ManifestIssue]) {
        guard next == UInt8(ascii: "[") else {
            let value = try parseValue(depth: depth)
            if value.isNull { return ([], []) }
            return ([], [ManifestIssue(client: client, index: nil, reason: "posts is not an array")])
        }
        var posts: [PostEntry] = []
        var issues: [ManifestIssue] = []
        guard try openContainer(depth: depth + 1) else { return (posts, issues) }
        var index = 0
        repeat {
            let position = index
            // Counted before the entry is read: the read stops at the first one past the limit.
            guard budget.posts < budget.limits.maximumPosts else {
                throw .limitExceeded(path: "\(path)[\(position)]", limit: budget.limits.maximumPosts)
            }
            budget.posts += 1
            switch try readEntry(depth: depth + 2, limits: budget.limits, path: { "\(path)[\(position)]" }) {
            case .success(let entry):
                try memory.charge(ManifestBudget.entryCost + entry.postCID.utf8.count + (entry.envelopesCID?.utf8.count ?? 0)
                                  + (entry.metadata?.plaintextJSON?.count ?? entry.metadata?.sealedHex?.utf8.count ?? 0))
                posts.append(entry)
            case .failure(let skip):
                issues.append(ManifestIssue(client: client, index: position, reason: skip.error.description, postCID: skip.postCID))
            }
            index += 1
        } while try containerContinues(closingWith: UInt8(ascii: "]"))
        return (posts, issues)
    }

    /// One entry, whose object opens at `depth`: the entry, or why it is not one (an element
    /// that is not an object, no usable `post_cid`); `path` names it in that error.
    ///
    /// - Throws: `WireFormatError` when the document is not JSON there (the whole read fails).
    private mutating func readEntry(
        depth: Int, limits: ManifestLimits, path: () -> String
    ) throws(WireFormatError) -> Result<PostEntry, EntrySkip> {
        guard next == UInt8(ascii: "{") else {
            let value = try parseValue(depth: depth - 1)
            return .failure(EntrySkip(error: .typeMismatch(path: path(), expected: "an object", found: value.kindName)))
        }
        var members = PostEntry.EntryMembers()
        var metadataIssue: String?
        if try openContainer(depth: depth) {
            repeat {
                let key = try parseMemberName(PostEntry.EntryMembers.Key.self)
                switch key {
                case nil:
                    _ = try skipValue(depth: depth)
                case .metadata?:
                    switch try readMetadata(depth: depth, limits: limits) {
                    case .success(let metadata): (members.metadata, metadataIssue) = (metadata, nil)
                    case .failure(let issue): (members.metadata, metadataIssue) = (nil, issue.reason)
                    }
                case .envelopesCount?:
                    members.envelopesCount = try parseLenientInteger(depth: depth)
                case .createdAt?:
                    members.createdAt = try parseLenientInteger(depth: depth)
                case let key?:
                    members.set(key, try parseMemberValue(depth: depth))
                }
            } while try containerContinues(closingWith: UInt8(ascii: "}"))
        }
        do throws(WireFormatError) {
            let entry = try PostEntry.read(members, path: path)
            // A CID is a few dozen bytes; a longer one is no CID a station made, and nothing
            // (a cached key, a file name) is kept for it.
            if entry.postCID.utf8.count > limits.maximumCIDBytes {
                return .failure(EntrySkip(error: .invalidValue(
                    path: path() + ".post_cid",
                    reason: "post_cid is \(entry.postCID.utf8.count) bytes, longer than the \(limits.maximumCIDBytes) a CID may be")))
            }
            if let envelopes = entry.envelopesCID, envelopes.utf8.count > limits.maximumCIDBytes {
                return .failure(EntrySkip(error: .invalidValue(
                    path: path() + ".envelopes_cid",
                    reason: "envelopes_cid is \(envelopes.utf8.count) bytes, longer than the \(limits.maximumCIDBytes) a CID may be")))
            }
            if let metadataIssue {
                return .failure(EntrySkip(error: .invalidValue(path: path() + ".metadata", reason: metadataIssue), postCID: entry.postCID))
            }
            return .success(entry)
        } catch {
            return .failure(EntrySkip(error: error))
        }
    }

    /// Why a capped value was left out.
    struct MeasuredValueIssue: Error {
        let reason: String

        static func tooLong(_ name: String, _ bytes: Int, _ limits: ManifestLimits) -> Self {
            Self(reason: "\(name) is \(bytes) bytes of JSON, more than the \(limits.maximumMetadataBytes) allowed")
        }

        static func tooDeep(_ name: String, _ nesting: Int, _ limits: ManifestLimits) -> Self {
            Self(reason: "\(name) nests \(nesting) levels, deeper than the \(limits.maximumMetadataDepth) allowed")
        }
    }

    /// Why an entry was skipped, and its `post_cid` when it has one.
    struct EntrySkip: Error {
        var error: WireFormatError
        var postCID: String?
    }

    /// An entry's `metadata` inside `depth` open containers: sealed hex (a string, its length
    /// checked), `nil` for `null`, or any other value as its JSON text, measured and checked
    /// without building it (see ``readMeasuredValue(depth:limits:name:)``); or why it is past the caps.
    ///
    /// - Throws: `WireFormatError` when the document is not JSON there.
    private mutating func readMetadata(depth: Int, limits: ManifestLimits) throws(WireFormatError) -> Result<PostMetadata?, MeasuredValueIssue> {
        let start = index
        if next == UInt8(ascii: "\"") {
            let hex = try parseString()
            guard index - start <= limits.maximumMetadataBytes else { return .failure(.tooLong("metadata", index - start, limits)) }
            return .success(.sealed(hex: hex))
        }
        let nesting = try skipValue(depth: depth, checksDepth: !limits.measuresMetadata)
        guard index - start <= limits.maximumMetadataBytes else { return .failure(.tooLong("metadata", index - start, limits)) }
        guard nesting <= limits.maximumMetadataDepth, depth + nesting <= WireJSON.maximumDepth else {
            return .failure(.tooDeep("metadata", nesting, limits))
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if nesting == 0, Self.bytes(text, are: "null") { return .success(nil) }
        return .success(PostMetadata(checkedJSONText: text))
    }

    /// A member value that ``ManifestLimits`` caps (an entry's `metadata`, a `profile`), inside
    /// `depth` open containers: the value, or why it is past the caps. A string is read and its
    /// length checked; anything else is measured first without building it (``JSONParser/skipValue(depth:checksDepth:)``)
    /// and read only when within the caps, so a value past them never becomes a tree.
    ///
    /// - Throws: `WireFormatError` when the document is not JSON there.
    private mutating func readMeasuredValue(
        depth: Int, limits: ManifestLimits, name: String
    ) throws(WireFormatError) -> Result<JSONValue, MeasuredValueIssue> {
        guard limits.measuresMetadata else { return .success(try parseMemberValue(depth: depth)) }
        let start = index
        if next == UInt8(ascii: "\"") {
            let text = try parseString()
            guard index - start <= limits.maximumMetadataBytes else { return .failure(.tooLong(name, index - start, limits)) }
            return .success(.string(text))
        }
        let nesting = try skipValue(depth: depth, checksDepth: false)
        guard index - start <= limits.maximumMetadataBytes else { return .failure(.tooLong(name, index - start, limits)) }
        // Within the caps, but never deeper than the parser's own cap allows: skipped rather than failing the document.
        guard nesting <= limits.maximumMetadataDepth, depth + nesting <= WireJSON.maximumDepth else {
            return .failure(.tooDeep(name, nesting, limits))
        }
        let end = index
        index = start
        let value = try parseValue(depth: depth)
        index = end
        return .success(value)
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

/// An integer member as the direct readers keep it: absent, read as a plain integer straight from
/// the bytes, or any other value, read leniently (``WireInteger/lenient(_:)``) as the `Decodable`
/// path reads it.
enum LenientInteger {
    case absent
    case exact(Int)
    case value(JSONValue)

    /// The member as the `Decodable` path's lenient read gives it.
    var integer: Int? {
        switch self {
        case .absent: nil
        case .exact(let value): value
        case .value(let value): WireInteger.lenient(value)
        }
    }
}
