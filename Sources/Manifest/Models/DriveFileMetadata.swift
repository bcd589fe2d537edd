import OrderedJSON

/// The metadata of a file in the `drive` namespace (CipherVault), in the shape of the station's
/// PROTOCOL.md §16.4 file-storage example. For encrypted posts it is the JSON sealed in the
/// entry's `metadata`; for public posts the plaintext object. It encodes (the synthesized
/// `encode(to:)`) in the §16.4 order, leaving out absent fields.
public struct DriveFileMetadata: Sendable, Hashable, Codable {
    /// The file's name.
    public var filename: String
    /// Its MIME type.
    public var mimeType: String?
    /// Its size in bytes (of the plaintext).
    public var sizeBytes: Int?
    /// Creation time, Unix seconds.
    public var createdAt: Int?
    /// Last modification time, Unix seconds.
    public var modifiedAt: Int?
    /// The folder it sits in, e.g. `/documents/work/`.
    public var path: String?
    /// The SHA-256 of the plaintext, 64 lowercase hex digits: a reader compares a local file with
    /// the post without downloading it. Written by `DriveSync`; other clients (CipherVault) ignore it.
    public var sha256: String?
    /// The post CID of the version this one replaces (the version its publisher had): a reader tells
    /// a newer version of a file from a second version made beside it. Written by `DriveSync`;
    /// other clients ignore it.
    public var replaces: String?
    /// Whether the file is executable (any of its execute permissions set), so a download gets
    /// its execute permission back. Written by `DriveSync`; other clients ignore it.
    public var executable: Bool?

    /// Creates file metadata.
    public init(
        filename: String, mimeType: String? = nil, sizeBytes: Int? = nil, createdAt: Int? = nil,
        modifiedAt: Int? = nil, path: String? = nil, sha256: String? = nil, replaces: String? = nil,
        executable: Bool? = nil
    ) {
        self.filename = filename
        self.mimeType = mimeType
        self.sizeBytes = sizeBytes
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.path = path
        self.sha256 = sha256
        self.replaces = replaces
        self.executable = executable
    }

    private enum CodingKeys: String, CodingKey {
        case filename
        case mimeType = "mime_type"
        case sizeBytes = "size_bytes"
        case createdAt = "created_at"
        case modifiedAt = "modified_at"
        case path
        case sha256
        case replaces
        case executable
    }

    /// Reads the metadata from any decoder through its one reader, ``read(jsonBytes:)`` (the
    /// decoder's JSON value is written out and read back): `filename` is required, other fields of
    /// the wrong type read as absent. Apps' own metadata types decode through `Decodable`; a
    /// listing reads drive metadata with ``read(jsonBytes:)`` directly.
    ///
    /// - Throws: `WireFormatError` when the value is not an object or has no string `filename`.
    public init(from decoder: any Decoder) throws {
        self = try Self.read(jsonBytes: WireJSON.serialize(JSONValue(from: decoder)))
    }

    /// Reads the metadata straight from its JSON text (its `Decodable` conformance calls this): a
    /// string `filename` is required, other fields of the wrong type read as absent, and so do
    /// values no file can have (a negative size, a date outside the years 1 to 9999, a `sha256`
    /// that is not 64 hex digits, a `replaces` that is not a CID's characters, an `executable`
    /// that is not `true` or `false`), members it
    /// does not know are ignored (but checked as JSON), of a repeated key the last value counts.
    /// No JSON tree is built (a listing of 10,000 drive posts spent most of its time on those trees).
    ///
    /// - Throws: `WireFormatError`: the parser's errors for text that is not JSON,
    ///   `typeMismatch` for a document that is not an object or a `filename` that is not a
    ///   string, `missingField` for a missing `filename`.
    public static func read(jsonBytes bytes: [UInt8]) throws(WireFormatError) -> DriveFileMetadata {
        try bytes.withUnsafeBufferPointer { buffer throws(WireFormatError) in
            var parser = JSONParser(bytes: buffer, maximumDepth: WireJSON.maximumDepth,
                                    memory: JSONMemoryBudget(limit: WireJSON.documentMemoryLimit))
            return try parser.readDriveFileMetadata()
        }
    }

