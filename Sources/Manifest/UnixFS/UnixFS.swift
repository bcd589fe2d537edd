#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
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
/// or `/content` returned, and ``dag(of:)`` plus ``read(root:range:blocks:into:)`` let an
/// emulated station store and serve content under the same CIDs.
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
        let path = url.path
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: path, errno: errno) }
        defer { close(descriptor) }
        var builder = CIDBuilder()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: CIDBuilder.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = posixRead(descriptor, buffer)
            if count < 0 {
                if errno == EINTR { continue }
                throw .fileSystem(operation: "read", path: path, errno: errno)
            }
            if count == 0 { break }
            builder.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        return builder.finish()
    }

    /// The root CID and every block of the DAG Kubo builds for `bytes` (leaves first, each
    /// parent after its children, the root last).
    package static func dag(of bytes: some Collection<UInt8>) -> (root: CID, blocks: [DAGBlock]) {
        var builder = CIDBuilder(collectingBlocks: true)
        builder.update(bytes)
        let root = builder.finish()
        return (root, builder.drainBlocks())
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

    /// Reassembles a file (or the part of it in `range`) from its blocks, verifying every block
    /// against its CID and every size against its parent, and hands the bytes to `sink` in order.
    ///
    /// - Parameters:
    ///   - root: The file's root CID (`dag-pb` CIDv0/CIDv1, or `raw` CIDv1).
    ///   - range: Byte offsets to read, clamped to the file; `nil` reads everything.
    ///   - blocks: Returns the block for a CID, or `nil` when it is not available.
    ///   - sink: Receives the bytes, in order, in pieces of at most one chunk.
    /// - Returns: The file's total size.
    /// - Throws: ``UnixFSError/missingBlock(_:)``, ``UnixFSError/blockHashMismatch(_:)``,
    ///   ``UnixFSError/malformedNode(_:reason:)``, ``UnixFSError/unsupportedNode(_:reason:)``,
    ///   ``UnixFSError/tooDeep(_:)``; ``UnixFSError/rangeNotSatisfiable(fileSize:)`` when
    ///   `range` starts past the end of a non-empty file.
    @discardableResult
    package static func read(
        root: CID, range: Range<UInt64>? = nil, blocks: (CID) -> [UInt8]?, into sink: (ArraySlice<UInt8>) -> Void
    ) throws(UnixFSError) -> UInt64 {
        let size = try fileSize(root: root, blocks: blocks)
        var wanted = 0..<size
        if let range {
            guard range.lowerBound < size || (size == 0 && range.lowerBound == 0) else {
                throw .rangeNotSatisfiable(fileSize: size)
            }
            wanted = range.clamped(to: 0..<size)
        }
        let covered = try walk(root, start: 0, wanted: wanted, depth: 0, blocks: blocks, sink: sink)
        guard covered == size else { throw .malformedNode(root, reason: "children hold \(covered) bytes, root says \(size)") }
        return size
    }

    /// Reassembles a whole file (or `range` of it) into memory; see ``read(root:range:blocks:into:)``.
    ///
    /// - Throws: as ``read(root:range:blocks:into:)``.
    package static func readAll(root: CID, range: Range<UInt64>? = nil, blocks: (CID) -> [UInt8]?) throws(UnixFSError) -> [UInt8] {
        var output = [UInt8]()
        try read(root: root, range: range, blocks: blocks) { output.append(contentsOf: $0) }
        return output
    }

    // MARK: Walking

    private static func fetch(_ cid: CID, _ blocks: (CID) -> [UInt8]?) throws(UnixFSError) -> [UInt8] {
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

    private static func checkFileKind(_ node: DAGNode, _ cid: CID) throws(UnixFSError) {
        guard node.kind == .file || node.kind == .raw else {
            throw .unsupportedNode(cid, reason: "UnixFS type \(node.kind) is not a file")
        }
    }

    /// Emits the part of `wanted` inside the node's bytes (which start at file offset `start`)
    /// and returns how many file bytes the node holds.
    private static func walk(
        _ cid: CID, start: UInt64, wanted: Range<UInt64>, depth: Int,
        blocks: (CID) -> [UInt8]?, sink: (ArraySlice<UInt8>) -> Void
    ) throws(UnixFSError) -> UInt64 {
        guard depth < maximumDepth else { throw .tooDeep(cid) }
        let block = try fetch(cid, blocks)
        if cid.codec == Multicodec.raw {
            emit(block[...], at: start..<(try adding(start, UInt64(block.count), in: cid)), wanted: wanted, sink: sink)
            return UInt64(block.count)
        }
        let node = try DAGNode(block: block, cid: cid)
        try checkFileKind(node, cid)
        guard node.blockSizes.count == node.links.count else {
            throw .malformedNode(cid, reason: "\(node.links.count) links but \(node.blockSizes.count) block sizes")
        }
        var offset = try adding(start, UInt64(node.data.count), in: cid)
        emit(node.data, at: start..<offset, wanted: wanted, sink: sink)
        for (link, size) in zip(node.links, node.blockSizes) {
            let childEnd = try adding(offset, size, in: cid)
            if offset < wanted.upperBound, childEnd > wanted.lowerBound {
                let child: CID
                do {
                    child = try CID(bytes: link.hash)
                } catch {
                    throw .malformedNode(cid, reason: "link is not a CID (\(error))")
                }
                let held = try walk(child, start: offset, wanted: wanted, depth: depth + 1, blocks: blocks, sink: sink)
                guard held == size else {
                    throw .malformedNode(cid, reason: "child \(child) holds \(held) bytes, block size says \(size)")
                }
            }
            offset = childEnd
        }
        let total = offset - start
        if let declared = node.fileSize, declared != total {
            throw .malformedNode(cid, reason: "filesize \(declared) but data and children hold \(total)")
        }
        return total
    }

    /// Hands `sink` the part of `data` (the file bytes at `span`, as long as `data`) inside `wanted`.
    private static func emit(
        _ data: ArraySlice<UInt8>, at span: Range<UInt64>, wanted: Range<UInt64>, sink: (ArraySlice<UInt8>) -> Void
    ) {
        let low = max(span.lowerBound, wanted.lowerBound)
        let high = min(span.upperBound, wanted.upperBound)
        guard low < high else { return }
        // Both differences are at most `data.count`, so they fit in an Int.
        let from = data.startIndex + Int(low - span.lowerBound)
        sink(data[from..<from + Int(high - low)])
    }

    /// `offset + size`, or a malformed-node error when sizes claimed by `cid` pass 2^64 - 1.
    private static func adding(_ offset: UInt64, _ size: UInt64, in cid: CID) throws(UnixFSError) -> UInt64 {
        let (sum, overflow) = offset.addingReportingOverflow(size)
        guard !overflow else { throw .malformedNode(cid, reason: "sizes overflow") }
        return sum
    }
}

/// `read(2)` (a free function, so the name does not resolve to `UnixFS.read`).
private func posixRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
    read(descriptor, buffer.baseAddress, buffer.count)
}
