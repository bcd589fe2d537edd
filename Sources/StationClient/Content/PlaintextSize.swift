import Foundation
import Manifest

/// App metadata that states the size of its post's plaintext: what bounds a download of a
/// ``ListedPost`` with that metadata.
///
/// Every download of a listed post into a file — one's own
/// (``StationClient/download(_:to:progress:)``) and a followed station's
/// (``FollowedStationFeed/download(_:to:progress:)``, ``FollowedStationReader/download(_:to:progress:)``)
/// — fetches no more than ``plaintextByteCount`` plus the encryption overhead when the metadata
/// adopts this protocol and states a size; otherwise no more than the station's 100 MiB upload
/// limit. A station or gateway that sends more fails the download with `.invalidResponse`.
/// `DriveFileMetadata` adopts it (its `size_bytes`).
///
/// ```swift
/// import StationClient
///
/// struct VoiceMemo: Codable, Sendable, StatesPlaintextSize {
///     var title: String
///     var byteCount: Int
///     var plaintextByteCount: Int64? { Int64(byteCount) }
/// }
/// ```
public protocol StatesPlaintextSize {
    /// The plaintext's size in bytes, or `nil` when the metadata does not say. A negative size
    /// bounds nothing (it is ignored).
    var plaintextByteCount: Int64? { get }
}

extension DriveFileMetadata: StatesPlaintextSize {
    /// ``sizeBytes`` (the file's `size_bytes`).
    public var plaintextByteCount: Int64? { sizeBytes.map { Int64($0) } }
}

extension ListedPost {
    /// The plaintext size the metadata states (``StatesPlaintextSize``), which bounds a download.
    var plaintextSize: Int64? {
        guard let size = (metadata as? any StatesPlaintextSize)?.plaintextByteCount, size >= 0 else { return nil }
        return size
    }
}
