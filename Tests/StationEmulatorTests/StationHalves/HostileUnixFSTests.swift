import Testing
@testable import ContentAddressing
import StationEmulator

/// Protobuf pieces for hand-made `dag-pb` nodes that claim sizes no real file has.
private enum HandMadeNode {
    static func varint(_ value: UInt64) -> [UInt8] {
        var bytes = [UInt8]()
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
        return bytes
    }

    static func field(_ number: UInt64, bytes: [UInt8]) -> [UInt8] { varint(number << 3 | 2) + varint(UInt64(bytes.count)) + bytes }
    static func field(_ number: UInt64, varint value: UInt64) -> [UInt8] { varint(number << 3) + varint(value) }

    /// A UnixFS `File` node: `Data`, optional `filesize`, one `blocksizes` entry per link.
    static func file(data: [UInt8], fileSize: UInt64?, links: [(cid: CID, size: UInt64)]) -> [UInt8] {
        var unixFS = field(1, varint: 2)
        if !data.isEmpty { unixFS += field(2, bytes: data) }
        if let fileSize { unixFS += field(3, varint: fileSize) }
        for link in links { unixFS += field(4, varint: link.size) }
        var node = [UInt8]()
        for link in links { node += field(2, bytes: field(1, bytes: link.cid.bytes)) }
        return node + field(1, bytes: unixFS)
    }

    /// The block inlined in an identity CID (the CID carries it; no store is asked).
    static func identityCID(_ codec: UInt64, _ block: [UInt8]) throws -> CID {
        CID(v1: codec, multihash: try Multihash(code: Multihash.identity, digest: block))
    }
}

@Suite("UnixFS sizes from untrusted blocks never overflow")
struct HostileUnixFSTests {
    /// dag-pb, identity multihash: a File node with two `blocksizes` of 2^64 - 1 and no links.
    static let overflowingIdentityCID = "bafyaagqkdaeaeih77777777777776aja77777777777777yb"

    @Test func blockSizesThatOverflowTheirSumAreMalformed() throws {
        let root = try CID(Self.overflowingIdentityCID)
        let noBlocks: (CID) -> [UInt8]? = { _ in nil }
        #expect(throws: UnixFSError.malformedNode(root, reason: "sizes overflow")) {
            try UnixFS.fileSize(root: root, blocks: noBlocks)
        }
        #expect(throws: UnixFSError.self) { try UnixFS.readAll(root: root, blocks: noBlocks) }
        #expect(throws: UnixFSError.self) { try UnixFS.read(root: root, blocks: noBlocks) { _ in } }
    }

    @Test func childOffsetsThatOverflowWhileWalkingAreMalformed() throws {
        let nearEnd = UInt64.max - 2
        // The range skips the first child; the second starts 2 bytes before 2^64 and holds 3 (as raw
        // bytes, or as a File node's own data).
        let skipped = try HandMadeNode.identityCID(Multicodec.raw, [0])
        let rawChild = try HandMadeNode.identityCID(Multicodec.raw, [1, 2, 3])
        let fileChild = try HandMadeNode.identityCID(Multicodec.dagPB, HandMadeNode.file(data: [1, 2, 3], fileSize: nil, links: []))
        for child in [rawChild, fileChild] {
            let root = try HandMadeNode.identityCID(
                Multicodec.dagPB, HandMadeNode.file(data: [], fileSize: .max, links: [(skipped, nearEnd), (child, 2)]))
            #expect(throws: UnixFSError.self) {
                try UnixFS.readAll(root: root, range: nearEnd..<(nearEnd + 1), blocks: { _ in nil })
            }
            #expect(throws: UnixFSError.self) {
                try UnixFS.read(root: root, range: nearEnd..<(.max), blocks: { _ in nil }) { _ in }
            }
        }
    }
}
