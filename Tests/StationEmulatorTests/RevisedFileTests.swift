@testable import StationEmulator
import Testing
import ContentAddressing

/// ``UnixFS/RevisedFile`` builds the DAG ``UnixFS/dag(of:)`` builds, hashing only what follows the
/// unchanged prefix.
struct RevisedFileTests {
    static let chunk = 262_144

    /// `count` bytes whose chunks all differ.
    static func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        var bytes = [UInt8](repeating: seed, count: count)
        for position in stride(from: 0, to: count, by: 4099) { bytes[position] = UInt8(truncatingIfNeeded: position / 4099) }
        return bytes
    }

    @Test func everyRevisionIsTheFullDAG() {
        let chunk = Self.chunk
        let start = Self.pattern(3 * chunk + 1000)
        let grown = start + Self.pattern(10, seed: 7)
        var middle = start
        middle[chunk + 5] &+= 1
        let big = Self.pattern(175 * chunk + 9, seed: 3)
        // Each version with the length of the prefix it shares with the version before: grows,
        // changes one chunk, shrinks to a chunk boundary and below, empties, spans a second tree
        // level (175 chunks), then is written again unchanged.
        let versions: [([UInt8], Int)] = [
            (start, 0), (grown, start.count), (middle, chunk + 5), (Array(middle.prefix(2 * chunk)), 2 * chunk),
            (Array(middle.prefix(chunk - 1)), chunk - 1), ([], 0), (Self.pattern(12), 0), (Array(big.prefix(175 * chunk + 7)), 0),
            (big, 175 * chunk + 7), (big, big.count),
        ]
        var file = UnixFS.RevisedFile()
        var held = Set<CID>()
        for (number, (bytes, prefix)) in versions.enumerated() {
            let revision = file.revise(to: bytes, unchangedPrefix: prefix)
            let full = Set(UnixFS.dag(of: bytes).blocks.map(\.cid))
            #expect(revision.root == UnixFS.cid(of: bytes), "version \(number)")
            #expect(Set(revision.members) == full, "version \(number)")
            #expect(Set(revision.blocks.map(\.cid)).isSubset(of: full), "version \(number)")
            // What was not built again was built before.
            held.formUnion(revision.blocks.map(\.cid))
            #expect(Set(revision.members).isSubset(of: held), "version \(number)")
        }
        // Appending to a four-chunk file builds its last leaf and the root again; with no prefix
        // known, every block is built.
        var again = UnixFS.RevisedFile()
        _ = again.revise(to: start, unchangedPrefix: 0)
        #expect(again.revise(to: grown, unchangedPrefix: start.count).blocks.count == 2)
        #expect(again.revise(to: grown, unchangedPrefix: 0).blocks.count == UnixFS.dag(of: grown).blocks.count)
    }
}
