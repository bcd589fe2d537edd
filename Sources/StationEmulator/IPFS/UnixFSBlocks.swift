import ContentAddressing

/// The emulator's side of UnixFS: the whole DAG Kubo builds for a file (its blocks, for the block
/// store) and reading a file back from blocks (the gateway's `/ipfs/<cid>` answers). A client only
/// computes CIDs and reads a root's file size (`ContentAddressing`'s ``UnixFS``).
extension UnixFS {
    /// The root CID and every block of the DAG Kubo builds for `bytes` (leaves first, each
    /// parent after its children, the root last).
    static func dag(of bytes: some Collection<UInt8>) -> (root: CID, blocks: [DAGBlock]) {
        var builder = CIDBuilder(collectingBlocks: true)
        builder.update(bytes)
        let root = builder.finish()
        return (root, builder.drainBlocks())
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
}
