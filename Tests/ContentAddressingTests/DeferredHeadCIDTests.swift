import Foundation
@testable import ContentAddressing
import Testing

/// `CIDBuilder(headByteCount:)`: the first bytes of a stream given only at its end (a SecretBox's
/// tag) give the CID of the whole stream, as if they had been fed in order.
@Suite("CIDs of streams whose head comes last")
struct DeferredHeadCIDTests {
    /// The Kubo cases of at least 40 bytes (a SecretBox's nonce and tag), up to two tree levels.
    static let cases = KuboCIDTests.cases.filter { $0.input == "pattern" && (40...174 * 262_144 + 1).contains($0.size) }

    @Test(arguments: cases)
    func deferredHeadMatchesKubo(_ entry: KuboCIDFile.Case) throws {
        let head = PatternStream().bytes(40)
        var builder = CIDBuilder(headByteCount: head.count)
        var offset = 0
        PatternStream().forEachPiece(size: entry.size) { piece in
            var copy = [UInt8](piece)
            // Placeholders where the head goes.
            for index in copy.indices where offset + index < head.count { copy[index] = 0 }
            builder.update(copy)
            offset += piece.count
        }
        builder.resolveHead(head)
        #expect(builder.finish().description == entry.cid)
    }

    /// Trees several levels deep (small leaves and nodes, so the first node of every level waits
    /// for the head), against the same layout hashed in order.
    @Test(arguments: [1, 2, 3, 4, 5, 9, 10, 27, 28, 80, 81, 82, 300])
    func deepTreesMatchInOrderHashing(leaves: Int) {
        let leafByteCount = 64
        let bytes = (0..<(leaves * leafByteCount - 7)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var inOrder = CIDBuilder(headByteCount: 0, leafByteCount: leafByteCount, linksPerNode: 3)
        inOrder.update(bytes)
        let expected = inOrder.finish()

        let head = Array(bytes.prefix(40))
        var deferred = CIDBuilder(headByteCount: head.count, leafByteCount: leafByteCount, linksPerNode: 3)
        deferred.update([UInt8](repeating: 0xEE, count: head.count))
        deferred.update(bytes.dropFirst(head.count))
        deferred.resolveHead(head)
        #expect(deferred.finish() == expected)
    }

    /// The placeholders count: a head given wrongly gives another CID.
    @Test func wrongHeadGivesAnotherCID() {
        let bytes = PatternStream().bytes(600_000)
        var builder = CIDBuilder(headByteCount: 40)
        builder.update(bytes)
        var head = Array(bytes.prefix(40))
        head[39] ^= 1
        builder.resolveHead(head)
        #expect(builder.finish() != UnixFS.cid(of: bytes))
    }
}
