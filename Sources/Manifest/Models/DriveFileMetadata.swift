/// The metadata of a file in the `drive` namespace (CipherVault), in the shape of the station's
/// PROTOCOL.md §16.4 file-storage example. For encrypted posts it is the JSON sealed in the
/// entry's `metadata`; for public posts the plaintext object.
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

    /// Creates file metadata.
    public init(
        filename: String, mimeType: String? = nil, sizeBytes: Int? = nil, createdAt: Int? = nil,
        modifiedAt: Int? = nil, path: String? = nil
    ) {
        self.filename = filename
        self.mimeType = mimeType
        self.sizeBytes = sizeBytes
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.path = path
    }

    private enum CodingKeys: String, CodingKey {
        case filename
        case mimeType = "mime_type"
        case sizeBytes = "size_bytes"
        case createdAt = "created_at"
        case modifiedAt = "modified_at"
        case path
    }

    /// Reads the metadata; `filename` is required, other fields of the wrong type read as absent.
    ///
    /// - Throws: `DecodingError` when the value is not an object or has no string `filename`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        filename = try container.decode(String.self, forKey: .filename)
        mimeType = container.lenient(String.self, .mimeType)
        sizeBytes = container.lenient(Int.self, .sizeBytes)
        createdAt = container.lenient(Int.self, .createdAt)
        modifiedAt = container.lenient(Int.self, .modifiedAt)
        path = container.lenient(String.self, .path)
    }

    /// Reads the metadata straight from its parsed JSON, with the rules and errors of
    /// ``init(from:)`` through `WireJSON` (a listing reads one per post, and the generic
    /// `Decodable` path costs more than opening the metadata).
    ///
    /// - Throws: ``WireFormatError`` when the value is not an object or has no string `filename`.
    package static func read(_ value: JSONValue) throws(WireFormatError) -> DriveFileMetadata {
        guard case let .object(members) = value else {
            throw .typeMismatch(path: "", expected: "an object", found: value.kindName)
        }
        guard let filenameValue = members["filename"] else { throw .missingField(path: "filename") }
        guard case let .string(filename) = filenameValue else {
            throw .typeMismatch(path: "filename", expected: "a string", found: filenameValue.kindName)
        }
        func string(_ key: String) -> String? {
            if case let .string(text)? = members[key] { return text }
            return nil
        }
        return DriveFileMetadata(
            filename: filename, mimeType: string("mime_type"), sizeBytes: WireInteger.lenient(members["size_bytes"]),
            createdAt: WireInteger.lenient(members["created_at"]), modifiedAt: WireInteger.lenient(members["modified_at"]),
            path: string("path"))
    }

    /// Writes the fields in the §16.4 order, leaving out absent ones.
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(filename, forKey: .filename)
        try container.encodeIfPresent(mimeType, forKey: .mimeType)
        try container.encodeIfPresent(sizeBytes, forKey: .sizeBytes)
        try container.encodeIfPresent(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(modifiedAt, forKey: .modifiedAt)
        try container.encodeIfPresent(path, forKey: .path)
    }
}
