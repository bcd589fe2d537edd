import ClassicalCrypto
import SHA2

/// One serialized IPFS block and its CID.
package struct DAGBlock: Sendable, Hashable {
    /// The block's CID (CIDv0: sha2-256 of ``bytes``).
    package let cid: CID
    /// The serialized `dag-pb` node.
    package let bytes: [UInt8]

    /// Pairs a CID with its block bytes.
    init(cid: CID, bytes: [UInt8]) {
        self.cid = cid
        self.bytes = bytes
    }
}

/// Computes, in constant memory, the CID Kubo's `ipfs add` gives a byte stream (default
/// settings: CIDv0, 262,144-byte chunks, balanced DAG of at most 174 links per node, `dag-pb`
/// leaves wrapping UnixFS `File` data).
///
/// Feed the bytes in pieces of any size with ``update(_:)-(UnsafeRawBufferPointer)`` and call
/// ``finish()``. It holds one chunk (256 KiB) and at most 174 links per tree level, so a 100 MiB
/// upload is hashed as it streams. With `collectingBlocks: true` it also keeps every serialized
/// node for ``drainBlocks()``, which a block store or an emulated gateway needs; drain them as
/// you go to keep memory bounded.
///
/// A stream whose first bytes are only known at its end (a SecretBox's tag comes before the
/// ciphertext it authenticates) is hashed in the same pass with ``init(headByteCount:leafByteCount:linksPerNode:)``:
/// placeholders are fed for the head, and ``resolveHead(_:)`` gives the real bytes before ``finish()``.
package struct CIDBuilder: Sendable {
    /// Kubo's default chunk size (`size-262144`).
    package static let chunkSize = 262_144
    /// Links per node in Kubo's balanced layout.
    package static let maximumLinksPerNode = 174

    package struct Link: Sendable {
        package var digest: [UInt8]
        var cumulativeSize: UInt64
        var fileSize: UInt64
    }

    private var chunk: [UInt8] = []
    private var levels: [[Link]] = [[]]
    private var leafCount = 0
    private var collected: [DAGBlock]
    private let collectingBlocks: Bool
    private let leafByteCount: Int
    private let linksPerNode: Int
    /// The length of the head still to be given to ``resolveHead(_:)`` (0 once given, or without one).
    private var pendingHeadByteCount: Int
    /// The first leaf's data, kept with its placeholder head until the head is given.
    private var heldLeaf: [UInt8]?
    /// Per level, the links of its first node when that node was made before the head was given
    /// (its first link leads to the first leaf, so its digest was made with a placeholder).
    private var unresolvedNodes: [[Link]] = []
    /// The link of every leaf so far, in file order, kept for `UnixFS.RevisedFile` (which
    /// reuses the leaves of unchanged chunks; in the emulator); not reset by ``finish()``.
    package private(set) var leafLinks: [Link] = []

    /// The number of bytes fed so far.
    package private(set) var byteCount: UInt64 = 0

    /// Creates an empty builder; `collectingBlocks` keeps the serialized nodes for
    /// ``drainBlocks()``.
    package init(collectingBlocks: Bool = false) {
        self.init(collectingBlocks: collectingBlocks, headByteCount: 0, leafByteCount: Self.chunkSize,
                  linksPerNode: Self.maximumLinksPerNode)
    }

    /// Creates a builder for a stream whose first `headByteCount` bytes (at most one leaf) are fed
    /// as placeholders and given by ``resolveHead(_:)`` once known. Until then the first leaf and
    /// the first node of each level wait: it holds one leaf and one node's links per level more.
    /// `leafByteCount` and `linksPerNode` change Kubo's layout, for tests of deep trees only.
    package init(headByteCount: Int, leafByteCount: Int = chunkSize, linksPerNode: Int = maximumLinksPerNode) {
        self.init(collectingBlocks: false, headByteCount: headByteCount, leafByteCount: leafByteCount, linksPerNode: linksPerNode)
    }

    private init(collectingBlocks: Bool, headByteCount: Int, leafByteCount: Int, linksPerNode: Int) {
        precondition((0...leafByteCount).contains(headByteCount) && linksPerNode >= 2, "a head fits in the first leaf")
        self.collectingBlocks = collectingBlocks
        self.leafByteCount = leafByteCount
        self.linksPerNode = linksPerNode
        pendingHeadByteCount = headByteCount
        collected = []
        chunk.reserveCapacity(leafByteCount)
    }

    /// Gives the real first bytes of the stream, fed as placeholders: `head` has the
    /// `headByteCount` the builder was made with, and at least that many bytes have been fed.
    /// The first leaf and the nodes above it are hashed now.
    package mutating func resolveHead(_ head: [UInt8]) {
        precondition(head.count == pendingHeadByteCount && head.count > 0 && byteCount >= UInt64(head.count),
                     "the head is given once, after it was fed")
        pendingHeadByteCount = 0
        guard var leaf = heldLeaf else {
            // The first leaf is still being filled.
            chunk.replaceSubrange(0..<head.count, with: head)
            return
        }
        heldLeaf = nil
        leaf.replaceSubrange(0..<head.count, with: head)
        var digest = Self.leaf(leaf).link.digest
        // The first node of each level that has one, bottom up; the first link above them is
        // still in its level.
        for level in levels.indices {
            guard level < unresolvedNodes.count else {
                levels[level][0].digest = digest
                break
            }
            var links = unresolvedNodes[level]
            links[0].digest = digest
            digest = makeParent(links).digest
        }
        unresolvedNodes = []
    }

    /// Bytes held in the chunk buffer (at most ``chunkSize``); for tests of the memory bound.
    var bufferedByteCount: Int { chunk.count }

    /// Feeds more file bytes.
    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        var position = 0
        while position < buffer.count {
            let take = min(leafByteCount - chunk.count, buffer.count - position)
            chunk.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[position..<position + take]))
            position += take
            byteCount += UInt64(take)
            if chunk.count == leafByteCount {
                emitLeaf()
            }
        }
    }

    /// Feeds more file bytes from any byte collection.
    package mutating func update(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// Returns the blocks completed since the last call (only when collecting blocks), in the
    /// order Kubo writes them: each leaf, then each parent after its children.
    package mutating func drainBlocks() -> [DAGBlock] {
        defer { collected.removeAll() }
        return collected
    }

    /// Ends the file and returns its root CID. The builder then starts over empty (blocks not
    /// yet drained stay available to ``drainBlocks()``).
    package mutating func finish() -> CID {
        precondition(pendingHeadByteCount == 0, "the head is given before the stream ends")
        if !chunk.isEmpty || leafCount == 0 { emitLeaf() }
        var level = 0
        var root: Link?
        while root == nil {
            let highest = levels.lastIndex { !$0.isEmpty } ?? 0
            if level == highest, levels[level].count == 1 {
                root = levels[level][0]
            } else if levels[level].isEmpty {
                level += 1
            } else {
                let links = levels[level]
                levels[level] = []
                push(makeParent(links), level: level + 1)
                level += 1
            }
        }
        let cid = CID(v0Unchecked: Multihash(sha256Digest: root?.digest ?? []))
        chunk.removeAll(keepingCapacity: true)
        levels = [[]]
        leafCount = 0
        byteCount = 0
        return cid
    }

    // MARK: Nodes

    /// Wraps the buffered chunk in a leaf node. The first leaf of a stream whose head is still
    /// to come is kept and linked with a placeholder digest (its sizes are already right).
    private mutating func emitLeaf() {
        let (link, block) = Self.leaf(chunk, keepingBlock: collectingBlocks)
        if leafCount == 0, pendingHeadByteCount > 0 {
            heldLeaf = chunk
        } else if let block {
            collected.append(DAGBlock(cid: CID(v0Unchecked: Multihash(sha256Digest: link.digest)), bytes: block))
        }
        chunk.removeAll(keepingCapacity: true)
        appendLeaf(link)
    }

    /// The link to a leaf node over `data` (dag-pb `Data` = UnixFS `File` with the data), and the
    /// node's bytes when `keepingBlock`.
    private static func leaf(_ data: [UInt8], keepingBlock: Bool = false) -> (link: Link, block: [UInt8]?) {
        let size = UInt64(data.count)
        // UnixFS Data: Type=File (08 02), Data (12 len bytes) unless empty, filesize (18 len).
        var unixFSLength = 2 + 1 + Varint.length(of: size)
        if size > 0 { unixFSLength += 1 + Varint.length(of: size) + data.count }
        var header: [UInt8] = [0x0A]
        Varint.append(UInt64(unixFSLength), to: &header)
        header.append(contentsOf: [0x08, 0x02])
        if size > 0 {
            header.append(0x12)
            Varint.append(size, to: &header)
        }
        var trailer: [UInt8] = [0x18]
        Varint.append(size, to: &trailer)

        var hasher = SHA256()
        header.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        data.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        trailer.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        let link = Link(digest: hasher.finalize(), cumulativeSize: UInt64(header.count + Int(size) + trailer.count), fileSize: size)
        return (link, keepingBlock ? header + data + trailer : nil)
    }

    /// Adds a leaf already built (from an earlier version of the file, with the same chunk) at
    /// a chunk boundary, without hashing or collecting it again.
    package mutating func appendLeaf(_ link: Link) {
        precondition(chunk.isEmpty, "a reused leaf must start at a chunk boundary")
        leafCount += 1
        if collectingBlocks { leafLinks.append(link) }
        push(link, level: 0)
    }

    /// Adds a finished node to `level`; a level that reaches 174 links becomes a parent at once
    /// (a full node has the same bytes whether or not more data follows).
    private mutating func push(_ link: Link, level: Int) {
        while levels.count <= level { levels.append([]) }
        levels[level].append(link)
        if levels[level].count == linksPerNode {
            let links = levels[level]
            levels[level] = []
            // The first node of a level leads to the first leaf: while the head is to come, its
            // digest is a placeholder too, and its links are kept to make it again.
            if pendingHeadByteCount > 0, unresolvedNodes.count == level { unresolvedNodes.append(links) }
            push(makeParent(links), level: level + 1)
        }
    }

    /// Serializes a parent: dag-pb `Links` (hash, empty name, cumulative size) then `Data` =
    /// UnixFS `File` with the total size and each child's file size in `blocksizes`.
    private mutating func makeParent(_ links: [Link]) -> Link {
        var node = [UInt8]()
        var cumulative: UInt64 = 0
        var fileSize: UInt64 = 0
        for link in links {
            var body: [UInt8] = [0x0A, 0x22, 0x12, 0x20]
            body.append(contentsOf: link.digest)
            body.append(contentsOf: [0x12, 0x00])
            body.append(0x18)
            Varint.append(link.cumulativeSize, to: &body)
            node.append(0x12)
            Varint.append(UInt64(body.count), to: &node)
            node.append(contentsOf: body)
            cumulative += link.cumulativeSize
            fileSize += link.fileSize
        }
        var unixFS: [UInt8] = [0x08, 0x02, 0x18]
        Varint.append(fileSize, to: &unixFS)
        for link in links {
            unixFS.append(0x20)
            Varint.append(link.fileSize, to: &unixFS)
        }
        node.append(0x0A)
        Varint.append(UInt64(unixFS.count), to: &node)
        node.append(contentsOf: unixFS)

        let multihash = Multihash.sha256(of: node)
        if collectingBlocks { collected.append(DAGBlock(cid: CID(v0Unchecked: multihash), bytes: node)) }
        return Link(digest: multihash.digest, cumulativeSize: UInt64(node.count) + cumulative, fileSize: fileSize)
    }
}