    /// The metadata from the values of its members (the last of a repeated key): a string
    /// `filename` is required, other fields of the wrong type are absent.
    static func make(
        filename: JSONValue?, mimeType: JSONValue?, sizeBytes: LenientInteger, createdAt: LenientInteger,
        modifiedAt: LenientInteger, path: JSONValue?, sha256: JSONValue?, replaces: JSONValue?, executable: JSONValue?
    ) throws(WireFormatError) -> DriveFileMetadata {
        guard let filename else { throw .missingField(path: "filename") }
        guard case let .string(name) = filename else {
            throw .typeMismatch(path: "filename", expected: "a string", found: filename.kindName)
        }
        func string(_ value: JSONValue?) -> String? {
            if case let .string(text)? = value { return text }
            return nil
        }
        var flag: Bool?
        if case let .bool(value)? = executable { flag = value }
        return DriveFileMetadata(
            filename: name, mimeType: string(mimeType), sizeBytes: sizeBytes.integer.flatMap { $0 >= 0 ? $0 : nil },
            createdAt: createdAt.integer.flatMap(UnixSeconds.checked), modifiedAt: modifiedAt.integer.flatMap(UnixSeconds.checked),
            path: string(path), sha256: string(sha256).flatMap(Self.checkedDigest), replaces: string(replaces).flatMap(Self.checkedCID),
            executable: flag)
    }

    /// A SHA-256 as 64 hex digits, lowercased; `nil` for anything else.
    static func checkedDigest(_ text: String) -> String? {
        guard text.utf8.count == 64, text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0 | 0x20) }) else { return nil }
        return text.lowercased()
    }

    /// A post CID's text: 1 to 128 ASCII letters and digits (base32, base58 or base36); `nil` otherwise.
    static func checkedCID(_ text: String) -> String? {
        guard (1...128).contains(text.utf8.count),
              text.utf8.allSatisfy({ (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }) else { return nil }
        return text
    }
}

extension JSONParser {
    /// Reads one document that should be drive metadata, keeping only the nine members it has
    /// (other members are parsed, so the text is checked as fully as by ``parseDocument()``).
    mutating func readDriveFileMetadata() throws(WireFormatError) -> DriveFileMetadata {
        skipByteOrderMark()
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else {
            // Not an object: whatever it is (or why it is not JSON), as the tree path reports it.
            let value = try parseDocument()
            throw .typeMismatch(path: "", expected: "an object", found: value.kindName)
        }
        var filename, mimeType, path, sha256, replaces, executable: JSONValue?
        var sizeBytes = LenientInteger.absent, createdAt = LenientInteger.absent, modifiedAt = LenientInteger.absent
        if try openContainer(depth: 1) {
            repeat {
                let field = try parseMemberName(Field.self)
                switch field {
                case .filename?: filename = try parseMemberValue(depth: 1)
                case .mimeType?: mimeType = try parseMemberValue(depth: 1)
                case .path?: path = try parseMemberValue(depth: 1)
                case .sha256?: sha256 = try parseMemberValue(depth: 1)
                case .replaces?: replaces = try parseMemberValue(depth: 1)
                case .executable?: executable = try parseMemberValue(depth: 1)
                case .sizeBytes?: sizeBytes = try parseLenientInteger(depth: 1)
                case .createdAt?: createdAt = try parseLenientInteger(depth: 1)
                case .modifiedAt?: modifiedAt = try parseLenientInteger(depth: 1)
                case nil: _ = try parseValue(depth: 1)
                }
            } while try containerContinues(closingWith: UInt8(ascii: "}"))
        }
        skipWhitespace()
        guard index == bytes.count else { throw fail("extra data after the JSON value") }
        return try DriveFileMetadata.make(
            filename: filename, mimeType: mimeType, sizeBytes: sizeBytes, createdAt: createdAt, modifiedAt: modifiedAt,
            path: path, sha256: sha256, replaces: replaces, executable: executable)
    }

    /// The members drive metadata has.
    private enum Field: JSONMemberName {
        case filename, mimeType, sizeBytes, createdAt, modifiedAt, path, sha256, replaces, executable

        init?(utf8 key: UnsafeBufferPointer<UInt8>) {
            func matches(_ name: StaticString) -> Bool { JSONParser.bytes(key, are: name) }
            switch key.count {
            case 4 where matches("path"): self = .path
            case 6 where matches("sha256"): self = .sha256
            case 8 where matches("filename"): self = .filename
            case 8 where matches("replaces"): self = .replaces
            case 9 where matches("mime_type"): self = .mimeType
            case 10 where matches("executable"): self = .executable
            case 10 where matches("size_bytes"): self = .sizeBytes
            case 10 where matches("created_at"): self = .createdAt
            case 11 where matches("modified_at"): self = .modifiedAt
            default: return nil
            }
        }
    }
}
