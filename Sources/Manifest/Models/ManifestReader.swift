import OrderedJSON

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ContentAddressing

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
        if let manifest = readStationForm(bytes) { return manifest }
        return try read(WireJSON.parse(bytes))
    }

    /// Reads a manifest from `Data` in place, as ``read(_:)-([UInt8])`` reads an array: a
    /// 10,000-post manifest is several megabytes, better not copied to be read.
    ///
    /// - Throws: as ``read(_:)-([UInt8])``.
    package static func read(_ data: Data) throws(WireFormatError) -> Manifest {
        let direct = data.withUnsafeBytes { raw in readStationForm(raw.bindMemory(to: UInt8.self)) }
        if let direct { return direct }
        return try read(WireJSON.parse(data))
    }

    /// The manifest in `bytes` read without building its JSON tree, when the document is in the
    /// form a station writes (a `clients` object of namespace objects whose `posts` are arrays of
    /// entry objects that each read without an issue); `nil` for any other document, which
    /// ``read(_:)-([UInt8])`` then reads through the JSON tree. Whenever it returns a manifest, it
    /// is the one the tree gives.
    static func readStationForm(_ bytes: [UInt8]) -> Manifest? {
        bytes.withUnsafeBufferPointer { readStationForm($0) }
    }

    /// ``readStationForm(_:)-([UInt8])`` over bytes in place.
    static func readStationForm(_ bytes: UnsafeBufferPointer<UInt8>) -> Manifest? {
        var parser = JSONParser(bytes: bytes, maximumDepth: WireJSON.maximumDepth)
        return try? parser.readStationManifest()
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
        var known = EntryMembers()
        for (key, member) in members { known.set(key, member) }
        return try read(known, path: path)
    }

    /// Reads an entry from its known members (see ``read(_:path:)-(JSONValue,_)``).
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
        var metadata: PostMetadata?
        if let value = members.metadata, !value.isNull { metadata = PostMetadata(jsonValue: value) }
        return PostEntry(
            postCID: cid, audienceMode: audienceMode, isEncrypted: isEncrypted, envelopesCID: string(members.envelopesCID),
            envelopesCount: members.envelopesCount.integer, createdAt: members.createdAt.integer,
            audienceUIDs: audienceUIDs, metadata: metadata)
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
        var metadata: JSONValue?

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

        mutating func set(_ key: String, _ value: JSONValue) {
            if let known = Key(key) { set(known, value) }
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
            case .metadata: metadata = value
            }
        }
    }
}

/// The station's form read straight from the bytes (see `Manifest.readStationForm`). Anything
/// else, including every document the JSON tree would refuse or read with an issue, throws, and
/// the caller reads the document through the tree instead.
extension JSONParser {
    private func notStationForm() -> WireFormatError { fail("not the station's manifest form") }

    private var next: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// After a member: `,` (then the next key follows) or the closing byte. Returns whether the
    /// container goes on.
    private mutating func continues(closingWith close: UInt8) throws(WireFormatError) -> Bool {
        skipWhitespace()
        switch next {
        case UInt8(ascii: ","):
            index += 1
            skipWhitespace()
            return true
        case close:
            index += 1
            return false
        default:
            throw notStationForm()
        }
    }

    /// Opens a container at `depth` (the opening byte is next).
    private mutating func open(_ byte: UInt8, depth: Int) throws(WireFormatError) -> Bool {
        guard next == byte else { throw notStationForm() }
        index += 1
        try checkDepth(depth)
        skipWhitespace()
        let empty = next == byte + 2  // `}` follows `{`, `]` follows `[` two code points on
        if empty { index += 1 }
        return !empty
    }

    mutating func readStationManifest() throws(WireFormatError) -> Manifest {
        skipByteOrderMark()
        skipWhitespace()
        var manifest = Manifest()
        var sawClients = false
        if try open(UInt8(ascii: "{"), depth: 1) {
            repeat {
                let key = try parseMemberKey()
                skipWhitespace()
                if key == "clients" {
                    guard !sawClients else { throw notStationForm() }
                    sawClients = true
                    manifest.clients = try readClients()
                } else {
                    _ = try parseValue(depth: 1)
                }
            } while try continues(closingWith: UInt8(ascii: "}"))
        }
        skipWhitespace()
        guard sawClients, index == bytes.count else { throw notStationForm() }
        return manifest
    }

    private mutating func readClients() throws(WireFormatError) -> OrderedMap<ClientNamespace> {
        var clients = OrderedMap<ClientNamespace>()
        guard try open(UInt8(ascii: "{"), depth: 2) else { return clients }
        repeat {
            let name = try parseMemberKey()
            skipWhitespace()
            guard !clients.contains(key: name) else { throw notStationForm() }
            clients[name] = try readNamespace(name)
        } while try continues(closingWith: UInt8(ascii: "}"))
        return clients
    }

    private mutating func readNamespace(_ name: String) throws(WireFormatError) -> ClientNamespace {
        var namespace = ClientNamespace()
        var sawPosts = false
        var profile: JSONValue?
        if try open(UInt8(ascii: "{"), depth: 3) {
            repeat {
                let key = try parseMemberKey()
                skipWhitespace()
                switch key {
                case "posts":
                    guard !sawPosts else { throw notStationForm() }
                    sawPosts = true
                    namespace.posts = try readEntries()
                case "profile": profile = try parseValue(depth: 3)
                default: _ = try parseValue(depth: 3)
                }
            } while try continues(closingWith: UInt8(ascii: "}"))
        }
        if let profile, !profile.isNull {
            guard case let .object(fields) = profile else { throw notStationForm() }
            namespace.profile = ClientProfile(fields: fields)
        }
        return namespace
    }

    private mutating func readEntries() throws(WireFormatError) -> [PostEntry] {
        var posts: [PostEntry] = []
        guard try open(UInt8(ascii: "["), depth: 4) else { return posts }
        repeat {
            var members = PostEntry.EntryMembers()
            if try open(UInt8(ascii: "{"), depth: 5) {
                repeat {
                    let key = try parseMemberName(PostEntry.EntryMembers.Key.self)
                    skipWhitespace()
                    switch key {
                    case nil:
                        _ = try parseValue(depth: 5)
                    case .envelopesCount?:
                        members.envelopesCount = try parseLenientInteger(depth: 5)
                    case .createdAt?:
                        members.createdAt = try parseLenientInteger(depth: 5)
                    case let key?:
                        members.set(key, try parseMemberValue(depth: 5))
                    }
                } while try continues(closingWith: UInt8(ascii: "}"))
            }
            posts.append(try PostEntry.read(members, path: { "" }))
        } while try continues(closingWith: UInt8(ascii: "]"))
        return posts
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

    /// A member from the JSON tree (`nil` when absent).
    init(_ value: JSONValue?) { self = value.map { .value($0) } ?? .absent }
}
