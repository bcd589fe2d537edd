/// Why a UnixFS file could not be hashed or reassembled.
package enum UnixFSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The block source has no block for this CID.
    case missingBlock(CID)
    /// A block's bytes do not hash to the CID it was fetched for.
    case blockHashMismatch(CID)
    /// A block is not a well-formed `dag-pb` UnixFS node (bad protobuf, sizes that disagree,
    /// a link that is not a CID).
    case malformedNode(CID, reason: String)
    /// A well-formed node this reader does not handle (a directory, a symlink, an unsupported
    /// codec or hash function).
    case unsupportedNode(CID, reason: String)
    /// The DAG is deeper than ``UnixFS/maximumDepth`` levels.
    case tooDeep(CID)
    /// The requested range starts past the end of the file.
    case rangeNotSatisfiable(fileSize: UInt64)
    /// A file operation failed (`operation` is the system call, `errno` its error code).
    case fileSystem(operation: String, path: String, errno: Int32)

    /// A one-line explanation naming the block or file.
    package var description: String {
        switch self {
        case let .missingBlock(cid): "block \(cid) is not available"
        case let .blockHashMismatch(cid): "block fetched for \(cid) does not hash to it"
        case let .malformedNode(cid, reason): "block \(cid) is not a valid UnixFS node: \(reason)"
        case let .unsupportedNode(cid, reason): "block \(cid) is not supported: \(reason)"
        case let .tooDeep(cid): "DAG under \(cid) is too deep"
        case let .rangeNotSatisfiable(size): "range starts past the end of the \(size)-byte file"
        case let .fileSystem(operation, path, errno): "\(operation) failed for \(path) (errno \(errno))"
        }
    }
}
