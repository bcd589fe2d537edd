import ContentAddressing

extension UnixFS {
    /// The DAGs of a file that is written again and again with most of its bytes unchanged, such
    /// as a station's manifest after each post.
    ///
    /// A leaf depends only on its chunk's bytes, so the whole chunks of a version's unchanged
    /// prefix keep the previous version's leaves: ``revise(to:unchangedPrefix:)`` hashes only the
    /// chunks after it and the parent nodes, and the result is the DAG ``UnixFS/dag(of:)`` builds,
    /// block for block. It keeps the previous version's leaf links, not its bytes.
    struct RevisedFile: Sendable {
        /// One version's DAG: its root, the blocks built for it, and every block it is made of.
        struct Revision: Sendable {
            /// The root CID (what ``UnixFS/cid(of:)`` gives the bytes).
            let root: CID
            /// The blocks built for this version: the leaves of chunks past the unchanged prefix
            /// and every parent, in the order ``UnixFS/dag(of:)`` lists them. Reused leaves are
            /// not repeated.
            let blocks: [DAGBlock]
            /// The CID of every block of the DAG, reused leaves included.
            let members: [CID]
        }

        private var previousCount = 0
        private var leaves: [CIDBuilder.Link] = []

        /// Starts with no previous version (the first revision builds every block).
        init() {}

        /// The DAG of `bytes`, whose first `unchangedPrefix` bytes are those of the previous
        /// version (0 when unknown: every chunk is hashed).
        ///
        /// The prefix is trusted, not compared: a prefix longer than what really stayed the same
        /// gives a wrong DAG. One longer than the previous version counts as its length.
        mutating func revise(to bytes: [UInt8], unchangedPrefix: Int) -> Revision {
            let size = CIDBuilder.chunkSize
            let reusable = min(unchangedPrefix, previousCount, bytes.count) / size
            var builder = CIDBuilder(collectingBlocks: true)
            var reused: [CID] = []
            for index in 0..<min(reusable, leaves.count) {
                builder.appendLeaf(leaves[index])
                reused.append(CID(v0Unchecked: Multihash(sha256Digest: leaves[index].digest)))
            }
            builder.update(bytes[(reused.count * size)...])
            let root = builder.finish()
            let blocks = builder.drainBlocks()
            previousCount = bytes.count
            leaves = builder.leafLinks
            return Revision(root: root, blocks: blocks, members: reused + blocks.map(\.cid))
        }
    }
}
