import Manifest
import Testing

/// ``UnixFS/RevisedFile`` builds the DAG ``UnixFS/dag(of:)`` builds, hashing only changed chunks.
struct RevisedFileTests {
    static func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 % 251) &+ seed }
    }

    @Test func everyRevisionIsTheFullDAG() {
        let chunk = 262_144
        var base = Self.pattern(3 * chunk + 1000)
        var middle = base
        middle[chunk + 5] &+= 1
        base.append(contentsOf: Self.pattern(10))
        let big = Self.pattern(175 * chunk + 9, seed: 3)
        // Grows, changes one chunk, shrinks to a chunk boundary and below, empties, spans a
        // second tree level (175 chunks), then is written again unchanged.
        let versions: [[UInt8]] = [
            Self.pattern(3 * chunk + 1000), base, middle, Array(middle.prefix(2 * chunk)), Array(middle.prefix(chunk - 1)), [],
            Self.pattern(12), Array(big.prefix(175 * chunk + 7)), big, big,
        ]
        var file = UnixFS.RevisedFile()
        var held = Set<CID>()
        for (number, bytes) in versions.enumerated() {
            let revision = file.revise(to: bytes)
            let full = UnixFS.dag(of: bytes)
            #expect(revision.root == full.root, "version \(number)")
            #expect(Set(revision.members) == Set(full.blocks.map(\.cid)), "version \(number)")
            #expect(Set(revision.blocks).isSubset(of: Set(full.blocks)), "version \(number)")
            // What was not built again was built before.
            held.formUnion(revision.blocks.map(\.cid))
            #expect(Set(revision.members).isSubset(of: held), "version \(number)")
        }
        // One changed chunk of four: one leaf and the root are built again.
        var again = UnixFS.RevisedFile()
        _ = again.revise(to: Self.pattern(3 * chunk + 1000))
        #expect(again.revise(to: middle).blocks.count == 2)
    }
}
