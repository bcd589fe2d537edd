import Testing

@testable import Sodium

@Suite("Temporary names beside a destination")
struct TemporaryFileNameTests {
    @Test func namesAreHiddenUniqueAndShortForAnyDestination() {
        let longest = String(repeating: "é", count: 127) + "x"  // 255 bytes: NAME_MAX
        let path = TemporaryFileName.path(beside: "/data/" + longest, suffix: "partial")
        #expect(path.hasPrefix("/data/." + String(repeating: "é", count: 16) + "."))
        #expect(path.hasSuffix(".partial"))
        let name = path.dropFirst("/data/".count)
        #expect(name.utf8.count <= 1 + TemporaryFileName.keptNameBytes + 1 + 16 + 1 + "partial".count)
        #expect(TemporaryFileName.path(beside: "/data/" + longest, suffix: "partial") != path)
        // A bare name stays in the current directory.
        #expect(TemporaryFileName.path(beside: "notes.txt", suffix: "tmp").hasPrefix(".notes.txt."))
    }
}
