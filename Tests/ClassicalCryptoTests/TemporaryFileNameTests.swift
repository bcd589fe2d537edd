import Testing

@testable import ClassicalCrypto

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

    @Test func leftoversAreRecognizedByTheirDestinationAndSuffix() {
        let path = TemporaryFileName.path(beside: "/data/report.pdf", suffix: "sealed")
        let name = String(path.dropFirst("/data/".count))
        #expect(TemporaryFileName.isTemporary(name, beside: "/data/report.pdf", suffix: "sealed"))
        #expect(TemporaryFileName.isTemporary(name, beside: "/elsewhere/report.pdf", suffix: "sealed"))
        #expect(!TemporaryFileName.isTemporary(name, beside: "/data/report.pdf", suffix: "part"))
        #expect(!TemporaryFileName.isTemporary(name, beside: "/data/other.pdf", suffix: "sealed"))
        #expect(!TemporaryFileName.isTemporary(".report.pdf.0123456789ABCDEF.sealed", beside: "/data/report.pdf", suffix: "sealed"))
        #expect(!TemporaryFileName.isTemporary(".report.pdf.0123.sealed", beside: "/data/report.pdf", suffix: "sealed"))
        #expect(!TemporaryFileName.isTemporary("report.pdf", beside: "/data/report.pdf", suffix: "sealed"))
        let longest = String(repeating: "é", count: 127) + "x"
        let long = TemporaryFileName.path(beside: "/d/" + longest, suffix: "part")
        #expect(TemporaryFileName.isTemporary(String(long.dropFirst(3)), beside: "/d/" + longest, suffix: "part"))
    }
}
