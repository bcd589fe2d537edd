import Foundation

/// An app's metadata with a `Date`, under the protocol's `created_at` key: what the metadata-date
/// tests of the manifest coder and of the client encode and read back.
public struct DatedFile: Codable, Sendable, Equatable {
    /// The file's name.
    public var filename: String
    /// When the file was made.
    public var createdAt: Date

    /// Metadata for `filename` made at `createdAt`.
    public init(filename: String, createdAt: Date) {
        self.filename = filename
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case filename
        case createdAt = "created_at"
    }
}
