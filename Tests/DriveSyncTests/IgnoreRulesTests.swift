import Testing
@testable import DriveSync

/// The `.cipherignore` syntax, rule by rule, as `.gitignore` users know it.
@Suite("Ignore rules")
struct IgnoreRulesTests {
    @Test func aNameWithoutASlashMatchesAtAnyDepth() {
        let rules = IgnoreRules(parsing: "*.log")
        #expect(rules.ignores("a.log"))
        #expect(rules.ignores("deep/er/a.log"))
        #expect(!rules.ignores("a.log.txt"))
        #expect(!rules.ignores("alog"))
    }

    @Test func aSlashAtTheStartOrInTheMiddleAnchorsToTheTop() {
        let rules = IgnoreRules(parsing: "/todo.txt\ndocs/*.pdf")
        #expect(rules.ignores("todo.txt"))
        #expect(!rules.ignores("sub/todo.txt"))
        #expect(rules.ignores("docs/a.pdf"))
        #expect(!rules.ignores("x/docs/a.pdf"))
        #expect(!rules.ignores("docs/sub/a.pdf"), "* stays within one name")
    }

    @Test func questionMarkAndSetsMatchOneCharacter() {
        let rules = IgnoreRules(parsing: "file?.txt\nv[0-9].bin\nx[!ab].dat\n[]]z")
        #expect(rules.ignores("file1.txt") && rules.ignores("fileé.txt"))
        #expect(!rules.ignores("file.txt") && !rules.ignores("file12.txt"))
        #expect(rules.ignores("v7.bin") && !rules.ignores("vx.bin"))
        #expect(rules.ignores("xc.dat") && !rules.ignores("xa.dat"))
        #expect(rules.ignores("]z"))
    }

    @Test func doubleStarMatchesAnyNumberOfFolders() {
        let rules = IgnoreRules(parsing: "**/cache\nlogs/**\na/**/b")
        #expect(rules.ignores("cache") && rules.ignores("x/y/cache"))
        #expect(rules.ignores("logs/one.txt") && rules.ignores("logs/deep/two.txt"))
        #expect(!rules.ignores("logs", isDirectory: true), "logs/** is what is inside logs")
        #expect(rules.ignores("a/b") && rules.ignores("a/x/b") && rules.ignores("a/x/y/b"))
        #expect(!rules.ignores("a/x/c"))
    }

    @Test func aTrailingSlashMatchesFoldersAndEverythingInThem() {
        let rules = IgnoreRules(parsing: "build/")
        #expect(rules.ignores("build", isDirectory: true))
        #expect(!rules.ignores("build"), "a file named build is not a folder")
        #expect(rules.ignores("build/app.o") && rules.ignores("src/build/deep/x"))
    }

    @Test func negationReIncludesAndTheLastMatchDecides() {
        let rules = IgnoreRules(parsing: "*.log\n!keep.log\nlogs/\n!logs/keep.txt")
        #expect(rules.ignores("a.log"))
        #expect(!rules.ignores("keep.log") && !rules.ignores("x/keep.log"))
        #expect(rules.ignores("logs/keep.txt"), "nothing inside an ignored folder comes back")
        let again = IgnoreRules(parsing: "!keep.log\n*.log")
        #expect(again.ignores("keep.log"), "a later pattern wins")
    }

    @Test func commentsBlanksEscapesAndTrailingSpaces() {
        let rules = IgnoreRules(parsing: "# a comment\n\n\\#hash\n\\!bang\nspace\\ \ntrail   \r\nstar\\*")
        #expect(rules.patterns.count == 5)
        #expect(rules.ignores("#hash") && rules.ignores("!bang"))
        #expect(rules.ignores("space ") && !rules.ignores("space"))
        #expect(rules.ignores("trail") && !rules.ignores("trail   "))
        #expect(rules.ignores("star*") && !rules.ignores("starry"))
        #expect(!rules.ignores("# a comment"))
    }

    @Test func theDefaultsKeepLitterHome() {
        for litter in [".DS_Store", "photos/.DS_Store", "Thumbs.db", "desktop.ini", ".~lock.report.odt#", "~$report.docx", "a/.notes.swp"] {
            #expect(IgnoreRules.defaults.ignores(litter), "\(litter)")
        }
        for kept in ["report.docx", "DS_Store", "notes.txt", ".cipherignore"] {
            #expect(!IgnoreRules.defaults.ignores(kept), "\(kept)")
        }
        #expect(!IgnoreRules.none.ignores(".DS_Store"))
        #expect(!IgnoreRules.defaults.adding(IgnoreRules(parsing: "!.DS_Store")).ignores(".DS_Store"))
    }

    @Test func badAndOversizedRulesAreReportedNotFatal() {
        let unclosed = IgnoreRules(parsing: "ok.txt\n[abc\nalso.txt")
        #expect(unclosed.patterns == ["ok.txt", "also.txt"])
        #expect(unclosed.problems.count == 1)
        let many = IgnoreRules(parsing: (0..<(IgnoreRules.maximumPatternCount + 5)).map { "f\($0)" }.joined(separator: "\n"))
        #expect(many.patterns.count == IgnoreRules.maximumPatternCount && many.problems.count == 1)
        let long = IgnoreRules(parsing: String(repeating: "x", count: IgnoreRules.maximumByteCount + 1))
        #expect(long.patterns.isEmpty && long.problems.count == 1)
    }

    @Test func manyStarsStayQuick() {
        // Backtracking is bounded by the last star: no blow-up on a hostile pattern.
        let rules = IgnoreRules(parsing: String(repeating: "*a", count: 60) + "b\n" + Array(repeating: "**", count: 30).joined(separator: "/") + "/z")
        let name = String(repeating: "a", count: 250)
        #expect(!rules.ignores(name))
        #expect(!rules.ignores(Array(repeating: "d", count: 60).joined(separator: "/")))
    }
}
