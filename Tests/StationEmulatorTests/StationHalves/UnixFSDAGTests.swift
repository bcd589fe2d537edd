import ContentAddressing
@testable import StationEmulator
import Testing

/// Byte `i` is `i % 251`, so no two leaves of a file repeat.
private func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8($0 % 251) } }

@Suite("UnixFS blocks and reassembly (the emulator's DAG builder, the client's reader)")
struct UnixFSDAGTests {
    /// A block store over collected blocks, optionally tampered with.
    struct Store {
        var blocks: [CID: [UInt8]]
        init(_ blocks: [DAGBlock]) { self.blocks = Dictionary(blocks.map { ($0.cid, $0.bytes) }, uniquingKeysWith: { first, _ in first }) }
        /// Finds a block by CID, or by multihash (a CIDv1 of the same block).
        func lookup(_ cid: CID) -> [UInt8]? { blocks[cid] ?? blocks.first { $0.key.multihash == cid.multihash }?.value }
    }

    @Test func blocksOfAThreeLeafFileAndReassembly() throws {
        let data = pattern(702_344)  // the size of the ciphertext WIRE_NOTES saw become 3 leaves
        let (root, blocks) = UnixFS.dag(of: data)
        #expect(blocks.count == 4 && blocks.last?.cid == root)
        #expect(blocks.allSatisfy { $0.cid.matches(block: $0.bytes) })
        #expect(root == UnixFS.cid(of: data))
        let store = Store(blocks)
        #expect(try UnixFS.readAll(root: root, blocks: store.lookup) == data)
        #expect(try UnixFS.fileSize(root: root, blocks: store.lookup) == 702_344)
        #expect(try UnixFS.readAll(root: root.v1, blocks: store.lookup) == data)
        // Ranges: within a leaf, across a chunk boundary, the tail (bytes=-16), clamped.
        #expect(try UnixFS.readAll(root: root, range: 0..<100, blocks: store.lookup) == Array(data[0..<100]))
        #expect(try UnixFS.readAll(root: root, range: 262_100..<262_200, blocks: store.lookup) == Array(data[262_100..<262_200]))
        #expect(try UnixFS.readAll(root: root, range: 702_328..<702_344, blocks: store.lookup) == Array(data.suffix(16)))
        #expect(try UnixFS.readAll(root: root, range: 700_000..<800_000, blocks: store.lookup) == Array(data[700_000...]))
        #expect(throws: UnixFSError.rangeNotSatisfiable(fileSize: 702_344)) {
            try UnixFS.readAll(root: root, range: 702_344..<702_400, blocks: store.lookup)
        }
        // A range only fetches the blocks it needs.
        var fetched = Set<CID>()
        _ = try UnixFS.readAll(root: root, range: 10..<20) { cid in
            fetched.insert(cid)
            return store.lookup(cid)
        }
        #expect(fetched.count == 2)
    }

    @Test func twoLevelDAGReassemblesInOrder() throws {
        let size = 174 * 262_144 + 1 + 300_000
        let data = pattern(size)
        let (root, blocks) = UnixFS.dag(of: data)
        // 176 leaves, two level-1 parents, one root.
        #expect(blocks.count == 176 + 2 + 1)
        var pieces = 0
        var output = [UInt8]()
        output.reserveCapacity(size)
        let store = Store(blocks)
        let total = try UnixFS.read(root: root, blocks: store.lookup) { piece in
            pieces += 1
            output.append(contentsOf: piece)
        }
        #expect(total == UInt64(size) && pieces == 176 && output == data)
        let across = (174 * 262_144 - 5)..<(174 * 262_144 + 5)
        #expect(try UnixFS.readAll(root: root, range: UInt64(across.lowerBound)..<UInt64(across.upperBound), blocks: store.lookup)
            == Array(data[across]))
    }

    @Test func emptyFileAndSmallFiles() throws {
        let (root, blocks) = UnixFS.dag(of: [UInt8]())
        #expect(root.description == "QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH")
        #expect(blocks.first?.bytes == [0x0A, 0x04, 0x08, 0x02, 0x18, 0x00])
        #expect(try UnixFS.readAll(root: root, blocks: Store(blocks).lookup) == [])
        #expect(try UnixFS.readAll(root: root, range: 0..<10, blocks: Store(blocks).lookup) == [])
    }

    @Test func missingTamperedAndMalformedBlocksAreTypedErrors() throws {
        let data = pattern(600_000)
        let (root, blocks) = UnixFS.dag(of: data)
        let leaf = blocks[1].cid
        var store = Store(blocks)
        store.blocks[leaf] = nil
        #expect(throws: UnixFSError.missingBlock(leaf)) { try UnixFS.readAll(root: root, blocks: store.lookup) }

        store = Store(blocks)
        store.blocks[leaf]?[100] ^= 1
        #expect(throws: UnixFSError.blockHashMismatch(leaf)) { try UnixFS.readAll(root: root, blocks: store.lookup) }

        // Blocks that hash correctly but are not valid nodes.
        for garbage: [UInt8] in [[0xFF], [0x0A, 0x05, 0x08], [0x12, 0x00], [0x0A, 0x02, 0x18, 0x01], [0x0A, 0x02, 0x08, 0x09]] {
            let cid = CID.v0(ofBlock: garbage)
            #expect(throws: UnixFSError.self) { try UnixFS.readAll(root: cid) { $0 == cid ? garbage : nil } }
        }
        // A directory node is a valid node this reader does not serve as a file.
        let directory: [UInt8] = [0x0A, 0x02, 0x08, 0x01]
        let directoryCID = CID.v0(ofBlock: directory)
        #expect(throws: UnixFSError.unsupportedNode(directoryCID, reason: "UnixFS type directory is not a file")) {
            try UnixFS.readAll(root: directoryCID) { _ in directory }
        }
        // A parent whose block sizes disagree with its children.
        var parent = try #require(blocks.last).bytes
        let sizeIndex = try #require(parent.lastIndex(of: 0x20))  // last blocksizes tag
        parent[sizeIndex + 1] ^= 0x01
        let liar = CID.v0(ofBlock: parent)
        let liarStore = Store(blocks)
        #expect(throws: UnixFSError.self) {
            try UnixFS.readAll(root: liar) { $0 == liar ? parent : liarStore.lookup($0) }
        }
    }
}
