import ClassicalCrypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// UnixFS files as Kubo's `ipfs add` builds them: their CIDs, their blocks, and reading the
/// bytes back from blocks.
///
/// A station's `post_cid`, `envelopes_cid` and `manifest_cid` are all the root of such a DAG
/// over the exact bytes it received or wrote, so ``cid(of:)`` lets a client check what a gateway
/// or `/content` returned, and ``fileSize(root:blocks:)`` reads the size a root block records.
/// Building a file's whole DAG and reading a file back from its blocks (`dag(of:)`, `read`) are
/// the emulated station's, in `StationEmulator`.
package enum UnixFS {
    /// The deepest DAG the reader follows. Kubo's balanced layout needs 4 levels for 100 GiB.
    package static let maximumDepth = 32

    /// The CID Kubo's `ipfs add` gives `bytes`.
    package static func cid(of bytes: some Collection<UInt8>) -> CID {
        var builder = CIDBuilder()
        builder.update(bytes)
        return builder.finish()
    }

    /// The CID Kubo's `ipfs add` gives the file at `url`, read in 256 KiB pieces (constant
    /// memory).
    ///
    /// - Throws: ``UnixFSError/fileSystem(operation:path:errno:)`` when the file cannot be
    ///   opened or read.
    package static func cid(ofFileAt url: URL) throws(UnixFSError) -> CID {
        do throws(ClassicalCryptoError) {
            let file = try FileDescriptor.openForReading(url.path)
            var builder = CIDBuilder()
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: CIDBuilder.chunkSize, alignment: 16)
            defer { buffer.deallocate() }
            var count = buffer.count
            while count == buffer.count {
                count = try file.readFully(into: buffer)
                builder.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
            return builder.finish()
        } catch {
            throw .fileSystem(operation: error.operation ?? "read", path: error.path ?? url.path, errno: error.errno ?? 0)
        }
    }

    /// The file size recorded in the root block of a UnixFS file.
    ///
    /// - Throws: ``UnixFSError/missingBlock(_:)``, ``UnixFSError/blockHashMismatch(_:)``,
    ///   ``UnixFSError/malformedNode(_:reason:)``, ``UnixFSError/unsupportedNode(_:reason:)``.
    package static func fileSize(root: CID, blocks: (CID) -> [UInt8]?) throws(UnixFSError) -> UInt64 {
        let block = try fetch(root, blocks)
        if root.codec == Multicodec.raw { return UInt64(block.count) }
        let node = try DAGNode(block: block, cid: root)
        try checkFileKind(node, root)
        if let declared = node.fileSize { return declared }
        var total = UInt64(node.data.count)
        for size in node.blockSizes { total = try adding(total, size, in: root) }
        return total
    }

    // MARK: Walking

    package static func fetch(_ cid: CID, _ blocks: (CID) -> [UInt8]?) throws(UnixFSError) -> [UInt8] {
        guard cid.multihash.code == Multihash.sha2_256 || cid.multihash.code == Multihash.identity else {
            throw .unsupportedNode(cid, reason: "hash function 0x\(String(cid.multihash.code, radix: 16))")
        }
        guard cid.codec == Multicodec.dagPB || cid.codec == Multicodec.raw else {
            throw .unsupportedNode(cid, reason: "codec 0x\(String(cid.codec, radix: 16))")
        }
        let block: [UInt8]
        if cid.multihash.code == Multihash.identity {
            block = cid.multihash.digest
        } else {
            guard let fetched = blocks(cid) else { throw .missingBlock(cid) }
            guard cid.matches(block: fetched) else { throw .blockHashMismatch(cid) }
            block = fetched
        }
        return block
    }

    package static func checkFileKind(_ node: DAGNode, _ cid: CID) throws(UnixFSError) {
        guard node.kind == .file || node.kind == .raw else {
            throw .unsupportedNode(cid, reason: "UnixFS type \(node.kind) is not a file")
        }
    }

    /// `offset + size`, or a malformed-node error when sizes claimed by `cid` pass 2^64 - 1.
    package static func adding(_ offset: UInt64, _ size: UInt64, in cid: CID) throws(UnixFSError) -> UInt64 {
        let (sum, overflow) = offset.addingReportingOverflow(size)
        guard !overflow else { throw .malformedNode(cid, reason: "sizes overflow") }
        return sum
    }
}
