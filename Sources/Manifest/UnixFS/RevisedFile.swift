#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension UnixFS {
    /// The DAGs of a file that is written again and again with most of its bytes unchanged, such
    /// as a station's manifest after each post.
    ///
    /// A leaf depends only on its chunk's bytes, so a chunk equal to the previous version's
    /// chunk at the same offset keeps that version's leaf: ``revise(to:)`` hashes only the
    /// chunks that changed and the parent nodes, and the result is the DAG ``UnixFS/dag(of:)``
    /// builds, block for block. It keeps the previous version's bytes to compare against.
    public struct RevisedFile: Sendable {
        /// One version's DAG: its root, the blocks built for it, and every block it is made of.
        public struct Revision: Sendable {
            /// The root CID (what ``UnixFS/cid(of:)`` gives the bytes).
            public let root: CID
            /// The blocks built for this version: the leaves of changed chunks and every parent,
            /// in the order ``UnixFS/dag(of:)`` lists them. Reused leaves are not repeated.
            public let blocks: [DAGBlock]
            /// The CID of every block of the DAG, reused leaves included.
            public let members: [CID]
        }

        private var previous: [UInt8] = []
        private var leaves: [CIDBuilder.Link] = []

        /// Starts with no previous version (the first revision builds every block).
        public init() {}

        /// The DAG of `bytes`, reusing the leaves of chunks equal to the previous version's.
        public mutating func revise(to bytes: [UInt8]) -> Revision {
            let size = CIDBuilder.chunkSize
            var builder = CIDBuilder(collectingBlocks: true)
            var reused: [CID] = []
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + size, bytes.count)
                let index = offset / size
                if index < leaves.count, end <= previous.count, end - offset == min(size, previous.count - offset),
                   Self.equal(bytes, previous, offset..<end) {
                    builder.appendLeaf(leaves[index])
                    reused.append(CID(v0Unchecked: Multihash(sha256Digest: leaves[index].digest)))
                } else {
                    builder.update(bytes[offset..<end])
                }
                offset = end
            }
            let root = builder.finish()
            let blocks = builder.drainBlocks()
            previous = bytes
            leaves = builder.leafLinks
            return Revision(root: root, blocks: blocks, members: reused + blocks.map(\.cid))
        }

        /// Whether both arrays hold the same bytes in `range` (`memcmp`: this runs over the whole
        /// file on every revision).
        private static func equal(_ lhs: [UInt8], _ rhs: [UInt8], _ range: Range<Int>) -> Bool {
            lhs.withUnsafeBufferPointer { left in
                rhs.withUnsafeBufferPointer { right in
                    guard let left = left.baseAddress, let right = right.baseAddress else { return range.isEmpty }
                    return memcmp(left + range.lowerBound, right + range.lowerBound, range.count) == 0
                }
            }
        }
    }
}
